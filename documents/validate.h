// The `validate --json` document (kind "validate"; docs/validate.md lists its fields): measured runs against
// the iteration model, per run and aggregated overall and per group (validate/validate.h computes them), its
// writer and its reader (what `lagom report` draws).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/accuracy.h"

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
  std::optional<std::string> regime;  // the validated regime of a simulated run (model/accuracy.h)
  std::optional<std::string> failure;
  std::optional<std::string> group, note;
  std::vector<std::string> planned_ignored;  // "column=value"; absent when empty
  std::optional<std::string> no_effect;      // the row's columns that cannot act on it; absent when none
};

struct ValidateDocument {
  std::vector<ValidateRunRow> runs;
  ValidateStats overall;
  std::map<std::string, std::map<std::string, ValidateStats>> groups;  // by → group → stats
  int failed = 0, not_fitting = 0;
  bool passed = true;
  std::optional<double> max_mape_pct;   // --max-mape, when given
  std::vector<model::Regime> accuracy;  // the validated regimes of these runs (documents/accuracy.h)
  // The share of the runs whose 90% bounds, computed without the run's own model, hold them; null when no
  // run could be counted.
  std::optional<double> held_out_coverage;
  int held_out_runs = 0;
};

// Stamped with its kind and version.
nlohmann::json to_json(const ValidateDocument& document);

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
