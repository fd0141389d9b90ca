// The JSON document of `lagom plan --json` (docs/plan.md "JSON"): kind "plan" (stamped, documents/kind.h),
// every input and assumption the plan used beside its rows and its choice.
#pragma once

#include <nlohmann/json.hpp>

#include "plan/plan.h"

namespace lagom::documents {

[[nodiscard]] nlohmann::json plan_json(const plan::PlanResult& plan);

// One row (also what `lagom simulate --tokens` adds to its document under "run").
[[nodiscard]] nlohmann::json plan_row_json(const plan::PlanRow& row);

}  // namespace lagom::documents
