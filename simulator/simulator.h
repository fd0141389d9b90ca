// One training iteration, simulated: the entry point of simulator/ (used by `lagom simulate`, `lagom
// explore` and the tuner, which calls simulate() in-process once per evaluation).
//
// What is simulated (engine.h has the event semantics, docs/simulator.md the modelling choices):
//   - one representative GPU per pipeline stage (ranks differing only in tp/cp/dp/ep coordinate are
//     symmetric and simulated once), each with a compute stream and communication streams
//     tp (TP/CP/EP collectives inside a layer), pp (send/recv of activations and gradients), dp (gradient
//     buckets / ZeRO reduce-scatter and parameter all-gather) and, for ZeRO-3, fsdp (parameter all-gather
//     with prefetch);
//   - Megatron's layer: TP all-reduce after the row-parallel GEMMs (forward) and the column-parallel input
//     gradients (backward), or all-gather + reduce-scatter with sequence parallelism; Ulysses all-to-all
//     around attention for cp > 1; MoE dispatch/combine all-to-all for ep > 1; TP overlap methods slice:K
//     and flash priced through model's overlap plans (the schedule the kernels execute);
//   - recompute (full: the backward reruns the forward with its collectives; selective: the attention
//     core), the schedules of schedule.h, DP buckets issued as the last micro-batch's backward produces
//     gradients (dp_overlap) or after the backward, ZeRO 1/2 (reduce-scatter, optimizer on a 1/dp shard,
//     parameter all-gather), ZeRO-3 (all-gather before every layer's forward and backward with prefetch,
//     reduce-scatter after every layer's backward), the optimizer step, the tied embedding's all-reduce
//     between the first and last stage.
//
// How (simulator.cpp runs these in turn): pass_plan.h prices each layer's steps once (op_classes.h prices
// the collectives with the assignment's knobs); stage_plan.h plans every stage's tasks from them as data;
// graph.h emits the task graph from that plan and engine.h runs it; lower_bound.h sums the same plan's
// chains; trace.h records the timeline and writes the trace.
//
// Thread safety: simulate() and op_classes() are pure functions of their arguments (the IterationCosts must
// be const-safe); call them from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_table.h"
#include "core/error.h"
#include "model/groups.h"
#include "model/overlap_method.h"
#include "model/specs.h"
#include "simulator/costs.h"

