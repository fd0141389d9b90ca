// Runs overlap plans (model/overlap_plan.h) on CPU ranks and measures them. The runner is the same for
// every CPU executor; what differs is the RankGroup: threads in one process (thread_executor.h) or MPI
// processes (mpi_executor.h).
//
// One rank runs its plan as two threads, like two CUDA streams: the calling thread runs the compute
// queue (GEMMs, reductions) and a communication thread runs the comm queue (each step posts its sends
// and receives and waits for all of them), so communication progresses while the GEMM runs. A queue op
// waits on the other queue exactly where the plan says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/overlap_data.h"
#include "model/overlap_plan.h"

namespace lagom::kernels {

// One message of a comm step: `bytes` go to (send) or come from (receive) rank `peer` under `tag`.
struct Message {
  int peer = 0;
  int tag = 0;
  std::span<std::byte> bytes;
};

// A rank's point-to-point transport. Called only from the rank's communication thread.
class Transport {
 public:
  virtual ~Transport() = default;
  // Posts every send and receive of one comm step at once and returns when all are complete. Sends
  // must not wait for the receiver to start receiving before the step's receives are posted.
  virtual Status exchange(std::span<const Message> sends, std::span<const Message> recvs) = 0;
};

// The ranks taking part in a run, seen from one of them. barrier() and max_over_ranks() are called only
// from the rank's main thread, never while a plan runs.
class RankGroup {
 public:
  virtual ~RankGroup() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  virtual void barrier() = 0;
  virtual double max_over_ranks(double value) = 0;
  virtual Transport& transport() = 0;
};

enum class RunMode {
  overlapped,    // the plan as written
  compute_only,  // the compute queue alone, waits ignored (what the GEMMs cost without communication)
  comm_only,     // the comm queue alone, waits ignored (what the communication costs without GEMMs)
};

struct RankRunTimes {
  double total_us = 0;   // from start to the end of both queues
  double gemm_us = 0;    // sum of GEMM op durations
  double reduce_us = 0;  // sum of reduction op durations
};

// The error a rank returns when another rank failed (bench_rank's agreement); that rank's own error says why.
inline constexpr const char* k_another_rank_failed = "another rank failed";

// Runs rank `data`'s plan once. Returns the first transport error.
Result<RankRunTimes> run_rank_plan(const model::RankPlan& plan, const model::OverlapPlan& whole,
                                   RankData& data, Transport& transport, RunMode mode);

struct BenchOptions {
  int reps = 10;                  // timed repetitions of each mode (>= 1); medians are reported
  int warmup = 1;                 // untimed repetitions of each mode before timing (>= 0)
  std::uint64_t seed = 20260427;  // input generator seed
  double tolerance = 1e-5;        // max |out − ref| ÷ max |ref| at or under which the result is correct
  bool check = true;              // compare with the fp64 reference (off: error fields are 0, correct true)
};

// Aggregated over ranks (max per repetition) and repetitions (median). Identical on every rank.
struct BenchResult {
  double compute_us = 0;       // compute queue alone (GEMMs + reductions)
  double gemm_us = 0;          // its GEMM part
  double reduce_us = 0;        // its reduction part (gemm-rs)
  double comm_us = 0;          // comm queue alone
  double overlapped_us = 0;    // the plan
  double exposed_comm_us = 0;  // median over rounds of (overlapped − compute-only) of the same round, at
                               // least 0 (pairing cancels the machine's slow drifts); the GPU executor uses
                               // the difference of the medians
  double overlap_efficiency = 0;  // hidden ÷ min(compute, comm), hidden = comm − exposed; clipped to [0, 1];
                                  // 0 when comm is 0
  double max_abs_error = 0;  // max |out − ref| over the whole output (first, overlapped run)
  double max_abs_ref = 0;    // max |ref|
  double rel_error = 0;      // max_abs_error ÷ max_abs_ref
  bool correct = true;       // rel_error <= tolerance
};

// Runs the benchmark on every rank of `group` (all ranks call it): one checked overlapped run on fresh
// buffers, then warm-up and `reps` rounds of compute-only, comm-only and overlapped runs. When `global_out`
// is given (size m·n) the checked run's output is copied into it (threads: all ranks share it).
Result<BenchResult> bench_rank(const model::OverlapPlan& plan, RankGroup& group, const BenchOptions& options,
                               std::span<float> global_out = {});

// Fills exposed_comm_us and overlap_efficiency: exposed from `paired_exposed_us` (per-round overlapped −
// compute-only) when given, else from the medians overlapped_us − compute_us.
void derive_overlap_metrics(BenchResult& result, const std::vector<double>& paired_exposed_us = {});

double median(std::vector<double> values);

}  // namespace lagom::kernels
