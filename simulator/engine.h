// The discrete-event engine: tasks on in-order streams, joined by dependencies, with contention.
//
// What it models. Every simulated GPU ("stage": one representative rank per pipeline stage, since ranks
// that differ only in their tp/cp/dp/ep coordinate do the same work at the same time) owns one compute
// stream and any number of communication streams. A stream runs its tasks one at a time in the order they
// were added (a CUDA stream). A task starts when it is at the head of its stream and every task it depends
// on has finished. A task carries `work_us`, its duration when it runs alone.
//
// Contention (a fluid model). While a communication task of a stage runs beside that stage's compute task,
// both progress more slowly: compute at 1 / (1 + Σ(compute_slowdown_i − 1)) of its alone rate (every
// running collective i holds SMs and memory bandwidth; penalties add), and collective i at
// 1 / (1 + (comm_slowdown_i − 1)·busy) where busy is the share of the compute task's current time spent in
// kernels (a compute task may contain blocking communication, `blocking_fraction` of its work, that is
// neither slowed by nor slowing collectives). Rates are recomputed at every start and finish on the stage,
// so a task's remaining work progresses at a rate that changes when overlapping tasks start and end.
// A transfer between two stages (pipeline send/recv) runs on the sender's stream and counts as running on
// both stages.
//
// Shared links (bandwidth conservation). A communication task may name the link its bandwidth goes through
// on its stages (`link`: the caller's small integer, e.g. the node's NICs or its NVLink fabric). Running
// communication tasks of a stage that name the same link split it: only those of the highest `priority`
// among them progress, each at 1/k of its rate when k of them share that top priority; the others wait
// (rate 0) until the link frees. Equal priorities are therefore fair sharing (two collectives issued on
// different streams at once, as NCCL kernels of different communicators run); distinct priorities model
// an issue order that puts one class of collectives first. A transfer spanning two stages takes the
// smaller share of the two.
//
// Accounting per stage, over [0, end of the iteration]: every instant is exactly one of
//   compute     the compute stream runs kernels (blocking communication inside tasks excluded),
//   optimizer   the compute stream runs an optimizer task,
//   exposed     the compute stream runs blocking communication, or is idle while a collective of the
//               stage is in flight,
//   bubble      the compute stream is idle and no communication of the stage is in flight,
// so the four add up to the iteration time for every stage, and compute + optimizer equals the compute
// stream's busy time minus its blocking communication.
//
// Thread safety: an Engine is a plain value; use one per thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

namespace lagom::simulator {

enum class TaskKind : std::uint8_t { compute, optimizer, comm };

struct Task {
  int stream = 0;       // the stream it runs on (Engine::add_stream's index)
  int peer_stage = -1;  // comm only: a second stage the transfer also occupies (pp recv), or −1
  TaskKind kind = TaskKind::compute;
  double work_us = 0;            // duration alone, microseconds (>= 0)
  double blocking_fraction = 0;  // compute only: share of work_us that is blocking communication [0, 1]
  double compute_slowdown = 1;   // comm only: factor (>= 1) by which the stage's compute slows beside it
  double comm_slowdown = 1;      // comm only: factor (>= 1) by which it slows beside busy compute
  int link = -1;                 // comm only: the link of its stages it shares with others, or −1 (none)
  int priority = 0;              // comm only: on a shared link, higher priorities go first
  int label = -1;                // caller's index (names in traces); the engine ignores it
};

struct StageTotals {
  double compute_us = 0;
  double optimizer_us = 0;
  double exposed_comm_us = 0;
  double bubble_us = 0;
};

class Engine {
 public:
  // Adds a stream on `stage`; `compute` streams run compute and optimizer tasks, the others comm tasks.
  int add_stream(int stage, bool compute);
  // Appends a task to its stream's order; returns its index.
  int add_task(const Task& task);
  // `after` may start only once `before` has finished. Both must exist.
  void add_dependency(int before, int after);
  void reserve(std::size_t tasks, std::size_t dependencies);

  // Runs every task. failure when some task can never start (a dependency cycle or a dependency on a
  // task queued behind it on the same stream), naming how many tasks were left.
  Status run();

  // The longest chain of tasks linked by dependencies or stream order, each lasting its work_us (the
  // iteration with no contention), or the most work alone on one shared link of one stage, if larger;
  // microseconds; 0 when some task can never start. Since contention only slows tasks down and a link
  // serves one unit of work per unit of time however it is shared, makespan_us() after run() is never
  // below it (up to rounding). Independent of run().
  [[nodiscard]] double critical_path_us() const;

  [[nodiscard]] std::size_t task_count() const { return m_tasks.size(); }
  [[nodiscard]] const Task& task(int index) const { return m_tasks[static_cast<std::size_t>(index)]; }
  [[nodiscard]] double start_us(int index) const { return m_start_us[static_cast<std::size_t>(index)]; }
  [[nodiscard]] double end_us(int index) const { return m_end_us[static_cast<std::size_t>(index)]; }
  [[nodiscard]] int stream_stage(int stream) const {
    return m_streams[static_cast<std::size_t>(stream)].stage;
  }
  [[nodiscard]] bool stream_is_compute(int stream) const {
    return m_streams[static_cast<std::size_t>(stream)].compute;
  }
  [[nodiscard]] int stream_count() const { return static_cast<int>(m_streams.size()); }
  [[nodiscard]] int stage_count() const { return static_cast<int>(m_stages.size()); }
  // After run(): end of the last task, microseconds.
  [[nodiscard]] double makespan_us() const { return m_makespan_us; }
  // After run(): the stage's accounting over [0, makespan] (see the header comment).
  [[nodiscard]] const StageTotals& totals(int stage) const {
    return m_stages[static_cast<std::size_t>(stage)].totals;
  }

 private:
  struct Stream {
    int stage = 0;
    bool compute = false;
    std::vector<int> order;
    std::size_t next = 0;
  };
  struct Stage {
    int compute_task = -1;        // running compute/optimizer task or −1
    std::vector<int> comm_tasks;  // running comm tasks touching this stage
    double last_us = 0;           // time the accounting and remaining work were last advanced to
    StageTotals totals;
  };
  struct Event {
    double time_us;
    int task;
    std::uint32_t version;
    bool operator>(const Event& other) const {
      return time_us != other.time_us ? time_us > other.time_us : task > other.task;
    }
  };

  // Successors of every task in CSR form (offsets has task_count() + 1 entries), and each task's number of
  // predecessors.
  void successors(std::vector<int>& offsets, std::vector<int>& targets, std::vector<int>& pending) const;
  void advance(int stage, double now_us);
  void start(int task, double now_us);
  void reschedule(int stage, double now_us, std::vector<Event>& heap);
  [[nodiscard]] double compute_slowdown(const Stage& stage) const;
  [[nodiscard]] double busy_share(const Stage& stage) const;
  [[nodiscard]] double rate(int task) const;
  [[nodiscard]] double link_share(const Stage& stage, const Task& task) const;

  std::vector<Task> m_tasks;
  std::vector<Stream> m_streams;
  std::vector<Stage> m_stages;
  std::vector<std::pair<int, int>> m_edges;  // (before, after)
  // Filled by run().
  std::vector<double> m_start_us, m_end_us, m_remaining, m_rate;
  std::vector<std::uint32_t> m_version;
  std::vector<bool> m_scheduled;  // a finish event at the current rate is in the heap
  double m_makespan_us = 0;
};

}  // namespace lagom::simulator
