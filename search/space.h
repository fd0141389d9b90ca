// The knob space of `lagom tune` (docs/search.md#what-is-tuned): the fixed grid, the decisions it is cut into
// according to the knob scopes of the runtime, and how one full choice becomes the simulator's
// CommAssignment.
//
// A *decision* is one knob setting that a deployment makes once; its options are complete settings (one
// type per kind, `Setting`), so a search moves a choice by applying an option and reads nothing else:
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
// How the searches use it: default_choice → simulate → complete_choice (NCCL's defaults for the op classes
// that structure issues) → decisions (structural_decisions, comm_decisions) → apply options to the choice →
// to_assignment (the one way from a choice to what the simulator runs).
//
// Thread safety: plain values and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/cost_model.h"
#include "model/groups.h"
#include "model/overlap_method.h"
#include "search/framework.h"
#include "simulator/simulator.h"

namespace lagom::search {

// The fixed grid (docs/search.md#what-is-tuned). Channels are further capped by CostModel::max_channels().
inline constexpr std::array<int, 8> k_grid_channels{1, 2, 4, 8, 12, 16, 24, 32};
inline constexpr std::array<int, 3> k_grid_threads{128, 256, 512};
inline constexpr std::array<std::int64_t, 6> k_grid_chunk_bytes{128 << 10, 256 << 10, 512 << 10,
                                                                1 << 20,   2 << 20,   4 << 20};
inline constexpr std::array<double, 4> k_grid_bucket_mb{25, 50, 100, 200};
inline constexpr std::array<int, 2> k_grid_prefetch{1, 2};
// TP overlap methods: none, slice:2, slice:4, slice:8, flash (Lagom's kernels), te (Transformer Engine's
// userbuffers, as Megatron-LM runs them).
std::vector<model::OverlapMethod> grid_tp_overlaps();

// Which knobs the user pinned on the command line (not searched).
struct Pins {
  bool tp_overlap = false;
  bool bucket_mb = false;
  bool prefetch = false;
  bool priority = false;
};

// One full setting of every knob (what a search moves around). Values 0 mean NCCL's default.
struct Choice {
  model::OverlapMethod tp_overlap;  // structural
  double bucket_mb = 25;            // structural, MB (10^6 bytes)
  int prefetch = 1;                 // structural: FSDP layers gathered ahead (1..2)
  simulator::IssuePriority priority = simulator::IssuePriority::as_scheduled;  // structural
  int threads = 0;                   // per process (nccl): NCCL_NTHREADS
  std::int64_t chunk_bytes = 0;      // per process (nccl): Simple chunk = NCCL_BUFFSIZE / 2
  std::map<model::Group, int> ctas;  // per communicator (nccl): CTAs of groups running p2p
  // Per process: NCCL_CTA_POLICY (every communicator; zero moves the eligible calls on the groups whose
  // buffers the framework registers to the copy engines: cta_policy_acts).
  model::CtaPolicy cta_policy = model::CtaPolicy::default_policy;
  std::map<simulator::OpClassKey, model::CollConfig> classes;  // per op class
  bool operator==(const Choice&) const = default;
};

enum class DecisionKind {
  tp_overlap,
  bucket_mb,
  prefetch,
  priority,
  process,
  cta_policy,
  communicator,
  op_class
};
inline constexpr auto k_decision_kind_names =
    enum_table<DecisionKind>({{DecisionKind::tp_overlap, "tp-overlap"},
                              {DecisionKind::bucket_mb, "bucket-mb"},
                              {DecisionKind::prefetch, "fsdp-prefetch"},
                              {DecisionKind::priority, "issue-priority"},
                              {DecisionKind::process, "process"},
                              {DecisionKind::cta_policy, "cta-policy"},
                              {DecisionKind::communicator, "communicator"},
                              {DecisionKind::op_class, "op class"}});
constexpr const auto& enum_names(DecisionKind) {
  return k_decision_kind_names;
}

// What one option sets: one type per decision kind, each naming the knob it sets and where (the op class,
// the communicator), so an option is complete on its own and applies to a choice without its decision.
struct TpOverlapSetting {  // structural: Choice::tp_overlap
  static constexpr DecisionKind k_kind = DecisionKind::tp_overlap;
  model::OverlapMethod method;
};
struct BucketSetting {  // structural: Choice::bucket_mb
  static constexpr DecisionKind k_kind = DecisionKind::bucket_mb;
  double mb = 25;  // MB (10^6 bytes)
};
struct PrefetchSetting {  // structural: Choice::prefetch
  static constexpr DecisionKind k_kind = DecisionKind::prefetch;
  int layers = 1;  // FSDP layers gathered ahead
};
struct PrioritySetting {  // structural: Choice::priority
  static constexpr DecisionKind k_kind = DecisionKind::priority;
  simulator::IssuePriority priority = simulator::IssuePriority::as_scheduled;
};
struct ProcessSetting {  // per process (nccl): Choice::threads and Choice::chunk_bytes
  static constexpr DecisionKind k_kind = DecisionKind::process;
  int threads = 0;               // NCCL_NTHREADS
  std::int64_t chunk_bytes = 0;  // Simple chunk = NCCL_BUFFSIZE / 2
};
struct CtaPolicySetting {  // per process: Choice::cta_policy (NCCL_CTA_POLICY)
  static constexpr DecisionKind k_kind = DecisionKind::cta_policy;
  model::CtaPolicy policy = model::CtaPolicy::default_policy;
};
struct CommunicatorSetting {  // per communicator (nccl): Choice::ctas[group]
  static constexpr DecisionKind k_kind = DecisionKind::communicator;
  model::Group group = model::Group::tp;
  int ctas = 0;
};
struct OpClassSetting {  // per op class: Choice::classes[key]
  static constexpr DecisionKind k_kind = DecisionKind::op_class;
  simulator::OpClassKey key;
  model::CollConfig config;
};
using Setting = std::variant<TpOverlapSetting, BucketSetting, PrefetchSetting, PrioritySetting,
                             ProcessSetting, CtaPolicySetting, CommunicatorSetting, OpClassSetting>;

DecisionKind kind_of(const Setting& setting);
// Sets the one knob `setting` names; every other knob of `choice` keeps its value.
void apply(const Setting& setting, Choice& choice);
// Whether `choice` holds `setting` (false for an op class or communicator the choice does not set).
bool holds(const Choice& choice, const Setting& setting);

// One value a decision can take.
struct Option {
  std::string label;  // e.g. "ring/simple ch 4", "threads 256 chunk 512K", "50 MB"
  Setting setting;
};

// How a decision's options are laid out: `blocks` blocks, each the product of three axes, outermost
// first. Communication decisions have one block per allowed (algorithm, protocol) and the axes channels ×
// threads × chunk (an axis not set per call has one value); other decisions are one block on one axis.
struct OptionGrid {
  std::size_t blocks = 1;
  std::array<std::size_t, 3> axes{1, 1, 1};
  // The option at `point` (one index per axis) of `block`.
  [[nodiscard]] std::size_t index(std::size_t block, const std::array<std::size_t, 3>& point) const {
    return ((block * axes[0] + point[0]) * axes[1] + point[1]) * axes[2] + point[2];
  }
};

// One knob setting that a deployment makes once, with every value the grid offers for it. The space
// builds only decisions with at least one option, all of one kind, laid out as `grid` says.
struct Decision {
  std::string name;   // op class name, "process", "communicator tp", "tp-overlap", ...
  std::string scope;  // "per call", "per communicator", "per process", "structural"
  std::vector<Option> options;
  OptionGrid grid;

