// The `calibrate --json` document (kind "calibrate", docs/calibrate.md): the constants fitted with their
// range and error, the error over the runs before and after, and the leave-one-model-out folds
// (validate/calibrate.h fits them).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lagom::documents {

// The errors over a set of runs, percent.
struct CalibrateStats {
  int runs = 0, failed = 0;
  double mape_pct = 0, mean_signed_error_pct = 0, worst_error_pct = 0;
};

// One physical constant fitted (model/physical_constants.h).
struct CalibrateConstantRow {
  std::string key, meaning;
  double min = 0, max = 0;  // the range a real machine reaches
  double before = 0, after = 0;
  double relative_stderr = 0;
  bool constrained = true;  // false: the runs do not depend on it
  bool in_range = true;
};

// One fold: fitted without `left_out`'s runs, which it then predicts.
struct CalibrateFold {
  std::string left_out;
  CalibrateStats held_out, fit_after;
  std::vector<CalibrateConstantRow> constants;
  bool accepted = true;
};

struct CalibrateCrossValidation {
  std::vector<CalibrateFold> folds;  // one per model
  // Over every held-out run of the folds.
  double mape_pct = 0, mean_signed_error_pct = 0;
  int runs = 0;
};

struct CalibrateDocument {
  std::string cluster;
  std::size_t runs = 0, other_clusters_left_out = 0;
  std::vector<CalibrateConstantRow> constants;
  CalibrateStats before, after;
  int evaluations = 0;  // whole passes over the runs
  bool accepted = true;
  std::optional<std::string> refusal;                        // why not accepted
  std::optional<CalibrateCrossValidation> cross_validation;  // by model; none without it
  std::optional<std::string> out;                            // the cluster file written (--out)
};

// Stamped with its kind and version.
nlohmann::json to_json(const CalibrateDocument& document);

}  // namespace lagom::documents
