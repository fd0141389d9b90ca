// The `check --json` document.
#include "documents/check.h"

#include <utility>

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

}  // namespace lagom::documents
