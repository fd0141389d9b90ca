// The `check --json` document (kind "check"; docs/cli.md#lagom-check lists its fields): the metrics of two
// documents of one kind paired, each with its verdict (check/regression.h judges them), its writer and its
// reader (every metric compared with its verdict, and whether the check passed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
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

// One metrics[] entry. baseline, current and delta_pct are none where the writer wrote null (a metric
// missing on one side).
struct CheckedMetricView {
  std::string metric;  // e.g. "busbw_GBps allreduce 8r 64M"
  std::string better;  // "lower" or "higher"
  std::optional<double> baseline, current, delta_pct;
  double tolerance_pct = 0;
  std::string status;  // "ok", "improved", "regressed", "missing", "added"
};
struct CheckView {
  // The kind of the documents compared ("simulate", "tune", "profile"): `compared` since check documents
  // carry their own kind, `kind` before (version 0).
  std::string compared;
  bool passed = false;
  std::int64_t regressions = 0;
  std::vector<CheckedMetricView> metrics;
};
// Every field is checked by the one field reader: invalid_input "<source>: <path>: <why>" (e.g.
// "c.json: metrics[2].tolerance_pct: required"); fields it does not read are left alone.
Result<CheckView> read_check(const nlohmann::json& document, const std::string& source);

}  // namespace lagom::documents
