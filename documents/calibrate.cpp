// The `calibrate --json` document.
#include "documents/calibrate.h"

#include <utility>

#include "documents/kind.h"

namespace lagom::documents {

namespace {

nlohmann::json stats_json(const CalibrateStats& s) {
  return {{"runs", s.runs},
          {"failed", s.failed},
          {"mape_pct", s.mape_pct},
          {"mean_signed_error_pct", s.mean_signed_error_pct},
          {"worst_error_pct", s.worst_error_pct}};
}

nlohmann::json constants_json(const std::vector<CalibrateConstantRow>& constants) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : constants) {
    out.push_back({{"key", c.key},
                   {"meaning", c.meaning},
                   {"min", c.min},
                   {"max", c.max},
                   {"before", c.before},
                   {"after", c.after},
                   {"relative_stderr", c.relative_stderr},
                   {"constrained", c.constrained},
                   {"in_range", c.in_range}});
  }
  return out;
}

nlohmann::json cross_validation_json(const CalibrateCrossValidation& cv) {
  nlohmann::json folds = nlohmann::json::array();
  for (const auto& fold : cv.folds) {
    folds.push_back({{"left_out", fold.left_out},
                     {"held_out", stats_json(fold.held_out)},
                     {"fit_after", stats_json(fold.fit_after)},
                     {"constants", constants_json(fold.constants)},
                     {"accepted", fold.accepted}});
  }
  return {{"by", "model"},
          {"folds", std::move(folds)},
          {"mape_pct", cv.mape_pct},
          {"mean_signed_error_pct", cv.mean_signed_error_pct},
          {"runs", cv.runs}};
}

}  // namespace

nlohmann::json to_json(const CalibrateDocument& document) {
  nlohmann::json doc = {{"cluster", document.cluster},
                        {"runs", document.runs},
                        {"other_clusters_left_out", document.other_clusters_left_out},
                        {"constants", constants_json(document.constants)},
                        {"before", stats_json(document.before)},
                        {"after", stats_json(document.after)},
                        {"evaluations", document.evaluations},
                        {"accepted", document.accepted}};
  if (document.refusal) doc["refusal"] = *document.refusal;
  if (document.cross_validation) doc["cross_validation"] = cross_validation_json(*document.cross_validation);
  if (document.out) doc["out"] = *document.out;
  return stamp(Kind::calibrate, std::move(doc));
}

}  // namespace lagom::documents
