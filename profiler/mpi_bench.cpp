#include "profiler/mpi_bench.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "model/collective_factors.h"

namespace lagom::profiler {

namespace {

// Small integers: sums over ranks stay exact in float.
float value(int rank, std::int64_t index) { return static_cast<float>((rank + index) % 17 + 1); }

bool splits_buffer(const std::string& collective) {
  return collective == "allgather" || collective == "reducescatter" || collective == "alltoall";
}

}  // namespace

std::int64_t round_collective_bytes(const std::string& collective, std::int64_t bytes, int ranks) {
  const std::int64_t unit = static_cast<std::int64_t>(sizeof(float)) * (splits_buffer(collective) ? ranks : 1);
  return bytes / unit * unit;
}

std::int64_t nccl_tests_count(const std::string& collective, std::int64_t bytes, int ranks) {
  const std::int64_t elements = bytes / static_cast<std::int64_t>(sizeof(float));
  if (collective == "allgather" || collective == "reducescatter") return elements / ranks;
  return elements;
}

Result<db::CommSample> measure_mpi_collective(Group& group, const std::string& collective, std::int64_t requested_bytes,
                                              bool in_place, int nodes, const CollectiveTiming& timing) {
  const auto parsed = model::parse_collective(collective);
  if (!parsed) return make_error(ErrorCode::invalid_input, "unknown collective " + collective);
  const MPI_Comm comm = group.comm();
  if (comm == MPI_COMM_NULL) return make_error(ErrorCode::invalid_input, "the mpi backend needs an MPI group");
  const int n = group.size();
  const int rank = group.rank();
  const std::int64_t bytes = round_collective_bytes(collective, requested_bytes, n);
  if (bytes <= 0) {
    return make_error(ErrorCode::invalid_input, collective + " of " + std::to_string(requested_bytes) +
                                                    " bytes over " + std::to_string(n) + " ranks: below one element per rank");
  }
  const std::int64_t elements = bytes / static_cast<std::int64_t>(sizeof(float));
  const std::int64_t chunk = splits_buffer(collective) ? elements / n : elements;  // per-rank piece
  const int next = (rank + 1) % n, prev = (rank - 1 + n) % n;
  constexpr int k_root = 0;

  // Buffers: `send` and `recv` hold the full nccl-tests buffer sizes of each collective.
  std::int64_t send_elems = elements, recv_elems = elements;
  if (collective == "allgather") send_elems = chunk;
  if (collective == "reducescatter") recv_elems = chunk;
  std::vector<float> send(static_cast<std::size_t>(send_elems)), recv(static_cast<std::size_t>(std::max(recv_elems, elements)));
  auto initialise = [&] {
    for (std::int64_t i = 0; i < send_elems; ++i) {
      // allgather sends its own chunk, whose global index starts at rank·chunk.
      const std::int64_t global = collective == "allgather" ? rank * chunk + i : i;
      send[static_cast<std::size_t>(i)] = value(rank, global);
    }
    std::fill(recv.begin(), recv.end(), -1.0f);
    if (in_place) {
      if (collective == "allgather") {
        std::copy(send.begin(), send.end(), recv.begin() + rank * chunk);
      } else {
        std::copy(send.begin(), send.end(), recv.begin());
      }
    }
    if (collective == "broadcast" && rank == k_root) std::copy(send.begin(), send.end(), recv.begin());
  };
  const int c = static_cast<int>(std::min<std::int64_t>(chunk, INT32_MAX));
  const int e = static_cast<int>(std::min<std::int64_t>(elements, INT32_MAX));
  float* s = send.data();
  float* r = recv.data();
  std::function<int()> call;
  switch (*parsed) {
    case model::Collective::allreduce:
      call = [=] { return MPI_Allreduce(in_place ? MPI_IN_PLACE : s, r, e, MPI_FLOAT, MPI_SUM, comm); };
      break;
    case model::Collective::allgather:
      call = [=] {
        return in_place ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_FLOAT, r, c, MPI_FLOAT, comm)
                        : MPI_Allgather(s, c, MPI_FLOAT, r, c, MPI_FLOAT, comm);
      };
      break;
    case model::Collective::reducescatter:
      call = [=] {
        return MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : s, r, c, MPI_FLOAT, MPI_SUM, comm);
      };
      break;
    case model::Collective::alltoall:
      call = [=] {
        return in_place ? MPI_Alltoall(MPI_IN_PLACE, 0, MPI_FLOAT, r, c, MPI_FLOAT, comm)
                        : MPI_Alltoall(s, c, MPI_FLOAT, r, c, MPI_FLOAT, comm);
      };
      break;
    case model::Collective::broadcast:
      // MPI_Bcast is in place by nature: the root's data already sits in recv.
      call = [=] { return MPI_Bcast(r, e, MPI_FLOAT, k_root, comm); };
      break;
    case model::Collective::reduce:
      call = [=] {
        const void* source = in_place && rank == k_root ? MPI_IN_PLACE : (in_place ? r : s);
        return MPI_Reduce(source, r, e, MPI_FLOAT, MPI_SUM, k_root, comm);
      };
      break;
    case model::Collective::sendrecv:
      call = [=] {
        return in_place ? MPI_Sendrecv_replace(r, e, MPI_FLOAT, next, 0, prev, 0, comm, MPI_STATUS_IGNORE)
                        : MPI_Sendrecv(s, e, MPI_FLOAT, next, 0, r, e, MPI_FLOAT, prev, 0, comm, MPI_STATUS_IGNORE);
      };
      break;
  }

  // The checked call.
  initialise();
  LAGOM_MPI_CHECK(call());
  std::int64_t wrong = 0;
  auto sum_at = [&](std::int64_t global) {
    float total = 0;
    for (int q = 0; q < n; ++q) total += value(q, global);
    return total;
  };
  switch (*parsed) {
    case model::Collective::allreduce:
      for (std::int64_t i = 0; i < elements; ++i) wrong += recv[static_cast<std::size_t>(i)] != sum_at(i);
      break;
    case model::Collective::allgather:
      for (std::int64_t i = 0; i < elements; ++i) wrong += recv[static_cast<std::size_t>(i)] != value(static_cast<int>(i / chunk), i);
      break;
    case model::Collective::reducescatter:
      for (std::int64_t i = 0; i < chunk; ++i) wrong += recv[static_cast<std::size_t>(i)] != sum_at(rank * chunk + i);
      break;
    case model::Collective::alltoall:
      // Chunk q of the receive buffer came from rank q, which sent its chunk number `rank`.
      for (std::int64_t i = 0; i < elements; ++i) {
        const int source = static_cast<int>(i / chunk);
        wrong += recv[static_cast<std::size_t>(i)] != value(source, rank * chunk + i % chunk);
      }
      break;
    case model::Collective::broadcast:
      for (std::int64_t i = 0; i < elements; ++i) wrong += recv[static_cast<std::size_t>(i)] != value(k_root, i);
      break;
    case model::Collective::reduce:
      if (rank == k_root) {
        for (std::int64_t i = 0; i < elements; ++i) wrong += recv[static_cast<std::size_t>(i)] != sum_at(i);
      }
      break;
    case model::Collective::sendrecv:
      for (std::int64_t i = 0; i < elements; ++i) wrong += recv[static_cast<std::size_t>(i)] != value(prev, i);
      break;
  }
  LAGOM_TRY(const std::int64_t total_wrong, group.sum(wrong));

  // Warm-up; its fastest call (on the slowest rank) sets the number of timed calls, the same on every rank.
  const int warmups = std::max(timing.warmup_iters, 1);
  double fastest_us = 0;
  for (int i = 0; i < warmups; ++i) {
    const double begin = MPI_Wtime();
    LAGOM_MPI_CHECK(call());
    const double call_us = (MPI_Wtime() - begin) * 1e6;
    fastest_us = i == 0 ? call_us : std::min(fastest_us, call_us);
  }
  LAGOM_TRY(const double warm_us, group.max(fastest_us));
  const int iters = std::max(std::clamp(static_cast<int>(timing.target_us / std::max(warm_us, 0.01)), timing.min_iters,
                                        timing.max_iters),
                             timing.batches);
  double start = 0;

  // Timed calls in batches, each after a barrier; a batch's time is its slowest rank's mean per call,
  // and time_us the fastest batch. Delays on a shared machine (a rank descheduled for a time slice) only
  // ever add time, so the fastest batch is the estimate closest to what the link and the cores can do;
  // nccl-tests' plain mean over all calls would let one such delay dominate a small size.
  const int batches = std::max(timing.batches, 1);
  const int per_batch = std::max(iters / batches, 1);
  double time_us = 0;
  for (int b = 0; b < batches; ++b) {
    LAGOM_TRY_STATUS(group.barrier());
    start = MPI_Wtime();
    for (int i = 0; i < per_batch; ++i) LAGOM_MPI_CHECK(call());
    LAGOM_TRY(const double slowest_us, group.max((MPI_Wtime() - start) * 1e6 / per_batch));
    time_us = b == 0 ? slowest_us : std::min(time_us, slowest_us);
  }

  db::CommSample sample;
  sample.collective = collective;
  sample.ranks = n;
  sample.nodes = nodes;
  sample.bytes = bytes;
  sample.count = nccl_tests_count(collective, bytes, n);
  sample.dtype = "float";
  sample.redop = (collective == "allreduce" || collective == "reducescatter" || collective == "reduce") ? "sum" : "none";
  sample.root = (collective == "broadcast" || collective == "reduce") ? k_root : -1;
  sample.in_place = in_place;
  sample.time_us = time_us;
  sample.algbw_GBps = static_cast<double>(bytes) / (sample.time_us * 1e3);
  sample.busbw_GBps = sample.algbw_GBps * model::busbw_factor(*parsed, n);
  sample.wrong = total_wrong;
  return sample;
}

}  // namespace lagom::profiler
