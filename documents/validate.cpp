// The `validate --json` document.
#include "documents/validate.h"

#include <utility>

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
  if (run.failure) row["failure"] = *run.failure;
  if (run.group) row["group"] = *run.group;
  if (!run.planned_ignored.empty()) row["planned_ignored"] = run.planned_ignored;
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
  return stamp(Kind::validate, std::move(doc));
}

}  // namespace lagom::documents
