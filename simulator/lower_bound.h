// iteration_lower_bound_us (simulator.h has the proof and the chains): the chains of the task graph that
// graph.h would emit, summed from the same plan (stage_plan.h) without building it. Internal to simulator/;
// the per-stage terms are exposed so tests can hold them against the plan and the simulated graph.
#pragma once

#include <vector>

#include "core/error.h"
#include "model/specs.h"
#include "simulator/costs.h"
#include "simulator/op_classes.h"
#include "simulator/stage_plan.h"

namespace lagom::simulator {

// The work alone, in microseconds, of one stage's streams as the bound counts it.
struct StageWork {
  double passes_us = 0;                   // the compute stream's passes: every micro-batch, every chunk
  double first_forward_us = 0;            // chunk 0's forward of one micro-batch
  double first_backward_us = 0;           // chunk 0's backward of one micro-batch
  double gathers_us = 0;                  // ZeRO-3: the fsdp stream's gathers
  double first_gather_us = 0;             // ZeRO-3: the gather the stage's first compute task waits for
  double gradients_us = 0;                // the dp stream's gradient tasks
  double last_gradients_us = 0;           // of those, the ones issued after the stage's last compute task
  double embedding_us = 0;                // the tied embedding's all-reduce, on the first and last stage
  bool embedding_follows_passes = false;  // it waits (through the gradient tasks) for the last pass
  double optimizer_us = 0;
  double parameter_gathers_us = 0;  // ZeRO-1/2: after the optimizer (its first part, optimizer_first_us)
  double optimizer_first_us = 0;    // param-gather-with-optimizer: chunk 0's share of the step
  double forward_gathers_us = 0;    // param-gather-overlap: on the dp stream before the gradient tasks
  double sends = 0;                 // its transfers but possibly the last one (on its pp stream)
  double blocking_sends = 0;        // of those, the ones that delay the stage's next pass (p2p-overlap off)
  double deferred_us = 0;  // defer-embedding-wgrad: the drained output-layer wgrads, the stage's last pass
};

struct LowerBound {
  double us = 0;  // the bound, with the rounding margin taken off
  std::vector<StageWork> stages;
};

// The bound of `plan` (made with `classes`, which prices its calls). `workload`/`strategy` as planned.
LowerBound lower_bound(const model::WorkloadSpec& workload, const model::Strategy& strategy,
                       const IterationPlan& plan, OpClassTable& classes);

// Plans and bounds one iteration with the default assignment (what iteration_lower_bound_us returns .us of).
Result<LowerBound> iteration_lower_bound(const model::WorkloadSpec& workload,
                                         const model::ClusterSpec& cluster, const model::Strategy& strategy,
                                         const IterationCosts& costs);

// Slack for rounding in the lower bounds: the engine and the bounds add the same durations in different
// orders (relative error ~1e-16 per addition, well below 1e-9 for any task count).
inline constexpr double k_rounding_margin = 1e-9;

}  // namespace lagom::simulator
