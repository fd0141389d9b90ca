// The power figures `lagom plan` uses when the cluster file does not give them (OperationsSpec's gpu_idle_w,
// gpu_full_w, node_overhead_w): a table by GPU name (the presets' GpuSpec::name), sources per row in
// power.cpp and docs/plan.md "Energy".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/specs.h"

namespace lagom::plan {

struct PowerFigures {
  std::optional<double> gpu_idle_w, gpu_full_w, node_overhead_w;
  std::string source;  // where the defaults came from ("" when every figure came from the cluster file)
};

// The cluster's operations fields where set, else the table's row for its GPU name; a figure neither gives
// stays unset (the plan then reports no energy and says which figure is missing).
[[nodiscard]] PowerFigures power_figures(const model::ClusterSpec& cluster);

}  // namespace lagom::plan