namespace lagom::simulator {

using lagom::to_string;  // the name of every enum with a table (core/enum_table.h)

// An op class (docs/search.md#what-is-tuned): the collectives one tuning decision covers — same collective,
// same communicator, same size.
struct OpClassKey {
  model::Collective collective = model::Collective::allreduce;
  model::Group group = model::Group::tp;
  std::int64_t bytes = 0;  // nccl-tests bytes
  auto operator<=>(const OpClassKey&) const = default;
};
std::string op_class_name(const OpClassKey& key);  // e.g. "tp.allreduce.25165824"

struct OpClass {
  OpClassKey key;
  model::CommGroup shape;  // ranks and nodes of the communicator
  double count = 0;        // calls per iteration, summed over the simulated (one per stage) ranks
  double time_us = 0;      // alone, with the knobs of the evaluation
};

// How concurrent collectives of a stage that share a link (the node's NICs, or its NVLink/PCIe fabric) are
// issued: `as_scheduled` lets them run side by side and split the link (fair share); `critical_first`
// issues them in order of how soon the iteration waits for them, so the link serves, strictly in this
// order, pipeline send/recv (the next stage waits), ZeRO-3 parameter all-gathers (the next layer waits),
// TP/CP/EP collectives, and last the gradient reductions (only the optimizer waits for them).
enum class IssuePriority { as_scheduled, critical_first };
inline constexpr auto k_issue_priority_names = enum_table<IssuePriority>(
    {{IssuePriority::as_scheduled, "as-scheduled"}, {IssuePriority::critical_first, "critical-first"}});
constexpr const auto& enum_names(IssuePriority) {
  return k_issue_priority_names;
}

// One full assignment of the communication knobs (what `lagom tune` searches, what --comm-config holds).
struct CommAssignment {
  // Per op class: the knobs of its calls. A class not listed gets NCCL's default choice.
  std::vector<std::pair<OpClassKey, model::CollConfig>> per_class;
  // Per communicator: CTAs (ncclConfig_t minCTAs = maxCTAs). A call without explicit channels on that
  // communicator uses this many channels; explicit channels above it are capped to it.
  std::vector<std::pair<model::Group, int>> comm_ctas;
  // Structural overlap knobs; unset = the strategy's value.
  std::optional<model::OverlapMethod> tp_overlap;
  std::optional<double> bucket_mb;
  int fsdp_prefetch = 1;  // ZeRO-3: layers whose parameters are gathered ahead of the running one (>= 1)
  IssuePriority priority = IssuePriority::as_scheduled;
};

struct Breakdown {
  double compute_s = 0, exposed_comm_s = 0, pipeline_bubble_s = 0, optimizer_s = 0;
  [[nodiscard]] double total_s() const {
    return compute_s + exposed_comm_s + pipeline_bubble_s + optimizer_s;
  }
};

// The streams of a simulated stage: compute, tp (the blocking TP/CP/EP collectives inside compute passes, in
// timelines), pp (send/recv), dp (gradient buckets, ZeRO reduce-scatters and parameter all-gathers), fsdp
// (ZeRO-3 parameter all-gathers), emb (the tied embedding's all-reduce). Also the trace's threads, in this
// order.
enum class StreamKind { compute, tp, pp, dp, fsdp, emb };
inline constexpr std::size_t k_stream_kinds = 6;
inline constexpr auto k_stream_kind_names = enum_table<StreamKind>({{StreamKind::compute, "compute"},
                                                                    {StreamKind::tp, "tp"},
                                                                    {StreamKind::pp, "pp"},
                                                                    {StreamKind::dp, "dp"},
                                                                    {StreamKind::fsdp, "fsdp"},
                                                                    {StreamKind::emb, "emb"}});
static_assert(k_stream_kind_names.size() == k_stream_kinds);
constexpr const auto& enum_names(StreamKind) {
  return k_stream_kind_names;
}

// One event of the timeline (trace.h records and renders them).
struct TimelineEvent {
  int stage = 0;
  StreamKind stream = StreamKind::compute;
  std::string name;
  std::string_view category;  // "compute", "optimizer", "comm", "bubble"
  double start_us = 0, duration_us = 0;
};

struct SimulationResult {
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double model_tflops_per_gpu = 0, hardware_tflops_per_gpu = 0;
  double mfu = 0, hfu = 0;
  Breakdown breakdown;            // mean over the pipeline stages; adds up to iteration_time_s
  std::vector<Breakdown> stages;  // per stage; each adds up to iteration_time_s
  MemoryGib memory;               // per GPU, most loaded stage
  double memory_budget_gib = 0;   // what the tensors may take: the GPU's usable memory − its reserve
  bool fits_in_memory = false;    // memory.total <= memory_budget_gib
  std::vector<OpClass> op_classes;
  std::size_t tasks = 0;                // tasks in the simulated graph
  std::vector<TimelineEvent> timeline;  // filled only when SimulateOptions::timeline
};

struct SimulateOptions {
  bool timeline = false;  // record every task (and idle gaps) for a trace
};

// Simulates one iteration. `strategy` must be resolved (model::resolve_strategy) against `workload` and
// `cluster`; `costs` must be bound to the same triple. invalid_input for strategies the simulator cannot
// run (e.g. tp-overlap without sequence parallelism), with the reason.
Result<SimulationResult> simulate(const model::WorkloadSpec& workload, const model::ClusterSpec& cluster,
                                  const model::Strategy& strategy, const IterationCosts& costs,
                                  const CommAssignment& assignment = {}, const SimulateOptions& options = {});

// The op classes an iteration issues (with counts and default-knob times), for a tuner to enumerate.
Result<std::vector<OpClass>> op_classes(const model::WorkloadSpec& workload,
                                        const model::ClusterSpec& cluster, const model::Strategy& strategy,
                                        const IterationCosts& costs, const CommAssignment& assignment = {});

// Lower bounds of simulate()'s iteration time with the default assignment (NCCL's default knobs), in
// microseconds, for explore's pruning (a candidate whose bound exceeds the K-th best simulated time cannot
// enter the top K). Why they are lower bounds — three facts of the engine (engine.h):
//   1. a task never runs faster than alone: interference factors are >= 1 (costs.h), so a compute task's
//      rate 1/((1 − x)·slowdown + x) and a collective's rate 1/(1 + (comm_slowdown − 1)·busy) are <= 1 and
//      every task lasts at least its work_us;
//   2. a stream runs its tasks one at a time, in the order they were added;
//   3. a task starts only after every task it depends on has finished.
// So along any chain of tasks where each one follows the previous through stream order or a dependency,
// the iteration lasts at least the sum of their work alone. Both bounds are such chains (less a 1e-9
// relative margin for rounding) and use the exact work the task graph holds: both read the plan the graph
// is emitted from (stage_plan.h: its passes, prices, buckets and optimizer shares). Contention, waits and
// bubbles other than the chains' own are what they leave out.
//
// iteration_lower_bound_us — O(layers), no task graph (explore computes it for every candidate). Per stage
// s, the longest of these chains:
//   - pipeline fill: micro-batch 0's chunk-0 forward on stages 0 … s−1, each followed by its transfer
//     (and for ZeRO-3, the gather of the stage's first layer, which its first compute task waits for);
//     then stage s's compute stream: every pass of every micro-batch (compute, blocking collectives and
//     the exposed part of overlapped ones), with a transfer after every sending pass but the last (Megatron's
//     p2p is synchronous: the next pass waits for the send); then the gradient tasks issued after its last
//     compute task, on the first and last stage the tied embedding's all-reduce that waits for the last of
//     them (when that one follows the last compute task, or there is none), the optimizer step that waits
//     for them, ZeRO-1/2's parameter all-gather after it;
//   - the same up to stage s's last pass (chunk 0's backward of the last micro-batch: every schedule ends
//     with it, schedule.h), then pipeline drain: that gradient's transfer and chunk-0 backward on stages
//     s−1 … 0, then stage 0's gradient tasks, embedding all-reduce, optimizer and parameter all-gather;
//   - the dp stream alone: every gradient task, the embedding all-reduce that waits for the last one (first
//     and last stage), the optimizer, the parameter all-gather; for ZeRO-3 the fsdp stream alone: every
//     gather, then the optimizer;
//   - ZeRO-3, when every gradient task is on the dp group's link: all gathers and gradient tasks (that link
//     serves one unit of work alone per unit of time however they share it, engine.h), then the optimizer.
// iteration_critical_path_us — the longest chain of the whole task graph (simulate() without contention;
// builds the graph: about a third of a simulation's cost), or the most work on one shared link of a stage.
// Neither bound contains the other (the cheap one's last term is not a chain of the graph).
// invalid_input as simulate() for strategies it cannot run.
Result<double> iteration_lower_bound_us(const model::WorkloadSpec& workload,
                                        const model::ClusterSpec& cluster, const model::Strategy& strategy,
                                        const IterationCosts& costs);
Result<double> iteration_critical_path_us(const model::WorkloadSpec& workload,
                                          const model::ClusterSpec& cluster, const model::Strategy& strategy,
                                          const IterationCosts& costs);

// simulate() with the default assignment, unless iteration_critical_path_us exceeds `limit_us`: nullopt then,
// and the graph is not run (explore's second test, on the same graph simulate() would run).
Result<std::optional<SimulationResult>> simulate_unless_slower(const model::WorkloadSpec& workload,
                                                               const model::ClusterSpec& cluster,
                                                               const model::Strategy& strategy,
                                                               const IterationCosts& costs, double limit_us);

}  // namespace lagom::simulator
