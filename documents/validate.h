// The `validate --json` document (kind "validate"; docs/validate.md lists its fields), as read back: the
// runs with their measured and predicted iteration times, and the error statistics overall and per group.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace lagom::documents {

// One runs[] entry: the row of the runs table and its times. A failed run has no prediction; one given in
// tokens/s whose shape the model could not resolve has no measured time either.
struct ValidatedRunView {
  std::int64_t line = 0;  // of the runs table
  std::string model;
  int gpus = 0;
  std::string parallel;  // as the table gave it, e.g. "tp1 pp1 cp2 ep1 vpp1"
  std::optional<double> measured_iteration_s, predicted_iteration_s;
};
// The error statistics of a set of runs (overall, and each group), percentages.
struct ErrorStatsView {
  std::int64_t runs = 0, failed = 0;
  double median_abs_error_pct = 0, mape_pct = 0, mean_signed_error_pct = 0, worst_error_pct = 0;
};
// groups.<by>.<name>: the statistics of the runs sharing `name` in the column `by` (e.g. model, cluster).
struct ErrorGroupView {
  std::string by, name;
  ErrorStatsView stats;
};
struct ValidateView {
  std::vector<ValidatedRunView> runs;
  std::vector<ErrorGroupView> groups;  // by `by`, then `name`, as the document orders them
  ErrorStatsView overall;
  std::int64_t failed = 0;
  bool passed = false;
};
// Every field is checked by the one field reader: invalid_input "<source>: <path>: <why>" (e.g.
// "v.json: runs[3].gpus: required"); fields it does not read are left alone.
Result<ValidateView> read_validate(const nlohmann::json& document, const std::string& source);

}  // namespace lagom::documents
