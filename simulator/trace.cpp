#include "simulator/trace.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "core/units.h"
#include "simulator/graph.h"
#include "simulator/op_classes.h"

namespace lagom::simulator {

namespace {

using Intervals = std::vector<std::pair<double, double>>;  // [start, end) in µs

// The idle gaps of a stage's compute stream over [0, end_us): "bubble" where no communication of the stage
// is in flight, "wait for communication" where some is.
void add_idle_gaps(int stage, Intervals compute, Intervals comm, double end_us,
                   std::vector<TimelineEvent>& out) {
  std::sort(compute.begin(), compute.end());
  std::sort(comm.begin(), comm.end());
  Intervals merged;
  for (const auto& iv : comm) {
    if (!merged.empty() && iv.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, iv.second);
    } else {
      merged.push_back(iv);
    }
  }
  Intervals gaps;
  double at = 0;
  for (const auto& iv : compute) {
    if (iv.first > at) gaps.emplace_back(at, iv.first);
    at = std::max(at, iv.second);
  }
  if (end_us > at) gaps.emplace_back(at, end_us);
  auto event = [&](const char* name, double start, double duration) {
    out.push_back({stage, StreamKind::compute, name, "bubble", start, duration});
  };
  std::size_t k = 0;
  for (const auto& [g0, g1] : gaps) {
    double cursor = g0;
    while (k < merged.size() && merged[k].second <= g0) ++k;
    for (std::size_t j = k; j < merged.size() && merged[j].first < g1; ++j) {
      const double a = std::max(g0, merged[j].first), b = std::min(g1, merged[j].second);
      if (a > cursor) event("bubble", cursor, a - cursor);
      if (b > a) event("wait for communication", a, b - a);
      cursor = std::max(cursor, b);
    }
    if (g1 > cursor) event("bubble", cursor, g1 - cursor);
  }
}

class TimelineRecorder {
 public:
  TimelineRecorder(const Graph& graph, const OpClassTable& classes) : m_graph(graph), m_classes(classes) {
    const auto stages = static_cast<std::size_t>(graph.engine.stage_count());
    m_busy_compute.resize(stages);
    m_busy_comm.resize(stages);
  }
  std::vector<TimelineEvent> record();

 private:
  [[nodiscard]] std::string class_name(int cls, double count) const;
  [[nodiscard]] std::string comm_name(const TaskInfo& info) const;
  void add_pass(int stage, const TaskInfo& info, double start, double duration);

