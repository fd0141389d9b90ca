#include "kernels/bench_overlap.h"

#include <thread>

#include <fmt/format.h>

#include "kernels/mpi_executor.h"
#include "kernels/thread_executor.h"

namespace lagom::kernels {

Result<Executor> choose_executor(std::string_view name) {
  if (name == "auto") {
    if (launched_by_mpi()) return Executor::mpi;
    const Result<int> devices = cuda_device_count();
    return devices.ok() && *devices > 0 ? Executor::cuda : Executor::threads;
  }
  const auto chosen = k_executor_names.parse(name);
  if (!chosen) {
    return make_error(ErrorCode::invalid_input, fmt::format("--executor: '{}' is not one of auto, {}", name,
                                                            k_executor_names.choices(", ")));
  }
  if (*chosen == Executor::cuda) {  // fail before any progress output when there is no GPU to run on
    const Result<int> devices = cuda_device_count();
    if (!devices.ok()) return devices.error().with_context("--executor cuda");
    if (*devices < 1) return make_error(ErrorCode::unavailable, "--executor cuda: no CUDA device is visible");
  }
  return *chosen;
}

Result<OverlapBench> run_overlap_bench(const model::OverlapPlan& plan, Executor executor,
                                       const BenchOptions& options) {
  OverlapBench bench;
  bench.executor = executor;
  const int ranks = plan.request.ranks;
  switch (executor) {
    case Executor::mpi: {
      LAGOM_TRY(bench.result, run_mpi(plan, options));
      bench.note = fmt::format(
          "{} MPI processes, one rank each; communication thread per rank (Isend/Irecv/Testall)", ranks);
      break;
    }
    case Executor::cuda: {
      Result<BenchResult> ran = run_cuda(plan, options, bench.cuda);
      if (!ran.ok()) return ran.error().with_context("--executor cuda");
      bench.result = *ran;
      bench.note = bench.cuda.emulated
                       ? fmt::format("{} ranks emulated with streams on one device ({}); communication is {}",
                                     ranks, bench.cuda.device_name, bench.cuda.transport)
                       : fmt::format("{} ranks on {} GPUs ({}); communication is {}", ranks,
                                     bench.cuda.devices_used, bench.cuda.device_name, bench.cuda.transport);
      break;
    }
    case Executor::threads: {
      LAGOM_TRY(bench.result, run_threads(plan, options));
      bench.note = fmt::format(
          "{} ranks as threads of one process sharing {} cores; communication is copying through mailboxes",
          ranks, std::thread::hardware_concurrency());
      break;
    }
  }
  // The cost model's prediction: the same plan priced from the measured compute-only and comm-only times.
  model::OverlapTiming timing;
  timing.gemm_us = bench.result.gemm_us;
  timing.reduce_us = bench.result.reduce_us;
  timing.comm_us = bench.result.comm_us;
  LAGOM_TRY(bench.predicted, model::price_overlap_plan(plan, timing));
  const double measured = bench.result.overlapped_us;
  bench.prediction_error_pct =
      measured > 0 ? 100.0 * (bench.predicted.overlapped_us - measured) / measured : 0.0;
  return bench;
}

}  // namespace lagom::kernels
