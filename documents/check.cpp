// The `check --json` document, read back.
#include "documents/check.h"

#include <limits>
#include <utility>

#include "core/json_fields.h"
#include "documents/kind.h"

namespace lagom::documents {

namespace {

Result<CheckedMetricView> read_metric(const FieldReader& r) {
  CheckedMetricView m;
  // null where the metric is missing on one side (and then no delta).
  LAGOM_TRY(m.delta_pct, r.optional_number("delta_pct", true, true));
  LAGOM_TRY(m.tolerance_pct, r.finite("tolerance_pct", std::nullopt));
  LAGOM_TRY(m.status, r.string("status", std::nullopt));
  LAGOM_TRY(m.metric, r.string("metric", std::nullopt));
  LAGOM_TRY(m.better, r.string("better", std::nullopt));
  LAGOM_TRY(m.baseline, r.optional_number("baseline", true, true));
  LAGOM_TRY(m.current, r.optional_number("current", true, true));
  return m;
}

}  // namespace

Result<CheckView> read_check(const nlohmann::json& document, const std::string& source) {
  LAGOM_TRY_STATUS(require_object(document, source));
  // Later versions may add fields: the ones read are checked, the others left alone.
  const FieldReader top(document, source, "", UnknownFields::ignore);
  CheckView v;
  LAGOM_TRY(const nlohmann::json* metrics, top.array("metrics"));
  for (std::size_t i = 0; i < metrics->size(); ++i) {
    LAGOM_TRY(const FieldReader metric, top.element("metrics", *metrics, i));
    LAGOM_TRY(CheckedMetricView m, read_metric(metric));
    v.metrics.push_back(std::move(m));
  }
  // Version 0 named the kind compared in `kind`, before check documents carried their own.
  LAGOM_TRY(v.compared, top.string(top.has(k_version_field) ? "compared" : k_kind_field, std::nullopt));
  LAGOM_TRY(v.passed, top.boolean("passed", std::nullopt));
  LAGOM_TRY(v.regressions,
            top.integer("regressions", std::nullopt, 0, std::numeric_limits<std::int64_t>::max()));
  return v;
}

}  // namespace lagom::documents
