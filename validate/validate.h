// `lagom validate`: a user's measured runs (validate/runs_csv.h, docs/validate.md) against the iteration
// model. Each row is simulated with the flags its columns name, exactly as `lagom simulate` would run them,
// and its prediction compared with the measurement.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "documents/comm_config.h"
#include "inputs/cluster_source.h"
#include "inputs/scenario.h"
#include "model/accuracy.h"
#include "model/specs.h"
#include "validate/runs_csv.h"

namespace lagom::validate {

struct ValidatedRun {
  std::string file;
  int line = 0;
  std::string model, cluster, precision, parallel;  // parallel: "tp2 pp4 cp1 ep1 vpp1"
  std::string group, note;                          // the optional columns
  int gpus = 0;
  double measured_s = 0, predicted_s = 0;  // iteration time
  bool fits_in_memory = true;
  std::string failure;               // why the model could not simulate the row ("" = simulated)
  std::vector<std::string> planned;  // planned columns with a value, "column=value" (not modelled yet)
  // The row's columns that cannot act on its strategy (inputs/flag_context.h: e.g. a pipeline schedule at
  // pp 1), as the message simulate would refuse them with; "" = none. Measured rows record the settings
  // their job carried, so a runs file is not refused for them: the row says it.
  std::string no_effect;
  model::RegimeKey regime;  // the validated regime the run belongs to (model/accuracy.h)
  // Signed error of the prediction, percent of the measurement.
  [[nodiscard]] double error_pct() const { return 100.0 * (predicted_s - measured_s) / measured_s; }
};

struct ErrorStats {
  int runs = 0;    // simulated runs counted
  int failed = 0;  // runs the model could not simulate (not counted in the errors)
  double mape_pct = 0, median_abs_pct = 0, mean_signed_pct = 0;
  double worst_pct = 0;  // the largest |error|, signed
};
ErrorStats error_stats(const std::vector<const ValidatedRun*>& runs);

// One row read and checked, its inputs loaded, ready to simulate (on its own cluster, or on a variant of
// it: calibrate re-simulates the rows with the constants it fits).
struct PreparedRun {
  ValidatedRun report;  // file, line, group, note, planned; model, GPUs, precision, parallel as requested
  model::WorkloadSpec workload;
  model::Strategy strategy;      // as the columns give it (resolved by the simulation)
  inputs::ClusterSource source;  // the row's cluster (nodes from its GPUs) and its profile fits
  simulator::CommAssignment assignment;
  std::string comm_config;               // the row's lagom-config.json ("" = none)
  inputs::StrategyFlags strategy_flags;  // the strategy columns as given (for the no-effect check)
  double measured = 0;                   // the measured column's value
  bool measured_is_tokens_per_s = false;
};

// Reads and checks every row of `table` and loads what each names (errors as validate_runs).
Result<std::vector<PreparedRun>> prepare_runs(const RunsTable& table);
// Simulates one prepared row on `cluster` (its own, source.cluster, or a variant of it): a strategy the
// model cannot build or simulate gives the run a `failure`.
ValidatedRun simulate_run(const PreparedRun& prepared, const model::ClusterSpec& cluster);

// Reads and checks every row of `table` (errors name file, line and column: a column no flag has, a value
// the flag refuses, a missing or non-positive measurement), then simulates the rows: a model or cluster
// that cannot be read is an input error naming the line; a row the model cannot build on them (a strategy
// that does not divide the shapes) or simulate is kept with its `failure`. Model and cluster
// values that name files are read relative to the table's folder.
Result<std::vector<ValidatedRun>> validate_runs(const RunsTable& table);

// The simulated runs as the regime computation takes them (model::compute_regimes): the file by its name.
std::vector<model::ResidualRun> residual_runs(const std::vector<ValidatedRun>& runs);

// Per-group statistics: by model, precision, cluster, parallel dimensions and the `group` column.
std::map<std::string, std::map<std::string, ErrorStats>> grouped_stats(const std::vector<ValidatedRun>& runs);

}  // namespace lagom::validate
