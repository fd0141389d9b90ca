#include "simulator/trace.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace lagom::simulator {

namespace {

constexpr std::array<std::string_view, 6> k_threads{"compute", "tp", "pp", "dp", "fsdp", "emb"};

int thread_id(std::string_view stream) {
  for (std::size_t i = 0; i < k_threads.size(); ++i) {
    if (k_threads[i] == stream) return static_cast<int>(i);
  }
  return static_cast<int>(k_threads.size());
}

}  // namespace

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
    for (std::size_t t = 0; t < k_threads.size(); ++t) {
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", s},
                        {"tid", static_cast<int>(t)},
                        {"args", {{"name", std::string(k_threads[t])}}}});
    }
  }
  for (const auto& event : result.timeline) {
    events.push_back({{"name", event.name},
                      {"cat", std::string(event.category)},
                      {"ph", "X"},
                      {"ts", event.start_us},
                      {"dur", event.duration_us},
                      {"pid", event.stage},
                      {"tid", thread_id(event.stream)}});
  }
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData", {{"iteration_time_s", result.iteration_time_s}}}};
}

}  // namespace lagom::simulator
