#include "kernels/overlap_runner.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/native_thread.h"

namespace lagom::kernels {

namespace {

using Clock = std::chrono::steady_clock;

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// Progress counters shared by a rank's two threads (the "events" between its two "streams").
struct QueueSync {
  std::mutex mutex;
  std::condition_variable changed;
  int compute_done = 0;
  int comm_done = 0;
  bool failed = false;
};

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void derive_overlap_metrics(BenchResult& result, const std::vector<double>& paired_exposed_us) {
  const double exposed =
      paired_exposed_us.empty() ? result.overlapped_us - result.compute_us : median(paired_exposed_us);
  result.exposed_comm_us = std::max(0.0, exposed);
  result.overlap_efficiency = 0;
  const double smaller = std::min(result.compute_us, result.comm_us);
  if (smaller > 0) {
    const double hidden = result.comm_us - exposed;
    result.overlap_efficiency = std::clamp(hidden / smaller, 0.0, 1.0);
  }
}

Result<RankRunTimes> run_rank_plan(const model::RankPlan& plan, const model::OverlapPlan& whole,
                                   RankData& data, Transport& transport, RunMode mode) {
  QueueSync sync;
  Status comm_status;
  RankRunTimes times;
  const bool overlapped = mode == RunMode::overlapped;
  const bool run_compute = mode != RunMode::comm_only;
  const bool run_comm_queue = mode != RunMode::compute_only && !plan.comm.empty();
  const Clock::time_point start = Clock::now();

  // One op of each queue; the caller holds no lock. A comm op's transport error fails the run.
  std::vector<Message> sends, recvs;
  auto comm_op = [&](const model::PlanCommOp& op) {
    sends.clear();
    recvs.clear();
    for (const auto& t : op.sends) sends.push_back({t.peer, whole.piece_tag(t.piece), data.send_bytes(t)});
    for (const auto& t : op.recvs) recvs.push_back({t.peer, whole.piece_tag(t.piece), data.recv_bytes(t)});
    Status status = transport.exchange(sends, recvs);
    std::lock_guard lock(sync.mutex);
    if (!status.ok()) {
      comm_status = status;
      sync.failed = true;
    } else {
      ++sync.comm_done;
    }
    sync.changed.notify_all();
  };
  auto compute_op = [&](const model::PlanComputeOp& op) {
    const Clock::time_point t0 = Clock::now();
    data.compute(op);
    const double took = us_between(t0, Clock::now());
    (op.kind == model::ComputeKind::gemm ? times.gemm_us : times.reduce_us) += took;
    std::lock_guard lock(sync.mutex);
    ++sync.compute_done;
    sync.changed.notify_all();
  };

  auto run_comm = [&] {
    for (const model::PlanCommOp& op : plan.comm) {
      if (overlapped) {
        std::unique_lock lock(sync.mutex);
        sync.changed.wait(lock, [&] { return sync.failed || sync.compute_done > op.wait_compute; });
        if (sync.failed) return;
      }
      comm_op(op);
      if (sync.failed) return;
    }
  };

  // The comm queue runs on its own thread. A thread the system refuses (a login node's process or memory
  // limit) must neither escape as an exception nor leave the peers waiting for this rank's messages: the
  // rank then runs both queues on this thread, in an order their waits allow (the plan's waits form a DAG
  // over the two queues, so the next op of one of them is always ready), and returns the error afterwards,
  // so that every rank fails together (bench_rank's agreement) with a message instead of a hang.
  // The refusal's message is made before the thread is asked for: once the system refuses it, there may
  // be no memory left to write one.
  NativeThread comm_thread;
  std::function<void()> comm_body = run_comm;
  std::string refusal =
      "cannot start the communication thread of a rank (the system refused a thread: a "
      "process or memory limit); use fewer --ranks";
  Status thread_status;
  if (run_comm_queue && comm_thread.start(&comm_body) != 0)
    thread_status = make_error(ErrorCode::unavailable, std::move(refusal));

  if (run_comm_queue && !comm_thread.started()) {
    std::size_t next_compute = run_compute ? 0 : plan.compute.size(), next_comm = 0;
    while (!sync.failed && (next_compute < plan.compute.size() || next_comm < plan.comm.size())) {
      if (next_comm < plan.comm.size() &&
          (!overlapped || sync.compute_done > plan.comm[next_comm].wait_compute)) {
        comm_op(plan.comm[next_comm++]);
      } else if (next_compute < plan.compute.size() &&
                 (!overlapped || plan.compute[next_compute].wait_comm < 0 ||
                  sync.comm_done > plan.compute[next_compute].wait_comm)) {
        compute_op(plan.compute[next_compute++]);
      } else {
        return make_error(ErrorCode::failure, "the overlap plan's waits form a cycle");
      }
    }
  } else if (run_compute) {
    for (const model::PlanComputeOp& op : plan.compute) {
      if (overlapped && op.wait_comm >= 0) {
        std::unique_lock lock(sync.mutex);
        sync.changed.wait(lock, [&] { return sync.failed || sync.comm_done > op.wait_comm; });
        if (sync.failed) break;
      }
      compute_op(op);
    }
  }
  comm_thread.join();
  times.total_us = us_between(start, Clock::now());
  if (!comm_status.ok()) return comm_status.error();
  if (!thread_status.ok()) return thread_status.error();
  return times;
}

Result<BenchResult> bench_rank(const model::OverlapPlan& plan, RankGroup& group, const BenchOptions& options,
                               std::span<float> global_out) {
  if (options.reps < 1) return make_error(ErrorCode::invalid_input, "reps must be at least 1");
  if (options.warmup < 0)
    return make_error(ErrorCode::invalid_input, "warm-up repetitions must not be negative");
  if (group.size() != plan.request.ranks) {
    return make_error(ErrorCode::invalid_input, "the plan's rank count differs from the ranks running it");
  }
  const int rank = group.rank();
  const model::RankPlan& rank_plan = plan.ranks[static_cast<std::size_t>(rank)];
  BenchResult result;

  // Every rank reports failure the same way: a local error becomes a flag all ranks agree on, so no rank
  // is left waiting in a barrier for one that gave up.
  auto agree = [&](const Status& local) -> Status {
    const double any_failed = group.max_over_ranks(local.ok() ? 0.0 : 1.0);
    if (!local.ok()) return local;
    if (any_failed > 0) return make_error(ErrorCode::failure, k_another_rank_failed);
    return {};
  };

  // The buffers of a large shape may not fit: that is an error of this run (all ranks agree on it), not
  // an exception escaping a rank's thread.
  std::optional<RankData> allocated;
  Status allocation;
  try {
    allocated.emplace(plan, rank, options.seed);
  } catch (const std::bad_alloc&) {
    allocation = make_error(ErrorCode::failure,
                            fmt::format("out of memory: the buffers of rank {} for m={} n={} k={} do not fit",
                                        rank, plan.shape.m, plan.shape.n, plan.shape.k));
  }
  LAGOM_TRY_STATUS(agree(allocation));
  RankData& data = *allocated;

  // 1. The checked run, on fresh buffers whose receive areas are NaN.
  group.barrier();
  Result<RankRunTimes> first = run_rank_plan(rank_plan, plan, data, group.transport(), RunMode::overlapped);
  LAGOM_TRY_STATUS(agree(first.ok() ? Status{} : Status{first.error()}));
  if (options.check) {
    const ErrorStats stats = data.check_against_reference();
    result.max_abs_error = group.max_over_ranks(stats.max_abs_error);
    result.max_abs_ref = group.max_over_ranks(stats.max_abs_ref);
    result.rel_error =
        result.max_abs_ref > 0 ? result.max_abs_error / result.max_abs_ref : result.max_abs_error;
    result.correct = result.rel_error <= options.tolerance;
  }
  if (!global_out.empty()) data.copy_output(global_out);

  // 2. Warm-up and timed rounds; modes interleave so slow drifts of the machine hit all three alike.
  std::vector<double> compute, gemm, reduce, comm, overlapped, paired;
  for (int round = 0; round < options.warmup + options.reps; ++round) {
    for (RunMode mode : {RunMode::compute_only, RunMode::comm_only, RunMode::overlapped}) {
      group.barrier();
      Result<RankRunTimes> times = run_rank_plan(rank_plan, plan, data, group.transport(), mode);
      LAGOM_TRY_STATUS(agree(times.ok() ? Status{} : Status{times.error()}));
      const double total = group.max_over_ranks(times->total_us);
      if (round < options.warmup) continue;
      switch (mode) {
        case RunMode::compute_only:
          compute.push_back(total);
          gemm.push_back(group.max_over_ranks(times->gemm_us));
          reduce.push_back(group.max_over_ranks(times->reduce_us));
          break;
        case RunMode::comm_only:
          comm.push_back(total);
          break;
        case RunMode::overlapped:
          overlapped.push_back(total);
          paired.push_back(total - compute.back());
          break;
      }
    }
  }
  result.compute_us = median(compute);
  result.gemm_us = median(gemm);
  result.reduce_us = median(reduce);
  result.comm_us = plan.ranks.front().comm.empty() ? 0.0 : median(comm);
  result.overlapped_us = median(overlapped);
  derive_overlap_metrics(result, paired);
  return result;
}

}  // namespace lagom::kernels
