// How busy a GPU is in a simulated iteration, read from the simulator's timeline (simulator/trace.h): the
// figure `lagom plan` interpolates a GPU's power by (plan/formulas.h gpu_power_w; docs/plan.md "Energy").
#pragma once

#include <vector>

#include "simulator/simulator.h"

namespace lagom::plan {

// Fractions of the iteration, averaged over the simulated pipeline stages (each stands for the same number of
// GPUs). Idle gaps (category "bubble": pipeline bubbles and waits for communication) are not busy.
struct BusyFractions {
  double compute = 0;  // the compute stream runs a kernel: GEMMs, attention, memory-bound ops, the optimizer
  double links = 0;    // at least one communication stream (tp, pp, dp, fsdp, emb) moves data
  double any = 0;      // either: the GPU runs at least one kernel (what its power follows)
};

// `timeline`: SimulationResult::timeline (simulated with SimulateOptions::timeline); `iteration_s` its
// iteration time; `stages` the pipeline stages simulated (the strategy's pp). Overlapping events of one kind
// count once (the union of their intervals).
[[nodiscard]] BusyFractions busy_fractions(const std::vector<simulator::TimelineEvent>& timeline,
                                           double iteration_s, int stages);

}  // namespace lagom::plan
