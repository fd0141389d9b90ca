#include "profiler/overlap.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/stats.h"
#include "kernels/mpi_executor.h"
#include "model/overlap_plan.h"
#include "profiler/mpi_bench.h"

namespace lagom::profiler {

std::vector<OverlapEntry> mpi_overlap_entries(bool quick) {
  const GemmShape shape = quick ? GemmShape{192, 192, 192} : GemmShape{512, 512, 512};
  const std::int64_t bytes = quick ? (1 << 20) : (16 << 20);
  const int reps = quick ? 3 : 7;
  std::vector<OverlapEntry> entries;
  for (const char* collective : {"allreduce", "allgather"}) {
    OverlapCase c{std::string("gemm+") + collective, collective, bytes, "fp32", shape, reps};
    entries.push_back({c, run_mpi_overlap});
  }
  return entries;
}

std::vector<OverlapEntry> kernel_overlap_entries(bool quick) {
  const GemmShape shape = quick ? GemmShape{256, 256, 256} : GemmShape{1024, 1024, 1024};
  const int reps = quick ? 3 : 7;
  std::vector<OverlapEntry> entries;
  for (const auto& [kernel, collective] : {std::pair{model::OverlapKernel::ag_gemm, "allgather"},
                                           std::pair{model::OverlapKernel::gemm_rs, "reducescatter"}}) {
    for (const char* method_text : {"vanilla", "slice:4", "flash"}) {
      const std::string kernel_name = kernel == model::OverlapKernel::ag_gemm ? "ag-gemm" : "gemm-rs";
      OverlapCase c{kernel_name + "/" + method_text, collective, 0, "fp32", shape, reps};
      entries.push_back(
          {c,
           // An init-capture, not [kernel]: clang before 16 cannot capture a structured binding.
           [overlap_kernel = kernel, method_name = std::string(method_text)](
               Group& group, const OverlapCase& oc) -> Result<db::OverlapSample> {
             if (group.comm() == MPI_COMM_NULL)
               return make_error(ErrorCode::invalid_input, "the interference suite needs MPI ranks");
             LAGOM_TRY(const model::OverlapMethod method, model::parse_overlap_method(method_name));
             const model::OverlapRequest request{overlap_kernel, method, group.size(), oc.shape.m, oc.shape.n,
                                                 oc.shape.k,     4};
             LAGOM_TRY(const model::OverlapPlan plan, model::make_overlap_plan(request));
             kernels::BenchOptions options;
             options.reps = oc.reps;
             LAGOM_TRY(const kernels::BenchResult r, kernels::run_mpi(plan, options));
             if (!r.correct) {
               return make_error(
                   ErrorCode::failure,
                   fmt::format("{}: result differs from the fp64 reference (relative error {:.3g})", oc.name,
                               r.rel_error));
             }
             db::OverlapSample sample;
             sample.name = oc.name;
             sample.collective = oc.collective;
             // nccl-tests bytes of the whole collective: the m×k input (ag) or m×n output (rs) in fp32.
             sample.bytes = (overlap_kernel == model::OverlapKernel::ag_gemm ? oc.shape.m * oc.shape.k
                                                                             : oc.shape.m * oc.shape.n) *
                            4;
             sample.precision = oc.precision;
             sample.m = oc.shape.m;
             sample.n = oc.shape.n;
             sample.k = oc.shape.k;
             sample.gemm_alone_us = r.compute_us;
             sample.comm_alone_us = r.comm_us;
             sample.comm_overlap_us = r.overlapped_us;
             sample.gemm_overlap_us = r.overlapped_us - r.exposed_comm_us;
             return sample;
           }});
    }
  }
  return entries;
}

Result<db::OverlapSample> run_mpi_overlap(Group& group, const OverlapCase& oc) {
  const MPI_Comm comm = group.comm();
  if (comm == MPI_COMM_NULL)
    return make_error(ErrorCode::invalid_input, "the interference suite needs MPI ranks");
  const int n = group.size();
  const std::int64_t bytes = round_collective_bytes(oc.collective, oc.bytes, n);
  const std::int64_t elements = bytes / static_cast<std::int64_t>(sizeof(float));
  if (elements < n) return make_error(ErrorCode::invalid_input, oc.name + ": collective too small");
  const int count = static_cast<int>(oc.collective == "allgather" ? elements / n : elements);
  std::vector<float> send(static_cast<std::size_t>(elements), 1.0f),
      recv(static_cast<std::size_t>(elements), 0.0f);
  auto start_collective = [&](MPI_Request* request) {
    if (oc.collective == "allreduce")
      return MPI_Iallreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, comm, request);
    if (oc.collective == "allgather") {
      return MPI_Iallgather(send.data(), count, MPI_FLOAT, recv.data(), count, MPI_FLOAT, comm, request);
    }
    return MPI_ERR_OP;
  };
  if (oc.collective != "allreduce" && oc.collective != "allgather") {
    return make_error(ErrorCode::invalid_input, oc.name + ": the mpi overlap runs allreduce or allgather");
  }
  LAGOM_TRY(auto gemm, make_cpu_gemm(oc.precision, oc.shape));
  gemm();  // warm-up

