#include "profiler/mpi_bench.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <vector>

#include "model/collective_factors.h"

namespace lagom::profiler {

namespace {

// Small integers: sums over ranks stay exact in float.
float value(int rank, std::int64_t index) {
  return static_cast<float>((rank + index) % 17 + 1);
}

bool splits_buffer(const std::string& collective) {
  return collective == "allgather" || collective == "reducescatter" || collective == "alltoall";
}

}  // namespace

std::int64_t round_collective_bytes(const std::string& collective, std::int64_t bytes, int ranks) {
  const std::int64_t unit =
      static_cast<std::int64_t>(sizeof(float)) * (splits_buffer(collective) ? ranks : 1);
  return bytes / unit * unit;
}

std::int64_t nccl_tests_count(const std::string& collective, std::int64_t bytes, int ranks) {
  const std::int64_t elements = bytes / static_cast<std::int64_t>(sizeof(float));
  if (collective == "allgather" || collective == "reducescatter") return elements / ranks;
  return elements;
}

namespace {

// One collective at one size and placement, checked and warmed up, ready to time batches of calls.
// Its buffers are the series' shared ones (contents after the checked call do not matter for timing).
struct PreparedCall {
  std::function<int()> call;
  std::int64_t bytes = 0;
  bool in_place = false;
  int per_batch = 1;
  std::int64_t wrong = 0;
  double time_us = 0;  // fastest batch so far
};

// The elements of `r`, the receive buffer after one call of `kind`, that differ from what the call must
// leave there on `rank` of `n` (value(), `chunk` elements per rank, `root` for broadcast and reduce).
std::int64_t count_wrong(model::Collective kind, const float* r, std::int64_t elements, std::int64_t chunk,
                         int n, int rank, int k_root) {
  std::int64_t wrong = 0;
  const int prev = (rank - 1 + n) % n;
  auto sum_at = [&](std::int64_t global) {
    float total = 0;
    for (int q = 0; q < n; ++q) total += value(q, global);
    return total;
  };
  switch (kind) {
    case model::Collective::allreduce:
      for (std::int64_t i = 0; i < elements; ++i) wrong += r[i] != sum_at(i);
      break;
    case model::Collective::allgather:
      for (std::int64_t i = 0; i < elements; ++i) wrong += r[i] != value(static_cast<int>(i / chunk), i);
      break;
    case model::Collective::reducescatter:
      for (std::int64_t i = 0; i < chunk; ++i) wrong += r[i] != sum_at(rank * chunk + i);
      break;
    case model::Collective::alltoall:
      // Chunk q of the receive buffer came from rank q, which sent its chunk number `rank`.
      for (std::int64_t i = 0; i < elements; ++i) {
        const int source = static_cast<int>(i / chunk);
        wrong += r[i] != value(source, rank * chunk + i % chunk);
      }
      break;
    case model::Collective::broadcast:
      for (std::int64_t i = 0; i < elements; ++i) wrong += r[i] != value(k_root, i);
      break;
    case model::Collective::reduce:
      if (rank == k_root) {
        for (std::int64_t i = 0; i < elements; ++i) wrong += r[i] != sum_at(i);
      }
      break;
    case model::Collective::sendrecv:
      for (std::int64_t i = 0; i < elements; ++i) wrong += r[i] != value(prev, i);
      break;
  }
  return wrong;
}

Result<PreparedCall> prepare_call(Group& group, model::Collective kind, const std::string& collective,
                                  std::int64_t bytes, bool in_place, std::vector<float>& send_buffer,
                                  std::vector<float>& recv_buffer, const CollectiveTiming& timing) {
  const MPI_Comm comm = group.comm();
  const int n = group.size();
  const int rank = group.rank();
  const std::int64_t elements = bytes / static_cast<std::int64_t>(sizeof(float));
  const std::int64_t chunk = splits_buffer(collective) ? elements / n : elements;  // per-rank piece
  const int next = (rank + 1) % n, prev = (rank - 1 + n) % n;
  constexpr int k_root = 0;

  // Buffers: `send` and `recv` hold the full nccl-tests buffer sizes of each collective.
  std::int64_t send_elems = elements;
  if (collective == "allgather") send_elems = chunk;
  float* s = send_buffer.data();
  float* r = recv_buffer.data();
  auto initialise = [&] {
    for (std::int64_t i = 0; i < send_elems; ++i) {
      // allgather sends its own chunk, whose global index starts at rank·chunk.
      const std::int64_t global = collective == "allgather" ? rank * chunk + i : i;
      s[i] = value(rank, global);
    }
    std::fill(r, r + elements, -1.0f);
    if (in_place) std::copy(s, s + send_elems, collective == "allgather" ? r + rank * chunk : r);
    if (collective == "broadcast" && rank == k_root) std::copy(s, s + send_elems, r);
  };
  const int c = static_cast<int>(std::min<std::int64_t>(chunk, INT32_MAX));
  const int e = static_cast<int>(std::min<std::int64_t>(elements, INT32_MAX));
  PreparedCall prepared;
  prepared.bytes = bytes;
  prepared.in_place = in_place;
  switch (kind) {
    case model::Collective::allreduce:
      prepared.call = [=] {
        return MPI_Allreduce(in_place ? MPI_IN_PLACE : s, r, e, MPI_FLOAT, MPI_SUM, comm);
      };
      break;
    case model::Collective::allgather:
      prepared.call = [=] {
        return in_place ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_FLOAT, r, c, MPI_FLOAT, comm)
                        : MPI_Allgather(s, c, MPI_FLOAT, r, c, MPI_FLOAT, comm);
      };
      break;
    case model::Collective::reducescatter:
      prepared.call = [=] {
        return MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : s, r, c, MPI_FLOAT, MPI_SUM, comm);
      };
      break;
    case model::Collective::alltoall:
      prepared.call = [=] {
        return in_place ? MPI_Alltoall(MPI_IN_PLACE, 0, MPI_FLOAT, r, c, MPI_FLOAT, comm)
                        : MPI_Alltoall(s, c, MPI_FLOAT, r, c, MPI_FLOAT, comm);
      };
      break;
    case model::Collective::broadcast:
      // MPI_Bcast is in place by nature: the root's data already sits in recv.
      prepared.call = [=] { return MPI_Bcast(r, e, MPI_FLOAT, k_root, comm); };
      break;
    case model::Collective::reduce:
      prepared.call = [=] {
        const void* source = in_place && rank == k_root ? MPI_IN_PLACE : (in_place ? r : s);
        return MPI_Reduce(source, r, e, MPI_FLOAT, MPI_SUM, k_root, comm);
      };
      break;
    case model::Collective::sendrecv:
      prepared.call = [=] {
        return in_place ? MPI_Sendrecv_replace(r, e, MPI_FLOAT, next, 0, prev, 0, comm, MPI_STATUS_IGNORE)
                        : MPI_Sendrecv(s, e, MPI_FLOAT, next, 0, r, e, MPI_FLOAT, prev, 0, comm,
                                       MPI_STATUS_IGNORE);
      };
      break;
  }

