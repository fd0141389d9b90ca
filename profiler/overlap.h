// The overlap suite: a GEMM and a collective run together, each timed alone and together, so that each
// one's slowdown against running alone is measured. Cases are entries of a registry, so that other
// executors (the FlashOverlap kernels of kernels/, CUDA streams) can add theirs beside the built-in
// ones; every entry receives the same group and returns one OverlapSample.
//
// Built-in mpi case: the GEMM runs on a worker thread (Eigen) while the main thread starts a
// nonblocking MPI collective and drives its progress with MPI_Test until it completes; gemm_overlap_us is
// the worker's own GEMM time, comm_overlap_us the time from the collective's start to its completion.
// Every figure is the median over `reps` repetitions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "db/database.h"
#include "profiler/cpu_bench.h"
#include "profiler/group.h"

namespace lagom::profiler {

struct OverlapCase {
  std::string name;        // "gemm+allreduce", ...
  std::string collective;  // collective_factors.h name
  std::int64_t bytes = 0;  // nccl-tests bytes of the collective
  std::string precision;   // GEMM precision
  GemmShape shape;         // GEMM shape
  int reps = 5;            // repetitions; medians are kept
};

using OverlapRunner = std::function<Result<db::OverlapSample>(Group& group, const OverlapCase& overlap_case)>;

struct OverlapEntry {
  OverlapCase overlap_case;
  OverlapRunner run;
};

// The mpi backend's built-in cases (a GEMM beside allreduce and beside allgather).
std::vector<OverlapEntry> mpi_overlap_entries(bool quick);

// The FlashOverlap kernels of kernels/ (ag-gemm and gemm-rs, methods vanilla, slice:4 and flash) as
// overlap cases on MPI ranks. A sample's gemm_alone_us and comm_alone_us are the plan's compute-only and
// communication-only times; comm_overlap_us is the overlapped makespan (communication is over by then) and
// gemm_overlap_us the makespan less the exposed communication (the compute queue's span under overlap).
// Each run is checked against the fp64 reference; a wrong result is a failure.
std::vector<OverlapEntry> kernel_overlap_entries(bool quick);

// Runs one case with a nonblocking MPI collective beside an Eigen GEMM (see above).
Result<db::OverlapSample> run_mpi_overlap(Group& group, const OverlapCase& overlap_case);

}  // namespace lagom::profiler
