// The `validate --json` document (kind "validate", docs/validate.md): measured runs against the iteration
// model, per run and aggregated overall and per group (validate/validate.h computes them).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lagom::documents {

// The errors over a set of runs, percent.
struct ValidateStats {
  int runs = 0, failed = 0;
  double median_abs_error_pct = 0, mape_pct = 0, mean_signed_error_pct = 0, worst_error_pct = 0;
};

// One run (a row of a runs file). A run the model could not simulate has `failure` and no prediction.
struct ValidateRunRow {
  std::string file;
  int line = 0;
  std::string model, cluster;
  int gpus = 0;
  std::string precision, parallel;
  std::optional<double> measured_iteration_s;  // none: given in tokens/s, and the shape not resolved
  std::optional<double> predicted_iteration_s, error_pct;
  std::optional<bool> fits_in_memory;
  std::optional<std::string> failure;
  std::optional<std::string> group, note;
  std::vector<std::string> planned_ignored;  // "column=value"; absent when empty
};

struct ValidateDocument {
  std::vector<ValidateRunRow> runs;
  ValidateStats overall;
  std::map<std::string, std::map<std::string, ValidateStats>> groups;  // by → group → stats
  int failed = 0, not_fitting = 0;
  bool passed = true;
  std::optional<double> max_mape_pct;  // --max-mape, when given
};

// Stamped with its kind and version.
nlohmann::json to_json(const ValidateDocument& document);

}  // namespace lagom::documents
