// `lagom calibrate`: fits a cluster's physical constants (model/physical_constants.h) to measured runs
// (a runs file, docs/validate.md) and checks the fit by leaving one model out.
//
// The fit minimises Σ ln(predicted/measured)² over the runs (a relative error, symmetric in over- and
// under-prediction) with Levenberg–Marquardt on the logarithm of each constant (so a trial value is never
// negative), the Jacobian by finite differences of whole simulations. A fitted value outside the range a
// real machine reaches is refused: the model would be matching the runs for the wrong reason.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/progress.h"
#include "model/physical_constants.h"
#include "model/specs.h"
#include "validate/validate.h"

namespace lagom::validate {

struct FittedConstant {
  const model::PhysicalConstant* constant = nullptr;
  double before = 0, after = 0;
  double relative_stderr = 0;  // standard error of the fitted value ÷ the value (from the Jacobian)
  bool constrained = true;     // false: the runs do not depend on it (held at its value)
  bool in_range = true;        // after ∈ [min, max]
};

struct CalibrationFit {
  std::vector<FittedConstant> constants;
  model::ClusterSpec cluster;                 // the base cluster with the fitted values
  ErrorStats before, after;                   // over the runs fitted
  std::vector<ValidatedRun> runs_after;       // each run re-simulated on the fitted cluster
  int evaluations = 0;                        // whole passes over the runs
  [[nodiscard]] bool accepted() const;        // every constrained constant in range
  [[nodiscard]] std::string refusal() const;  // why not accepted ("" when accepted)
};

struct CrossValidationFold {
  std::string left_out;  // the model left out
  CalibrationFit fit;    // fitted on the other models' runs
  ErrorStats held_out;   // the left-out runs predicted with that fit
};

// Fits `keys` (all registered constants when empty) of `base` to `runs` (each simulated on `base` with its
// own node count). Runs that cannot be simulated are left out of the fit (they stay failed in the stats).
// Errors: an unknown key, no run that simulates.
Result<CalibrationFit> fit_constants(const std::vector<const PreparedRun*>& runs,
                                     const model::ClusterSpec& base, const std::vector<std::string>& keys,
                                     int threads);

// One fold per model among `runs` (needs at least two models).
// `progress`, when given, gets one step per fold.
Result<std::vector<CrossValidationFold>> cross_validate_by_model(const std::vector<const PreparedRun*>& runs,
                                                                 const model::ClusterSpec& base,
                                                                 const std::vector<std::string>& keys,
                                                                 int threads, Progress* progress = nullptr);

// `lagom calibrate`'s whole run: the rows of `files` measured on `base` (by its name; rows of other
// clusters say nothing about it and are counted, not fitted), fitted, and with `leave_one_model_out` one
// fold per model. invalid_input when no row is of `base`. Each phase (reading, the fit, the folds) is a
// phase of `progress` (a piped run says where it is: the fits take minutes on large runs files).
struct CalibrationReport {
  std::string cluster;             // base's name
  std::size_t runs = 0;            // rows of this cluster, fitted
  std::size_t other_clusters = 0;  // rows of other clusters, left out
  CalibrationFit fit;
  std::vector<CrossValidationFold> folds;  // empty without cross-validation
  // Over every held-out run of the folds, each predicted by the fit that never saw its model.
  double cv_mape_pct = 0, cv_bias_pct = 0;
  int cv_runs = 0;
};
Result<CalibrationReport> calibrate_runs(const std::vector<std::string>& files,
                                         const model::ClusterSpec& base, const std::vector<std::string>& keys,
                                         bool leave_one_model_out, int threads, Progress& progress);
// The fitted cluster as `--out` writes it: base's node count, its description saying what moved.
model::ClusterSpec calibrated_cluster(const CalibrationReport& report, const model::ClusterSpec& base);

// `base` with the row's node count, as the row's own cluster has it.
model::ClusterSpec cluster_for_run(const PreparedRun& run, const model::ClusterSpec& base);

}  // namespace lagom::validate
