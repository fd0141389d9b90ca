// The `check --json` document: written, and read back.
#include "documents/check.h"

#include <limits>
#include <utility>

#include "core/json_fields.h"
#include "documents/bounds.h"
#include "documents/kind.h"

namespace lagom::documents {

namespace {

const char* status_name(CheckStatus status) {
  switch (status) {
    case CheckStatus::ok:
      return "ok";
    case CheckStatus::improved:
      return "improved";
    case CheckStatus::regressed:
      return "regressed";
    case CheckStatus::missing:
      return "missing";
    case CheckStatus::added:
      return "added";
  }
  return "?";
}

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

}  // namespace

nlohmann::json to_json(const CheckDocument& document) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& m : document.metrics) {
    metrics.push_back({{"metric", m.metric},
                       {"field", m.field},
                       {"better", m.better == Better::lower ? "lower" : "higher"},
                       {"baseline", optional_number(m.baseline)},
                       {"current", optional_number(m.current)},
                       {"delta_pct", optional_number(m.delta_pct)},
                       {"tolerance_pct", m.tolerance_pct},
                       {"status", status_name(m.status)}});
  }
  // `compared` names the kind of the two documents compared: before documents carried a kind, `kind` held
  // it (documents/kind.h tells such a file by its other fields).
  return stamp(Kind::check, {{"compared", std::string(to_string(document.compared))},
                             {"passed", document.regressions == 0},
                             {"regressions", document.regressions},
                             {"metrics", std::move(metrics)}});
}

namespace {

Result<CheckedMetricView> read_metric(const FieldReader& r) {
  CheckedMetricView m;
  // null where the metric is missing on one side (and then no delta).
  LAGOM_TRY(m.delta_pct, read_optional_change_pct(r, "delta_pct"));
  LAGOM_TRY(m.tolerance_pct, read_quantity(r, "tolerance_pct"));
  LAGOM_TRY(m.status, r.string("status", std::nullopt));
  LAGOM_TRY(m.metric, r.string("metric", std::nullopt));
  LAGOM_TRY(m.better, r.string("better", std::nullopt));
  LAGOM_TRY(m.baseline, read_optional_quantity(r, "baseline"));
  LAGOM_TRY(m.current, read_optional_quantity(r, "current"));
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
