#include "kernels/mpi_executor.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <memory>
#include <mpi.h>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace lagom::kernels {

namespace {

// Sleep between MPI_Testall polls: an eighth of the time the exchange has taken so far, within
// [k_poll_min, k_poll_max]. Every wake-up of the communication thread preempts the GEMM on its core (and
// likely evicts part of its cache tiles), so a transfer that runs for milliseconds is polled a few dozen
// times rather than every 100 µs, which left flash exposing 5–12 ms instead of 2.7–5.7 ms on 2 cores
// (docs/kernels.md); a short one (shared memory) is still polled finely, and the exchange is seen complete
// at most ~12% of its duration late.
// Meanwhile the kernel keeps the link busy from the socket buffers (the TCP BTL's pipelined fragments).
constexpr std::chrono::microseconds k_poll_min{20};
constexpr std::chrono::microseconds k_poll_max{1000};

std::string mpi_message(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

#define LAGOM_MPI_CHECK(call)                                                                          \
  do {                                                                                                 \
    const int lagom_mpi_rc_ = (call);                                                                  \
    if (lagom_mpi_rc_ != MPI_SUCCESS) {                                                                \
      return make_error(ErrorCode::failure, fmt::format("{}: {}", #call, mpi_message(lagom_mpi_rc_))); \
    }                                                                                                  \
  } while (0)

class MpiTransport final : public Transport {
 public:
  Status exchange(std::span<const Message> sends, std::span<const Message> recvs) override {
    m_requests.assign(sends.size() + recvs.size(), MPI_REQUEST_NULL);
    std::size_t next = 0;
    for (const Message& recv : recvs) {
      if (recv.bytes.size() > static_cast<std::size_t>(INT_MAX)) {
        return make_error(ErrorCode::invalid_input,
                          "mpi executor: a piece larger than 2 GiB is not supported");
      }
      LAGOM_MPI_CHECK(MPI_Irecv(recv.bytes.data(), static_cast<int>(recv.bytes.size()), MPI_BYTE, recv.peer,
                                recv.tag, MPI_COMM_WORLD, &m_requests[next++]));
    }
    for (const Message& send : sends) {
      if (send.bytes.size() > static_cast<std::size_t>(INT_MAX)) {
        return make_error(ErrorCode::invalid_input,
                          "mpi executor: a piece larger than 2 GiB is not supported");
      }
      LAGOM_MPI_CHECK(MPI_Isend(send.bytes.data(), static_cast<int>(send.bytes.size()), MPI_BYTE, send.peer,
                                send.tag, MPI_COMM_WORLD, &m_requests[next++]));
    }
    const auto started = std::chrono::steady_clock::now();
    for (;;) {
      int done = 0;
      LAGOM_MPI_CHECK(
          MPI_Testall(static_cast<int>(m_requests.size()), m_requests.data(), &done, MPI_STATUSES_IGNORE));
      if (done != 0) return {};
      const auto elapsed =
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
      std::this_thread::sleep_for(std::clamp(elapsed / 8, k_poll_min, k_poll_max));
    }
  }

 private:
  std::vector<MPI_Request> m_requests;
};

class MpiGroup final : public RankGroup {
 public:
  MpiGroup() {
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m_size);
  }
  int rank() const override { return m_rank; }
  int size() const override { return m_size; }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  double max_over_ranks(double value) override {
    double result = value;
    MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return result;
  }
  Transport& transport() override { return m_transport; }

 private:
  int m_rank = 0;
  int m_size = 1;
  MpiTransport m_transport;
};

}  // namespace

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) {
    if (const char* value = std::getenv(name); value != nullptr && std::atoi(value) > 1) return true;
  }
  return false;
}

Result<std::unique_ptr<MpiSession>> MpiSession::start() {
  std::unique_ptr<MpiSession> session(new MpiSession());
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (initialized == 0) {
    LAGOM_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided));
    session->m_owns = true;
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    return make_error(ErrorCode::unavailable,
                      "mpi executor: the MPI library does not provide MPI_THREAD_SERIALIZED, which the "
                      "communication thread needs");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &session->m_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &session->m_size);
  return session;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (m_owns && finalized == 0) MPI_Finalize();
}

Result<BenchResult> run_mpi(const model::OverlapPlan& plan, const BenchOptions& options) {
  MpiGroup group;
  if (group.size() != plan.request.ranks) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("mpi executor: the plan has {} ranks but MPI_COMM_WORLD has {}",
                                  plan.request.ranks, group.size()));
  }
  return bench_rank(plan, group, options);
}

}  // namespace lagom::kernels
