#include "simulator/engine.h"

#include <algorithm>
#include <cassert>
#include <functional>

#include <fmt/format.h>

namespace lagom::simulator {

int Engine::add_stream(int stage, bool compute) {
  assert(stage >= 0);
  if (static_cast<std::size_t>(stage) >= m_stages.size())
    m_stages.resize(static_cast<std::size_t>(stage) + 1);
  m_streams.push_back(Stream{stage, compute, {}, 0});
  return static_cast<int>(m_streams.size()) - 1;
}

int Engine::add_task(const Task& task) {
  assert(task.stream >= 0 && static_cast<std::size_t>(task.stream) < m_streams.size());
  assert(task.work_us >= 0);
  if (task.peer_stage >= 0 && static_cast<std::size_t>(task.peer_stage) >= m_stages.size()) {
    m_stages.resize(static_cast<std::size_t>(task.peer_stage) + 1);
  }
  m_tasks.push_back(task);
  const int index = static_cast<int>(m_tasks.size()) - 1;
  m_streams[static_cast<std::size_t>(task.stream)].order.push_back(index);
  return index;
}

void Engine::add_dependency(int before, int after) {
  assert(before >= 0 && after >= 0 && before != after);
  m_edges.emplace_back(before, after);
}

void Engine::reserve(std::size_t tasks, std::size_t dependencies) {
  m_tasks.reserve(tasks);
  m_edges.reserve(dependencies);
}

double Engine::compute_slowdown(const Stage& stage) const {
  double slowdown = 1.0;
  for (const int comm : stage.comm_tasks)
    slowdown += m_tasks[static_cast<std::size_t>(comm)].compute_slowdown - 1.0;
  return slowdown;
}

// Share of the running compute task's wall time spent in kernels (the rest is its blocking communication).
double Engine::busy_share(const Stage& stage) const {
  if (stage.compute_task < 0) return 0.0;
  const Task& task = m_tasks[static_cast<std::size_t>(stage.compute_task)];
  const double kernels = (1.0 - task.blocking_fraction) * compute_slowdown(stage);
  const double total = kernels + task.blocking_fraction;
  return total > 0 ? kernels / total : 0.0;
}

// The share of `task`'s link it gets on `stage` (see the header comment): 0 behind a higher priority,
// 1/k among k running tasks of the top priority.
double Engine::link_share(const Stage& stage, const Task& task) const {
  if (task.link < 0) return 1.0;
  int top = task.priority, peers = 0;
  for (const int other : stage.comm_tasks) {
    const Task& o = m_tasks[static_cast<std::size_t>(other)];
    if (o.link != task.link) continue;
    if (o.priority > top) return 0.0;
    if (o.priority == top) ++peers;
  }
  return 1.0 / std::max(1, peers);
}

double Engine::rate(int index) const {
  const Task& task = m_tasks[static_cast<std::size_t>(index)];
  if (task.kind != TaskKind::comm) {
    const Stage& stage =
        m_stages[static_cast<std::size_t>(m_streams[static_cast<std::size_t>(task.stream)].stage)];
    const double x = task.blocking_fraction;
    return 1.0 / ((1.0 - x) * compute_slowdown(stage) + x);
  }
  double slowdown = 1.0;
  double share = 1.0;
  const int home = m_streams[static_cast<std::size_t>(task.stream)].stage;
  for (const int s : {home, task.peer_stage}) {
    if (s < 0) continue;
    const Stage& stage = m_stages[static_cast<std::size_t>(s)];
    const double busy = busy_share(stage);
    slowdown = std::max(slowdown, 1.0 + (task.comm_slowdown - 1.0) * busy);
    share = std::min(share, link_share(stage, task));
  }
  return share / slowdown;
}

void Engine::advance(int stage_index, double now_us) {
  Stage& stage = m_stages[static_cast<std::size_t>(stage_index)];
  const double dt = now_us - stage.last_us;
  if (dt > 0) {
    if (stage.compute_task >= 0) {
      const double busy = busy_share(stage);
      if (m_tasks[static_cast<std::size_t>(stage.compute_task)].kind == TaskKind::optimizer) {
        stage.totals.optimizer_us += dt * busy;
      } else {
        stage.totals.compute_us += dt * busy;
      }
      stage.totals.exposed_comm_us += dt * (1.0 - busy);
    } else if (!stage.comm_tasks.empty()) {
      stage.totals.exposed_comm_us += dt;
    } else {
      stage.totals.bubble_us += dt;
    }
    stage.last_us = now_us;
  }
  auto progress = [&](int task) {
    const auto t = static_cast<std::size_t>(task);
    const double elapsed = now_us - m_start_us[t];  // m_start_us doubles as "last advanced" while running
    if (elapsed > 0) {
      m_remaining[t] = std::max(0.0, m_remaining[t] - m_rate[t] * elapsed);
      m_start_us[t] = now_us;
    }
  };
  if (stage.compute_task >= 0) progress(stage.compute_task);
  for (const int comm : stage.comm_tasks) progress(comm);
}

void Engine::reschedule(int stage_index, double now_us, std::vector<Event>& heap) {
  const Stage& stage = m_stages[static_cast<std::size_t>(stage_index)];
  auto push = [&](int task) {
    const auto t = static_cast<std::size_t>(task);
    const double r = rate(task);
    // An unchanged rate keeps the pending finish event valid (remaining work was advanced at this rate).
    if (m_scheduled[t] && r == m_rate[t]) return;
    if (!m_scheduled[t] && r == 0 && m_rate[t] == 0) return;
    m_rate[t] = r;
    ++m_version[t];
    // A task waiting behind a higher priority has no finish event; the next change on its link re-rates it.
    m_scheduled[t] = r > 0;
    if (r == 0) return;
    heap.push_back(Event{now_us + m_remaining[t] / m_rate[t], task, m_version[t]});
    std::push_heap(heap.begin(), heap.end(), std::greater<>());
  };
  if (stage.compute_task >= 0) push(stage.compute_task);
  for (const int comm : stage.comm_tasks) push(comm);
}

void Engine::start(int index, double now_us) {
  const auto t = static_cast<std::size_t>(index);
  const Task& task = m_tasks[t];
  m_start_us[t] = now_us;
  const int home = m_streams[static_cast<std::size_t>(task.stream)].stage;
  if (task.kind == TaskKind::comm) {
    m_stages[static_cast<std::size_t>(home)].comm_tasks.push_back(index);
    if (task.peer_stage >= 0 && task.peer_stage != home) {
      m_stages[static_cast<std::size_t>(task.peer_stage)].comm_tasks.push_back(index);
    }
  } else {
    assert(m_stages[static_cast<std::size_t>(home)].compute_task < 0);
    m_stages[static_cast<std::size_t>(home)].compute_task = index;
  }
}

void Engine::successors(std::vector<int>& offsets, std::vector<int>& targets,
                        std::vector<int>& pending) const {
  const std::size_t n = m_tasks.size();
  pending.assign(n, 0);
  offsets.assign(n + 1, 0);
  for (const auto& [before, after] : m_edges) {
    ++offsets[static_cast<std::size_t>(before) + 1];
    ++pending[static_cast<std::size_t>(after)];
  }
  for (std::size_t i = 0; i < n; ++i) offsets[i + 1] += offsets[i];
  targets.resize(m_edges.size());
  std::vector<int> fill(offsets.begin(), offsets.end() - 1);
  for (const auto& [before, after] : m_edges) {
    targets[static_cast<std::size_t>(fill[static_cast<std::size_t>(before)]++)] = after;
  }
}

double Engine::critical_path_us() const {
  const std::size_t n = m_tasks.size();
  std::vector<int> pending, offsets, targets;
  successors(offsets, targets, pending);
  // Stream order: a task also waits for the one before it on its stream.
  std::vector<int> stream_next(n, -1);
  for (const Stream& stream : m_streams) {
    for (std::size_t k = 1; k < stream.order.size(); ++k) {
      stream_next[static_cast<std::size_t>(stream.order[k - 1])] = stream.order[k];
      ++pending[static_cast<std::size_t>(stream.order[k])];
    }
  }
  std::vector<double> ready_us(n, 0.0);
  std::vector<int> ready;  // tasks whose predecessors have all been reached (any order is topological)
  for (std::size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(static_cast<int>(i));
  }
  double longest_us = 0;
  std::size_t reached = 0;
  while (!ready.empty()) {
    const auto t = static_cast<std::size_t>(ready.back());
    ready.pop_back();
    ++reached;
    const double end_us = ready_us[t] + m_tasks[t].work_us;
    longest_us = std::max(longest_us, end_us);
    auto release = [&](int next) {
      const auto u = static_cast<std::size_t>(next);
      ready_us[u] = std::max(ready_us[u], end_us);
      if (--pending[u] == 0) ready.push_back(next);
    };
    for (int e = offsets[t]; e < offsets[t + 1]; ++e) release(targets[static_cast<std::size_t>(e)]);
    if (stream_next[t] >= 0) release(stream_next[t]);
  }
  if (reached != n) return 0.0;
  // A shared link serves at most one unit of work alone per unit of time however it is shared, so all the
  // work on one link of one stage is itself a lower bound.
  int links = 0;
  for (const Task& task : m_tasks) links = std::max(links, task.link + 1);
  std::vector<double> link_us(m_stages.size() * static_cast<std::size_t>(links),
                              0.0);  // [stage · links + link]
  for (const Task& task : m_tasks) {
    if (task.kind != TaskKind::comm || task.link < 0) continue;
    const int home = m_streams[static_cast<std::size_t>(task.stream)].stage;
    for (const int s : {home, task.peer_stage}) {
      if (s < 0 || (s == task.peer_stage && s == home)) continue;  // a stage counts a task once
      double& sum = link_us[static_cast<std::size_t>(s * links + task.link)];
      sum += task.work_us;
      longest_us = std::max(longest_us, sum);
    }
  }
  return longest_us;
}

Status Engine::run() {
  const std::size_t n = m_tasks.size();
  std::vector<int> pending, offsets, targets;
  successors(offsets, targets, pending);
  m_start_us.assign(n, -1.0);
  m_end_us.assign(n, -1.0);
  m_remaining.resize(n);
  for (std::size_t i = 0; i < n; ++i) m_remaining[i] = m_tasks[i].work_us;
  m_rate.assign(n, 1.0);
  m_version.assign(n, 0);
  m_scheduled.assign(n, false);
  std::vector<double> first_start(n, -1.0);
  for (auto& stream : m_streams) stream.next = 0;
  for (auto& stage : m_stages) stage = Stage{};

  std::vector<Event> heap;
  heap.reserve(64);
  std::vector<int> touched;
  std::vector<int> candidates;
  auto touch = [&](int stage) {
    if (stage >= 0 && std::find(touched.begin(), touched.end(), stage) == touched.end())
      touched.push_back(stage);
  };
  auto stages_of = [&](int task, auto&& fn) {
    const Task& spec = m_tasks[static_cast<std::size_t>(task)];
    const int home = m_streams[static_cast<std::size_t>(spec.stream)].stage;
    fn(home);
    if (spec.peer_stage >= 0 && spec.peer_stage != home) fn(spec.peer_stage);
  };
  auto try_start = [&](double now_us) {
    for (const int c : candidates) {
      const auto t = static_cast<std::size_t>(c);
      const Stream& stream = m_streams[static_cast<std::size_t>(m_tasks[t].stream)];
      if (pending[t] != 0 || first_start[t] >= 0 || stream.next >= stream.order.size() ||
          stream.order[stream.next] != c) {
        continue;
      }
      stages_of(c, [&](int s) {
        advance(s, now_us);
        touch(s);
      });
      first_start[t] = now_us;
      start(c, now_us);
    }
    candidates.clear();
  };

  for (const auto& stream : m_streams) {
    if (!stream.order.empty()) candidates.push_back(stream.order.front());
  }
  try_start(0.0);
  for (const int s : touched) reschedule(s, 0.0, heap);
  touched.clear();

  std::size_t finished = 0;
  double now_us = 0;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const Event event = heap.back();
    heap.pop_back();
    const auto t = static_cast<std::size_t>(event.task);
    if (event.version != m_version[t] || m_end_us[t] >= 0) continue;
    now_us = event.time_us;
    stages_of(event.task, [&](int s) {
      advance(s, now_us);
      touch(s);
    });
    // Finish.
    m_end_us[t] = now_us;
    m_remaining[t] = 0;
    ++finished;
    const Task& task = m_tasks[t];
    stages_of(event.task, [&](int s) {
      Stage& stage = m_stages[static_cast<std::size_t>(s)];
      if (stage.compute_task == event.task) stage.compute_task = -1;
      std::erase(stage.comm_tasks, event.task);
    });
    Stream& stream = m_streams[static_cast<std::size_t>(task.stream)];
    ++stream.next;
    if (stream.next < stream.order.size()) candidates.push_back(stream.order[stream.next]);
    for (int e = offsets[t]; e < offsets[t + 1]; ++e) {
      const int next = targets[static_cast<std::size_t>(e)];
      if (--pending[static_cast<std::size_t>(next)] == 0) candidates.push_back(next);
    }
    try_start(now_us);
    for (const int s : touched) reschedule(s, now_us, heap);
    touched.clear();
  }
  if (finished != n) {
    return make_error(
        ErrorCode::failure,
        fmt::format("simulation: {} of {} tasks could never start (a dependency cycle)", n - finished, n));
  }
  m_makespan_us = 0;
  for (std::size_t i = 0; i < n; ++i) m_makespan_us = std::max(m_makespan_us, m_end_us[i]);
  // Restore real start times (m_start_us served as "last advanced" while a task ran).
  m_start_us = std::move(first_start);
  for (int s = 0; s < static_cast<int>(m_stages.size()); ++s) advance(s, m_makespan_us);
  return {};
}

}  // namespace lagom::simulator