  [[nodiscard]] DecisionKind kind() const { return kind_of(options.front().setting); }
  // The option `choice` holds, or nullptr (e.g. NCCL's default when it is not on the grid).
  [[nodiscard]] const Option* held(const Choice& choice) const;
};

// Everything the space depends on. `strategy` resolved; `model` bound to the cluster.
struct SpaceContext {
  const model::CostModel* model = nullptr;
  model::Strategy strategy;
  model::Runtime runtime = model::Runtime::nccl;
  Pins pins;
  simulator::IssuePriority priority = simulator::IssuePriority::as_scheduled;  // the start (or pinned) value
  // false: the NCCL knobs (per process, per communicator, per op class) keep NCCL's defaults and only the
  // structural (framework) knobs are searched; tune's speedup_framework (docs/search.md).
  bool search_nccl_knobs = true;
  // The framework whose knob values the structural decisions offer (search/framework.h); any = Lagom's grid.
  Framework framework = Framework::any;
};

// Whether the comm knobs (algorithm, protocol, channels, threads, chunk) are searched: only with NCCL.
bool comm_knobs_searchable(const SpaceContext& context);

// Whether the chunk of `collective`'s calls is an op class's own knob under the plain NCCL runtime: NCCL
// asks its tuner plugin for each call's chunk (2.30 and later: model::tuner_sets_chunk, the cluster's
// emulated release) and asks a tuner about this collective at all (model::tuner_collective). Then the op
// class decision gains a chunk axis (k_grid_chunk_bytes up to the default Simple ring ceiling, and 0 =
// NCCL's own) and the chunk reaches the calls through nccl_tuner.conf's chunk column, clamped as NCCL clamps
// it (model::nccl_chunk_ceiling of the process's NCCL_BUFFSIZE). Under nccl-extended every knob is per call
// already.
bool per_call_chunk(const SpaceContext& context, model::Collective collective);

// The structural decisions that apply to the strategy and are not pinned (tp-overlap needs tp > 1 and
// sequence parallelism; bucket size needs DP gradient buckets, i.e. dp·cp > 1 and zero < 3; prefetch
// needs per-layer gathers (ZeRO-3, FSDP's ZeRO-2) with dp·cp > 1; issue priority needs two communication
// streams that can run at once: two of TP overlap (tp > 1 with sp), pipeline transfers (pp > 1), gradient
// reduction (dp·cp > 1) and per-layer gathers). The options are those of context.framework's profile; a
// decision the framework offers only one value for is not built.
std::vector<Decision> structural_decisions(const SpaceContext& context);

// Whether CTA policy zero moves op class `key` (on a communicator shaped `shape`) to the copy engines: NCCL
// runs it there (CostModel::copy_engine_support) and the framework allocates that communicator's buffers in
// NCCL's symmetric windows (FrameworkProfile::symmetric_groups), without which NCCL runs the kernel.
bool cta_policy_acts(const SpaceContext& context, const simulator::OpClassKey& key,
                     const model::CommGroup& shape);

// The per-process (NCCL_NTHREADS/NCCL_BUFFSIZE, and NCCL_CTA_POLICY where it acts on a class),
// per-communicator and per-op-class decisions for the op classes an iteration issues, in that order
// (communicators and op classes in the order of `classes`).
std::vector<Decision> comm_decisions(const SpaceContext& context,
                                     const std::vector<simulator::OpClass>& classes);

// The decision among `decisions` that sets the channels of op class `key`: its own, or (under nccl, for
// alltoall/sendrecv) its communicator's CTAs; nullptr when there is none.
const Decision* channels_decision(const std::vector<Decision>& decisions, const simulator::OpClassKey& key);

// The starting choice: the strategy's structural values and NCCL's own choice for every op class.
Choice default_choice(const SpaceContext& context);
// `choice` for the op classes one structure issues: NCCL's default configuration for every class it does
// not set, none for classes not in `classes` (after a structural change), and CTAs only for communicators
// that still run alltoall/sendrecv. Unchanged on a cluster without NCCL (no class takes a configuration).
Choice complete_choice(const SpaceContext& context, const std::vector<simulator::OpClass>& classes,
                       Choice choice);

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
