// The `check --predicted --json` document.
#include "documents/check_predicted.h"

#include <utility>

#include "documents/kind.h"

namespace lagom::documents {

namespace {

template <typename T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json rule_json(const PredictedRule& rule) {
  return {{"line", or_null(rule.line)}, {"min_bytes", rule.min_bytes}, {"max_bytes", or_null(rule.max_bytes)},
          {"algo", rule.algo},          {"proto", rule.proto},         {"channels", rule.channels}};
}

}  // namespace

nlohmann::json to_json(const CheckPredictedDocument& document) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& op : document.op_classes) {
    ops.push_back({{"name", op.name},
                   {"collective", op.collective},
                   {"group", op.group},
                   {"bytes", op.bytes},
                   {"ranks", op.ranks},
                   {"nodes", op.nodes},
                   {"rule", rule_json(op.rule)},
                   {"ran", op.ran},
                   {"records", op.records},
                   {"predicted_time_us", op.predicted_time_us},
                   {"measured_time_us", or_null(op.measured_time_us)},
                   {"delta_pct", or_null(op.delta_pct)},
                   {"status", op.status}});
  }
  return stamp(Kind::check_predicted, {{"config", document.config},
                                       {"run_id", document.run_id},
                                       {"tolerance_pct", document.tolerance_pct},
                                       {"records", document.records},
                                       {"unmatched", document.unmatched},
                                       {"passed", document.passed},
                                       {"op_classes", std::move(ops)}});
}

}  // namespace lagom::documents
