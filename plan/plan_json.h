// The JSON document of `lagom plan --json` (docs/plan.md "JSON"): kind "plan", version 1, every input and
// assumption the plan used beside its rows and its choice.
#pragma once

#include <nlohmann/json.hpp>

#include "plan/plan.h"

namespace lagom::plan {

inline constexpr int k_plan_json_version = 1;

[[nodiscard]] nlohmann::json plan_json(const PlanResult& plan);

// One row (also what `lagom simulate --tokens` adds to its document under "run").
[[nodiscard]] nlohmann::json plan_row_json(const PlanRow& row);

}  // namespace lagom::plan
