// The `validate --json` document: written, and read back.
#include "documents/validate.h"

#include <limits>
#include <utility>

#include "core/json_fields.h"
#include "documents/accuracy.h"
#include "documents/bounds.h"
#include "documents/kind.h"

namespace lagom::documents {

namespace {

nlohmann::json stats_json(const ValidateStats& s) {
  return {{"runs", s.runs},
          {"failed", s.failed},
          {"median_abs_error_pct", s.median_abs_error_pct},
          {"mape_pct", s.mape_pct},
          {"mean_signed_error_pct", s.mean_signed_error_pct},
          {"worst_error_pct", s.worst_error_pct}};
}

nlohmann::json run_json(const ValidateRunRow& run) {
  nlohmann::json row = {{"file", run.file},        {"line", run.line}, {"model", run.model},
                        {"cluster", run.cluster},  {"gpus", run.gpus}, {"precision", run.precision},
                        {"parallel", run.parallel}};
  if (run.measured_iteration_s) row["measured_iteration_s"] = *run.measured_iteration_s;
  if (run.predicted_iteration_s) row["predicted_iteration_s"] = *run.predicted_iteration_s;
  if (run.error_pct) row["error_pct"] = *run.error_pct;
  if (run.fits_in_memory) row["fits_in_memory"] = *run.fits_in_memory;
  if (run.regime) row["regime"] = *run.regime;
  if (run.failure) row["failure"] = *run.failure;
  if (run.group) row["group"] = *run.group;
  if (!run.planned_ignored.empty()) row["planned_ignored"] = run.planned_ignored;
  if (run.no_effect) row["no_effect"] = *run.no_effect;
  if (run.note) row["note"] = *run.note;
  return row;
}

}  // namespace

nlohmann::json to_json(const ValidateDocument& document) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : document.runs) runs.push_back(run_json(run));
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& [by, named] : document.groups) {
    for (const auto& [name, stats] : named) groups[by][name] = stats_json(stats);
  }
  nlohmann::json doc = {
      {"runs", std::move(runs)},   {"overall", stats_json(document.overall)}, {"groups", std::move(groups)},
      {"failed", document.failed}, {"not_fitting", document.not_fitting},     {"passed", document.passed}};
  if (document.max_mape_pct) doc["max_mape_pct"] = *document.max_mape_pct;
  doc["accuracy"] = regimes_json(document.accuracy);
  doc["held_out_coverage"] =
      document.held_out_coverage ? nlohmann::json(*document.held_out_coverage) : nlohmann::json();
  doc["held_out_runs"] = document.held_out_runs;
  return stamp(Kind::validate, std::move(doc));
}

namespace {

constexpr std::int64_t k_most = std::numeric_limits<std::int64_t>::max();

Result<ValidatedRunView> read_run(const FieldReader& r) {
  ValidatedRunView run;
  // Absent for a failed run (no prediction) or one given in tokens/s (no measured time).
  LAGOM_TRY(run.measured_iteration_s, read_optional_quantity(r, "measured_iteration_s"));
  LAGOM_TRY(run.predicted_iteration_s, read_optional_quantity(r, "predicted_iteration_s"));
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
  LAGOM_TRY(s.mape_pct, read_quantity(r, "mape_pct"));
  LAGOM_TRY(s.median_abs_error_pct, read_quantity(r, "median_abs_error_pct"));
  LAGOM_TRY(s.mean_signed_error_pct, read_change_pct(r, "mean_signed_error_pct"));
  LAGOM_TRY(s.worst_error_pct, read_change_pct(r, "worst_error_pct"));
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