  // The checked call.
  initialise();
  LAGOM_MPI_CHECK(prepared.call());
  const std::int64_t wrong = count_wrong(kind, r, elements, chunk, n, rank, k_root);
  LAGOM_TRY(prepared.wrong, group.sum(wrong));

  // Warm-up; its fastest call (on the slowest rank) sets the number of timed calls per batch, the same
  // on every rank.
  const int warmups = std::max(timing.warmup_iters, 1);
  double fastest_us = 0;
  for (int i = 0; i < warmups; ++i) {
    const double begin = MPI_Wtime();
    LAGOM_MPI_CHECK(prepared.call());
    const double call_us = (MPI_Wtime() - begin) * 1e6;
    fastest_us = i == 0 ? call_us : std::min(fastest_us, call_us);
  }
  LAGOM_TRY(const double warm_us, group.max(fastest_us));
  const int batches = std::max(timing.batches, 1);
  const int iters = std::max(std::clamp(static_cast<int>(timing.target_us / std::max(warm_us, 0.01)),
                                        timing.min_iters, timing.max_iters),
                             batches);
  prepared.per_batch = std::max(iters / batches, 1);
  return prepared;
}

// One batch after a barrier: the slowest rank's mean time per call.
Result<double> time_batch(Group& group, const PreparedCall& prepared) {
  LAGOM_TRY_STATUS(group.barrier());
  const double start = MPI_Wtime();
  for (int i = 0; i < prepared.per_batch; ++i) LAGOM_MPI_CHECK(prepared.call());
  return group.max((MPI_Wtime() - start) * 1e6 / prepared.per_batch);
}

