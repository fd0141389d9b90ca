// The threads executor: P ranks as P threads of this process (plus one communication thread each).
// Communication is real copying through per-rank mailboxes: a send copies the piece into the
// destination's mailbox, a receive waits for it there and copies it out. It is the executor of the tests;
// its timings share this machine's cores between all ranks, so they show schedules, not a cluster.
#pragma once

#include <span>

#include "core/error.h"
#include "kernels/overlap_runner.h"
#include "model/overlap_plan.h"

namespace lagom::kernels {

// Runs the benchmark with plan.request.ranks threads. `global_out`, when given, must hold m·n floats and
// receives the checked run's output (row-major Y).
Result<BenchResult> run_threads(const model::OverlapPlan& plan, const BenchOptions& options,
                                std::span<float> global_out = {});

}  // namespace lagom::kernels
