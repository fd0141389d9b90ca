// The knob space of `lagom tune` (docs/search.md#what-is-tuned): the fixed grid, the decisions it is cut into
// according to the knob scopes of the runtime, and how one full choice becomes the simulator's
// CommAssignment.
//
// A *decision* is one knob setting that a deployment makes once:
//   - structural (taken first, because they change which op classes exist or how they share links): TP
//     overlap method, DP bucket size, FSDP prefetch depth, issue priority of concurrent collectives;
//   - per process (`--runtime nccl`): NCCL_NTHREADS and the Simple chunk (NCCL_BUFFSIZE / 2), one value
//     shared by every collective of the process;
//   - per communicator (`--runtime nccl`): the CTAs of a communicator that runs alltoall / sendrecv (the
//     only way to set their channels; it also caps every other call on that communicator);
//   - per op class: algorithm, protocol and channels (`nccl`: tuner collectives only, through the plugin;
//     `nccl-extended`: also threads and chunk, and alltoall/sendrecv, per call).
// Under `--runtime nccl` a communicator without alltoall/sendrecv gets CTAs = the most channels any of its
// op classes uses (the tuner can only lower channels per call), so raising channels is possible but
// is a communicator-wide setting in the files written.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/cost_model.h"
#include "simulator/simulator.h"

namespace lagom::search {

// The fixed grid (docs/search.md#what-is-tuned). Channels are further capped by CostModel::max_channels().
inline constexpr std::array<int, 8> k_grid_channels{1, 2, 4, 8, 12, 16, 24, 32};
inline constexpr std::array<int, 3> k_grid_threads{128, 256, 512};
inline constexpr std::array<std::int64_t, 6> k_grid_chunk_bytes{128 << 10, 256 << 10, 512 << 10,
                                                                1 << 20,   2 << 20,   4 << 20};
inline constexpr std::array<double, 4> k_grid_bucket_mb{25, 50, 100, 200};
inline constexpr std::array<int, 2> k_grid_prefetch{1, 2};
// TP overlap methods: none, slice:2, slice:4, slice:8, flash.
std::vector<model::TpOverlap> grid_tp_overlaps();

// Which knobs the user pinned on the command line (not searched).
struct Pins {
  bool tp_overlap = false;
  bool bucket_mb = false;
  bool prefetch = false;
  bool priority = false;
};

// One full setting of every knob (what a search moves around). Values 0 mean NCCL's default.
struct Choice {
  model::TpOverlap tp_overlap;  // structural
  double bucket_mb = 25;        // structural, MB (10^6 bytes)
  int prefetch = 1;             // structural: FSDP layers gathered ahead (1..2)
  simulator::IssuePriority priority = simulator::IssuePriority::as_scheduled;  // structural
  int threads = 0;                       // per process (nccl): NCCL_NTHREADS
  std::int64_t chunk_bytes = 0;          // per process (nccl): Simple chunk = NCCL_BUFFSIZE / 2
  std::map<simulator::Group, int> ctas;  // per communicator (nccl): CTAs of groups running p2p
  std::map<simulator::OpClassKey, model::CollConfig> classes;  // per op class
  bool operator==(const Choice&) const = default;
};

enum class DecisionKind { tp_overlap, bucket_mb, prefetch, priority, process, communicator, op_class };
std::string_view to_string(DecisionKind kind);

// One value a decision can take. Only the fields of the decision's kind are meaningful.
struct Option {
  std::string label;             // e.g. "ring/simple ch 4", "threads 256 chunk 512K", "bucket 50 MB"
  model::CollConfig config;      // op_class
  int ctas = 0;                  // communicator
  int threads = 0;               // process
  std::int64_t chunk_bytes = 0;  // process
  model::TpOverlap tp_overlap;   // tp_overlap
  double bucket_mb = 0;          // bucket_mb
  int prefetch = 1;              // prefetch
  simulator::IssuePriority priority = simulator::IssuePriority::as_scheduled;  // priority
};

struct Decision {
  DecisionKind kind = DecisionKind::op_class;
  std::string name;           // op class name, "process", "communicator tp", "tp-overlap", ...
  std::string scope;          // "per call", "per communicator", "per process", "structural"
  simulator::OpClassKey key;  // op_class
  simulator::Group group = simulator::Group::tp;  // communicator
  std::vector<Option> options;
};

// Everything the space depends on. `strategy` resolved; `model` bound to the cluster.
struct SpaceContext {
  const model::CostModel* model = nullptr;
  model::Strategy strategy;
  model::Runtime runtime = model::Runtime::nccl;
  Pins pins;
  simulator::IssuePriority priority = simulator::IssuePriority::as_scheduled;  // the start (or pinned) value
};

// Whether the comm knobs (algorithm, protocol, channels, threads, chunk) are searched: only with NCCL.
bool comm_knobs_searchable(const SpaceContext& context);

// The structural decisions that apply to the strategy and are not pinned (tp-overlap needs tp > 1 and
// sequence parallelism; bucket size needs DP gradient buckets, i.e. dp·cp > 1 and zero < 3; prefetch
// needs ZeRO-3 with dp·cp > 1; issue priority needs two communication streams that can run at once:
// two of TP overlap (tp > 1 with sp), pipeline transfers (pp > 1), gradient reduction (dp·cp > 1) and
// ZeRO-3 gathers).
std::vector<Decision> structural_decisions(const SpaceContext& context);

// The per-process, per-communicator and per-op-class decisions for the op classes an iteration issues.
std::vector<Decision> comm_decisions(const SpaceContext& context,
                                     const std::vector<simulator::OpClass>& classes);

// The starting choice: the strategy's structural values and NCCL's own choice for every op class.
Choice default_choice(const SpaceContext& context);
// Sets NCCL's default configuration for every op class not in `choice` and drops classes that are not
// in `classes` (after a structural change).
void complete_choice(const SpaceContext& context, const std::vector<simulator::OpClass>& classes,
                     Choice& choice);

void apply(const Decision& decision, const Option& option, Choice& choice);
// The index of the option `choice` currently holds for `decision`, or -1 (e.g. NCCL's default).
int current_option(const Decision& decision, const Choice& choice);

// The simulator's assignment for a choice: per-class configs with the per-process knobs filled in
// (threads for LL and Simple, chunk for Simple, as NCCL applies NCCL_NTHREADS / NCCL_BUFFSIZE), and CTAs
// for every communicator that has op classes.
simulator::CommAssignment to_assignment(const SpaceContext& context, const Choice& choice);

// The configuration a call of `key` runs with under `assignment` (the simulator's capping rule applied).
model::CollConfig effective_config(const simulator::CommAssignment& assignment,
                                   const simulator::OpClassKey& key);

// "128K", "2M": chunk sizes as the grid prints them.
std::string format_bytes(std::int64_t bytes);

}  // namespace lagom::search
