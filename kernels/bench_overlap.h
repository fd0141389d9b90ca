// `lagom bench-overlap`'s run (docs/kernels.md#command-line): one overlap plan on the executor at hand (the
// threads of this process, MPI ranks, or the GPU), checked against an fp64 reference, with the plan's
// pricing from its measured compute-only and communication-only times beside the measured overlap.
//
// Thread safety: run_overlap_bench runs its own threads or ranks; call it from one thread.
#pragma once

#include <string>
#include <string_view>

#include "core/enum_table.h"
#include "core/error.h"
#include "kernels/cuda_executor.h"
#include "kernels/overlap_runner.h"
#include "model/overlap_plan.h"

namespace lagom::kernels {

enum class Executor { threads, mpi, cuda };
inline constexpr auto k_executor_names =
    enum_table<Executor>({{Executor::threads, "threads"}, {Executor::mpi, "mpi"}, {Executor::cuda, "cuda"}});
constexpr const auto& enum_names(Executor) {
  return k_executor_names;
}

// The executor `name` asks for: threads, mpi, cuda, or auto (MPI under an MPI launcher, else the GPU when
// the CUDA module finds one, else threads). cuda without a module or a device is an error here, before
// anything runs; invalid_input names the choices.
Result<Executor> choose_executor(std::string_view name);

struct OverlapBench {
  Executor executor = Executor::threads;
  BenchResult result;
  model::OverlapPrediction predicted;  // the plan priced from result's compute-only and comm-only times
  double prediction_error_pct = 0;     // (predicted − measured) ÷ measured overlapped time × 100
  std::string note;                    // how the ranks ran, in words
  CudaRunInfo cuda;                    // executor cuda only
};

// Runs `plan` (plan.request.ranks ranks; under MPI the world's size, with the session started by the
// caller) and prices it.
Result<OverlapBench> run_overlap_bench(const model::OverlapPlan& plan, Executor executor,
                                       const BenchOptions& options);

}  // namespace lagom::kernels