  // Drives a started collective to completion; returns its time from `start` in µs.
  auto finish = [&](MPI_Request* request, double start) -> Result<double> {
    int done = 0;
    while (done == 0) LAGOM_MPI_CHECK(MPI_Test(request, &done, MPI_STATUS_IGNORE));
    return (MPI_Wtime() - start) * 1e6;
  };

  std::vector<double> gemm_alone, comm_alone, gemm_together, comm_together;
  for (int rep = 0; rep < std::max(oc.reps, 1); ++rep) {
    // Alone: the GEMM, then the collective.
    double start = MPI_Wtime();
    gemm();
    gemm_alone.push_back((MPI_Wtime() - start) * 1e6);
    LAGOM_TRY_STATUS(group.barrier());
    MPI_Request request = MPI_REQUEST_NULL;
    start = MPI_Wtime();
    LAGOM_MPI_CHECK(start_collective(&request));
    LAGOM_TRY(const double alone_us, finish(&request, start));
    comm_alone.push_back(alone_us);

    // Together: the collective starts, the GEMM runs on a worker thread, the main thread progresses MPI.
    LAGOM_TRY_STATUS(group.barrier());
    std::atomic<double> gemm_us{0};
    start = MPI_Wtime();
    LAGOM_MPI_CHECK(start_collective(&request));
    // The worker makes no MPI call (MPI is initialised FUNNELED), so it times itself with steady_clock.
    std::thread worker([&] {
      const auto begin = std::chrono::steady_clock::now();
      gemm();
      gemm_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - begin).count();
    });
    auto together_us = finish(&request, start);
    worker.join();
    if (!together_us.ok()) return together_us.error();
    comm_together.push_back(together_us.value());
    gemm_together.push_back(gemm_us.load());
  }
  db::OverlapSample sample;
  sample.name = oc.name;
  sample.collective = oc.collective;
  sample.bytes = bytes;
  sample.precision = oc.precision;
  sample.m = oc.shape.m;
  sample.n = oc.shape.n;
  sample.k = oc.shape.k;
  // Medians per rank, then the mean over ranks (like the collectives' times).
  LAGOM_TRY(const double ga, group.sum(median(gemm_alone)));
  LAGOM_TRY(const double ca, group.sum(median(comm_alone)));
  LAGOM_TRY(const double gt, group.sum(median(gemm_together)));
  LAGOM_TRY(const double ct, group.sum(median(comm_together)));
  sample.gemm_alone_us = ga / n;
  sample.comm_alone_us = ca / n;
  sample.gemm_overlap_us = gt / n;
  sample.comm_overlap_us = ct / n;
  return sample;
}

}  // namespace lagom::profiler
