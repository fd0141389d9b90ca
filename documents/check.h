// The `check --json` document (kind "check", docs/cli.md#lagom-check): the metrics of two documents of one
// kind paired, each with its verdict (check/regression.h judges them; this is what it writes).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "documents/kind.h"
#include "documents/metrics.h"

namespace lagom::documents {

// A metric's verdict as the document spells it ("regressed", "missing": lower case, unlike the table).
enum class CheckStatus { ok, improved, regressed, missing, added };

// One metric of `metrics[]`.
struct CheckMetricRow {
  std::string metric;  // the instance, e.g. "busbw_GBps allreduce 8r 64M"
  std::string field;   // the JSON field tolerances name, e.g. "busbw_GBps"
  Better better = Better::lower;
  std::optional<double> baseline, current;  // null: absent on that side
  std::optional<double> delta_pct;          // null unless both sides are present
  double tolerance_pct = 0;
  CheckStatus status = CheckStatus::ok;
};

struct CheckDocument {
  Kind compared = Kind::simulate;  // the kind of the two documents compared
  int regressions = 0;             // regressed + missing; `passed` is regressions == 0
  std::vector<CheckMetricRow> metrics;
};

// Stamped with its kind and version.
nlohmann::json to_json(const CheckDocument& document);

}  // namespace lagom::documents
