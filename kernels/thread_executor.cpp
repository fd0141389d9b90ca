#include "kernels/thread_executor.h"

#include <algorithm>
#include <barrier>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <malloc.h>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernels/native_thread.h"

namespace lagom::kernels {

namespace {

// Messages waiting for rank `owner`, keyed by (source, tag).
struct Mailbox {
  std::mutex mutex;
  std::condition_variable arrived;
  std::map<std::pair<int, int>, std::vector<std::byte>> messages;
};

struct ThreadWorld {
  explicit ThreadWorld(int ranks)
      : barrier(ranks),
        slots(static_cast<std::size_t>(ranks), 0.0),
        mailboxes(static_cast<std::size_t>(ranks)) {}
  std::barrier<> barrier;
  std::vector<double> slots;
  std::vector<Mailbox> mailboxes;
};

class MailboxTransport final : public Transport {
 public:
  MailboxTransport(ThreadWorld& world, int rank) : m_world(world), m_rank(rank) {}

  Status exchange(std::span<const Message> sends, std::span<const Message> recvs) override {
    for (const Message& send : sends) {
      std::vector<std::byte> copy(send.bytes.begin(), send.bytes.end());
      Mailbox& box = m_world.mailboxes[static_cast<std::size_t>(send.peer)];
      std::lock_guard lock(box.mutex);
      if (!box.messages.emplace(std::make_pair(m_rank, send.tag), std::move(copy)).second) {
        return make_error(ErrorCode::failure, "threads executor: two messages with the same tag in flight");
      }
      box.arrived.notify_all();
    }
    Mailbox& mine = m_world.mailboxes[static_cast<std::size_t>(m_rank)];
    for (const Message& recv : recvs) {
      std::unique_lock lock(mine.mutex);
      const auto key = std::make_pair(recv.peer, recv.tag);
      mine.arrived.wait(lock, [&] { return mine.messages.count(key) != 0; });
      auto node = mine.messages.extract(key);
      lock.unlock();
      if (node.mapped().size() != recv.bytes.size()) {
        return make_error(ErrorCode::failure,
                          "threads executor: a message's size differs from its receive buffer");
      }
      std::memcpy(recv.bytes.data(), node.mapped().data(), recv.bytes.size());
    }
    return {};
  }

 private:
  ThreadWorld& m_world;
  int m_rank;
};

class ThreadGroup final : public RankGroup {
 public:
  ThreadGroup(ThreadWorld& world, int rank) : m_world(world), m_rank(rank), m_transport(world, rank) {}
  int rank() const override { return m_rank; }
  int size() const override { return static_cast<int>(m_world.slots.size()); }
  void barrier() override { m_world.barrier.arrive_and_wait(); }
  double max_over_ranks(double value) override {
    m_world.slots[static_cast<std::size_t>(m_rank)] = value;
    m_world.barrier.arrive_and_wait();
    const double result = *std::max_element(m_world.slots.begin(), m_world.slots.end());
    m_world.barrier.arrive_and_wait();
    return result;
  }
  Transport& transport() override { return m_transport; }

 private:
  ThreadWorld& m_world;
  int m_rank;
  MailboxTransport m_transport;
};

}  // namespace

Result<BenchResult> run_threads(const model::OverlapPlan& plan, const BenchOptions& options,
                                std::span<float> global_out) {
  const int ranks = plan.request.ranks;
  if (!global_out.empty() && static_cast<std::int64_t>(global_out.size()) != plan.shape.m * plan.shape.n) {
    return make_error(ErrorCode::invalid_input, "threads executor: the output span must hold m·n values");
  }
  ThreadWorld world(ranks);
  std::vector<std::optional<Result<BenchResult>>> results(static_cast<std::size_t>(ranks));
  // The ranks start together once every thread exists: a thread the system refuses (a login node's
  // process or memory limit) must not leave the started ranks waiting in a barrier for it. Threads are
  // asked for with pthread_create (native_thread.h): the refusal is a return value, with nothing to
  // allocate while the system is out of room.
  std::mutex gate_mutex;
  std::condition_variable gate;
  bool open = false, aborted = false;
  std::vector<std::function<void()>> bodies;
  bodies.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    bodies.emplace_back([&, r] {
      {
        std::unique_lock lock(gate_mutex);
        gate.wait(lock, [&] { return open; });
        if (aborted) return;
      }
      ThreadGroup group(world, r);
      results[static_cast<std::size_t>(r)].emplace(bench_rank(plan, group, options, global_out));
    });
  }
  // glibc gives each thread that allocates its own malloc arena, reserving 64 MiB of address space per arena
  // (HEAP_MAX_SIZE on 64-bit): under an address-space limit (a login node's ulimit -v) a rank whose thread
  // did start then finds no room for a small allocation, and std::bad_alloc in a rank thread ends the
  // process. The executor's threads allocate little and never in the timed loop: one arena serves them
  // (measured: 16 ranks ran under every limit from 271 MiB up with it, and aborted at 471 MiB without).
  mallopt(M_ARENA_MAX, 1);
  std::vector<NativeThread> threads(static_cast<std::size_t>(ranks));
  int refused = -1;  // the rank whose thread the system refused
  for (int r = 0; r < ranks && refused < 0; ++r) {
    if (threads[static_cast<std::size_t>(r)].start(&bodies[static_cast<std::size_t>(r)]) != 0) refused = r;
  }
  {
    std::lock_guard lock(gate_mutex);
    open = true;
    aborted = refused >= 0;
  }
  gate.notify_all();
  for (NativeThread& t : threads) t.join();
  if (refused >= 0) {
    return make_error(ErrorCode::unavailable,
                      fmt::format("threads executor: cannot start thread {} of {} (the system refused a "
                                  "thread: a process or memory limit); use fewer --ranks",
                                  refused + 1, ranks));
  }
  // The reason, not the agreement: the rank that failed says why, the others only that another one did.
  const Error* agreed = nullptr;
  for (auto& result : results) {
    if (result->ok()) continue;
    if (result->error().message != k_another_rank_failed) return result->error();
    agreed = &result->error();
  }
  if (agreed != nullptr) return *agreed;
  return std::move(*results.front());
}

}  // namespace lagom::kernels