// The same batch with every call timed for the records: one clock read more per call (tens of ns).
Result<double> time_recorded_batch(Group& group, const PreparedCall& prepared,
                                   const CollectiveTiming& timing) {
  using Clock = std::chrono::steady_clock;
  auto ns = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  };
  LAGOM_TRY_STATUS(group.barrier());
  const Clock::time_point start = Clock::now();
  Clock::time_point call_start = start;
  for (int i = 0; i < prepared.per_batch; ++i) {
    LAGOM_MPI_CHECK(prepared.call());
    const Clock::time_point call_end = Clock::now();
    timing.on_call(prepared.bytes, ns(call_start), ns(call_end));
    call_start = call_end;
  }
  const double batch_us = std::chrono::duration<double, std::micro>(call_start - start).count();
  return group.max(batch_us / prepared.per_batch);
}

}  // namespace

Result<std::vector<db::CommSample>> measure_mpi_series(Group& group, const std::string& collective,
                                                       const std::vector<std::int64_t>& sizes_bytes,
                                                       int nodes, const CollectiveTiming& timing,
                                                       const std::function<void(std::int64_t)>& on_size) {
  const auto parsed = model::parse_collective(collective);
  if (!parsed) return make_error(ErrorCode::invalid_input, "unknown collective " + collective);
  if (group.comm() == MPI_COMM_NULL)
    return make_error(ErrorCode::invalid_input, "the mpi backend needs an MPI group");
  const int n = group.size();
  std::int64_t max_elements = 0;
  for (const std::int64_t requested : sizes_bytes) {
    const std::int64_t bytes = round_collective_bytes(collective, requested, n);
    if (bytes <= 0) {
      return make_error(ErrorCode::invalid_input, collective + " of " + std::to_string(requested) +
                                                      " bytes over " + std::to_string(n) +
                                                      " ranks: below one element per rank");
    }
    max_elements = std::max(max_elements, bytes / static_cast<std::int64_t>(sizeof(float)));
  }
  std::vector<float> send(static_cast<std::size_t>(max_elements)),
      recv(static_cast<std::size_t>(max_elements));
  std::vector<PreparedCall> calls;
  for (const std::int64_t requested : sizes_bytes) {
    const std::int64_t bytes = round_collective_bytes(collective, requested, n);
    for (const bool in_place : {false, true}) {
      LAGOM_TRY(auto prepared, prepare_call(group, *parsed, collective, bytes, in_place, send, recv, timing));
      calls.push_back(std::move(prepared));
    }
    if (on_size) on_size(requested);
  }
  // Rounds: every size once per round, so a stretch of load on a shared machine falls on all sizes alike
  // instead of on the few measured while it lasted; each size keeps its fastest batch. After `batches`
  // rounds, more follow (up to `max_rounds`) while any size's two fastest batches still differ by more
  // than `agreement`: one quiet batch is luck, two that agree are a measurement. Batch times are maxima
  // over ranks, so every rank takes the same decision.
  const int batches = std::max(timing.batches, 1);
  const int max_rounds = std::max(timing.max_rounds, batches);
  std::vector<double> second(calls.size(), 0);
  for (int round = 0; round < max_rounds; ++round) {
    for (std::size_t i = 0; i < calls.size(); ++i) {
      LAGOM_TRY(const double batch_us,
                timing.on_call ? time_recorded_batch(group, calls[i], timing) : time_batch(group, calls[i]));
      auto& best = calls[i].time_us;
      if (round == 0) {
        best = batch_us;
        second[i] = std::numeric_limits<double>::infinity();
      } else if (batch_us < best) {
        second[i] = best;
        best = batch_us;
      } else {
        second[i] = std::min(second[i], batch_us);
      }
    }
    if (round + 1 < batches) continue;
    bool agreed = true;
    for (std::size_t i = 0; i < calls.size(); ++i)
      agreed = agreed && second[i] <= calls[i].time_us * (1 + timing.agreement);
    if (agreed) break;
  }
  std::vector<db::CommSample> samples;
  for (const auto& prepared : calls) {
    db::CommSample sample;
    sample.collective = collective;
    sample.ranks = n;
    sample.nodes = nodes;
    sample.bytes = prepared.bytes;
    sample.count = nccl_tests_count(collective, prepared.bytes, n);
    sample.dtype = "float";
    sample.redop = (collective == "allreduce" || collective == "reducescatter" || collective == "reduce")
                       ? "sum"
                       : "none";
    sample.root = (collective == "broadcast" || collective == "reduce") ? 0 : -1;
    sample.in_place = prepared.in_place;
    sample.time_us = prepared.time_us;
    sample.algbw_GBps = static_cast<double>(prepared.bytes) / (sample.time_us * 1e3);
    sample.busbw_GBps = sample.algbw_GBps * model::busbw_factor(*parsed, n);
    sample.wrong = prepared.wrong;
    samples.push_back(std::move(sample));
  }
  return samples;
}

}  // namespace lagom::profiler
