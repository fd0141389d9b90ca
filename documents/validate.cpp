// The `validate --json` document, read back.
#include "documents/validate.h"

#include <limits>
#include <utility>

#include "core/json_fields.h"

namespace lagom::documents {

namespace {

constexpr std::int64_t k_most = std::numeric_limits<std::int64_t>::max();

Result<ValidatedRunView> read_run(const FieldReader& r) {
  ValidatedRunView run;
  // Absent for a failed run (no prediction) or one given in tokens/s (no measured time).
  LAGOM_TRY(run.measured_iteration_s, r.optional_number("measured_iteration_s", true, true));
  LAGOM_TRY(run.predicted_iteration_s, r.optional_number("predicted_iteration_s", true, true));
  LAGOM_TRY(run.line, r.integer("line", std::nullopt, 0, k_most));
  LAGOM_TRY(run.model, r.string("model", std::nullopt));
  LAGOM_TRY(run.gpus, r.integer("gpus", std::nullopt, 0));
  LAGOM_TRY(run.parallel, r.string("parallel", std::nullopt));
  return run;
}

Result<ErrorStatsView> read_stats(const FieldReader& r) {
  ErrorStatsView s;
  LAGOM_TRY(s.runs, r.integer("runs", std::nullopt, 0, k_most));
  LAGOM_TRY(s.failed, r.integer("failed", std::nullopt, 0, k_most));
  LAGOM_TRY(s.mape_pct, r.finite("mape_pct", std::nullopt));
  LAGOM_TRY(s.median_abs_error_pct, r.finite("median_abs_error_pct", std::nullopt));
  LAGOM_TRY(s.mean_signed_error_pct, r.finite("mean_signed_error_pct", std::nullopt));
  LAGOM_TRY(s.worst_error_pct, r.finite("worst_error_pct", std::nullopt));
  return s;
}

// groups: {by: {name: statistics}}, in the document's order.
Result<std::vector<ErrorGroupView>> read_groups(const FieldReader& groups, const nlohmann::json& object) {
  std::vector<ErrorGroupView> out;
  for (const auto& by : object.items()) {
    LAGOM_TRY(const FieldReader named, groups.object(by.key()));
    for (const auto& name : by.value().items()) {
      LAGOM_TRY(const FieldReader stats, named.object(name.key()));
      ErrorGroupView group;
      group.by = by.key();
      group.name = name.key();
      LAGOM_TRY(group.stats, read_stats(stats));
      out.push_back(std::move(group));
    }
  }
  return out;
}

}  // namespace

Result<ValidateView> read_validate(const nlohmann::json& document, const std::string& source) {
  LAGOM_TRY_STATUS(require_object(document, source));
  // Later versions may add fields: the ones read are checked, the others left alone.
  const FieldReader top(document, source, "", UnknownFields::ignore);
  ValidateView v;
  LAGOM_TRY(const nlohmann::json* runs, top.array("runs"));
  for (std::size_t i = 0; i < runs->size(); ++i) {
    LAGOM_TRY(const FieldReader run, top.element("runs", *runs, i));
    LAGOM_TRY(ValidatedRunView r, read_run(run));
    v.runs.push_back(std::move(r));
  }
  LAGOM_TRY(const FieldReader groups, top.object("groups"));
  LAGOM_TRY(v.groups, read_groups(groups, top.at("groups")));
  LAGOM_TRY(const FieldReader overall, top.object("overall"));
  LAGOM_TRY(v.overall, read_stats(overall));
  LAGOM_TRY(v.failed, top.integer("failed", std::nullopt, 0, k_most));
  LAGOM_TRY(v.passed, top.boolean("passed", std::nullopt));
  return v;
}

}  // namespace lagom::documents