  const Graph& m_graph;
  const OpClassTable& m_classes;
  std::vector<Intervals> m_busy_compute, m_busy_comm;  // per stage
  std::vector<TimelineEvent> m_events;
};

std::string TimelineRecorder::class_name(int cls, double count) const {
  const OpClassKey& key = m_classes.key(cls);
  std::string name = fmt::format("{} {} {}", model::to_string(key.group), model::to_string(key.collective),
                                 units::format_size(key.bytes));
  if (count != 1) name += fmt::format(" ×{}", count);
  return name;
}

// A communication task's name: what it carries, else its op class.
std::string TimelineRecorder::comm_name(const TaskInfo& info) const {
  switch (info.what) {
    case TaskWhat::transfer_forward:
    case TaskWhat::transfer_backward:
      return fmt::format("send {} mb{} c{} → stage {}",
                         info.what == TaskWhat::transfer_forward ? "activations" : "gradients",
                         info.micro_batch, info.chunk, info.peer);
    case TaskWhat::embedding:
      return fmt::format("embedding grads {} ↔ stage {}", class_name(info.op_class, info.count), info.peer);
    case TaskWhat::fsdp_gather:
      return fmt::format("gather L{} {}", info.layer_begin, class_name(info.op_class, info.count));
    default:
      return class_name(info.op_class, info.count);
  }
}

// A compute pass, and its blocking collectives as tp events (segments scaled to the pass's duration).
void TimelineRecorder::add_pass(int stage, const TaskInfo& info, double start, double duration) {
  const std::string base = fmt::format("{} mb{} c{} L{}-{}", info.what == TaskWhat::forward ? "F" : "B",
                                       info.micro_batch, info.chunk, info.layer_begin, info.layer_end - 1);
  m_events.push_back({stage, StreamKind::compute, base, "compute", start, duration});
  const PassPlan& pass = m_graph.passes[static_cast<std::size_t>(info.pass)];
  const double alone = pass.total_us();
  const double scale = alone > 0 ? duration / alone : 0;
  double at = start;
  for (const Segment& segment : pass.segments) {
    const double d = segment.us * scale;
    if (segment.op_class >= 0) {
      m_events.push_back(
          {stage, StreamKind::tp, segment.name + " " + class_name(segment.op_class, 1), "comm", at, d});
    }
    at += d;
  }
}

std::vector<TimelineEvent> TimelineRecorder::record() {
  const Engine& engine = m_graph.engine;
  for (int t = 0; t < static_cast<int>(engine.task_count()); ++t) {
    const Task& task = engine.task(t);
    const TaskInfo& info = m_graph.info[static_cast<std::size_t>(task.label)];
    const int stage = engine.stream_stage(task.stream);
    const double start = engine.start_us(t), end = engine.end_us(t);
    const double duration = end - start;
    if (info.what == TaskWhat::forward || info.what == TaskWhat::backward) {
      m_busy_compute[static_cast<std::size_t>(stage)].emplace_back(start, end);
      add_pass(stage, info, start, duration);
    } else if (info.what == TaskWhat::optimizer) {
      m_busy_compute[static_cast<std::size_t>(stage)].emplace_back(start, end);
      m_events.push_back({stage, StreamKind::compute, "optimizer step", "optimizer", start, duration});
    } else {
      m_busy_comm[static_cast<std::size_t>(stage)].emplace_back(start, end);
      if (info.peer >= 0) m_busy_comm[static_cast<std::size_t>(info.peer)].emplace_back(start, end);
      m_events.push_back({stage, info.stream, comm_name(info), "comm", start, duration});
    }
  }
  for (int s = 0; s < engine.stage_count(); ++s) {
    add_idle_gaps(s, std::move(m_busy_compute[static_cast<std::size_t>(s)]),
                  std::move(m_busy_comm[static_cast<std::size_t>(s)]), engine.makespan_us(), m_events);
  }
  return std::move(m_events);
}

}  // namespace

std::vector<TimelineEvent> record_timeline(const Graph& graph, const OpClassTable& classes) {
  return TimelineRecorder(graph, classes).record();
}

nlohmann::json chrome_trace(const SimulationResult& result) {
  nlohmann::json events = nlohmann::json::array();
  int stages = static_cast<int>(result.stages.size());
  for (const auto& event : result.timeline) stages = std::max(stages, event.stage + 1);
  for (int s = 0; s < stages; ++s) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", s},
                      {"tid", 0},
                      {"args", {{"name", "stage " + std::to_string(s)}}}});
    events.push_back(
        {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", s}, {"tid", 0}, {"args", {{"sort_index", s}}}});
    for (std::size_t t = 0; t < k_stream_kinds; ++t) {
      events.push_back(
          {{"name", "thread_name"},
           {"ph", "M"},
           {"pid", s},
           {"tid", static_cast<int>(t)},
           {"args", {{"name", std::string(k_stream_kind_names.name(static_cast<StreamKind>(t)))}}}});
    }
  }
  for (const auto& event : result.timeline) {
    events.push_back({{"name", event.name},
                      {"cat", std::string(event.category)},
                      {"ph", "X"},
                      {"ts", event.start_us},
                      {"dur", event.duration_us},
                      {"pid", event.stage},
                      {"tid", static_cast<int>(event.stream)}});
  }
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData", {{"iteration_time_s", result.iteration_time_s}}}};
}

}  // namespace lagom::simulator
