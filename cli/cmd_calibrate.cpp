// `lagom calibrate RUNS.csv... --cluster X [--out cluster.json]`: fits the cluster's physical constants to
// measured runs (validate/calibrate.h), reports the error before and after and a leave-one-model-out
// cross-validated error, and writes a cluster spec that `simulate --cluster` takes (docs/calibrate.md).
#include <thread>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/output.h"
#include "documents/calibrate.h"
#include "inputs/cluster_source.h"
#include "validate/calibrate.h"
#include "validate/runs_csv.h"

namespace lagom::cli {

using inputs::ClusterSource;
using inputs::resolve_cluster_source;
using validate::calibrate_runs;
using validate::calibrated_cluster;
using validate::CalibrationFit;
using validate::CalibrationReport;
using validate::CrossValidationFold;
using validate::ErrorStats;

namespace {

struct CalibrateFlags {
  std::vector<std::string> files;
  std::string cluster, out, cv = "model";
  std::vector<std::string> fit;
  int threads = 0;
};

std::string signed_pct(double value) {
  return fmt::format("{:+.1f}", value);
}

documents::CalibrateStats stats_row(const ErrorStats& s) {
  return {s.runs, s.failed, s.mape_pct, s.mean_signed_pct, s.worst_pct};
}

std::vector<documents::CalibrateConstantRow> constant_rows(const CalibrationFit& fit) {
  std::vector<documents::CalibrateConstantRow> rows;
  for (const auto& c : fit.constants) {
    rows.push_back({std::string(c.constant->key), std::string(c.constant->meaning), c.constant->min,
                    c.constant->max, c.before, c.after, c.relative_stderr, c.constrained, c.in_range});
  }
  return rows;
}

// The `calibrate --json` document of `report` (documents/calibrate.h).
documents::CalibrateDocument calibrate_document(const CalibrationReport& report) {
  const CalibrationFit& fit = report.fit;
  documents::CalibrateDocument document;
  document.cluster = report.cluster;
  document.runs = report.runs;
  document.other_clusters_left_out = report.other_clusters;
  document.constants = constant_rows(fit);
  document.before = stats_row(fit.before);
  document.after = stats_row(fit.after);
  document.evaluations = fit.evaluations;
  document.accepted = fit.accepted();
  if (!fit.accepted()) document.refusal = fit.refusal();
  if (!report.folds.empty()) {
    documents::CalibrateCrossValidation cv;
    for (const auto& fold : report.folds) {
      cv.folds.push_back({fold.left_out, stats_row(fold.held_out), stats_row(fold.fit.after),
                          constant_rows(fold.fit), fold.fit.accepted()});
    }
    cv.mape_pct = report.cv_mape_pct;
    cv.mean_signed_error_pct = report.cv_bias_pct;
    cv.runs = report.cv_runs;
    document.cross_validation = std::move(cv);
  }
  return document;
}

void run_calibrate(const CalibrateFlags& flags, const Context& context) {
  if (flags.cv != "model" && flags.cv != "none") {
    fail(ErrorCode::invalid_input, "--cv: 'model' (leave one model out) or 'none', not '" + flags.cv + "'");
  }
  const int threads =
      flags.threads > 0 ? flags.threads : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  if (const Status distinct = validate::distinct_runs_files(flags.files); !distinct.ok())
    throw CommandFailed{distinct.error()};
  const ClusterSource base = unwrap(resolve_cluster_source(flags.cluster, "", std::nullopt, 0, std::nullopt));
  if (base.calibration) {
    fail(ErrorCode::invalid_input, "--cluster " + flags.cluster +
                                       ": calibrate fits a cluster spec (a preset or a cluster JSON), not a "
                                       "profiled localhost");
  }
  const CalibrationReport report = unwrap(
      calibrate_runs(flags.files, base.cluster, flags.fit, flags.cv == "model", threads, context.progress()));
  const CalibrationFit& fit = report.fit;
  const std::vector<CrossValidationFold>& folds = report.folds;
  bool written = false;
  if (fit.accepted() && !flags.out.empty()) {
    check(write_output_file(flags.out,
                            model::to_json(calibrated_cluster(report, base.cluster)).dump(2) + "\n"));
    written = true;
  }

  if (context.json) {
    documents::CalibrateDocument document = calibrate_document(report);
    if (written) document.out = flags.out;
    print_json(documents::to_json(document));
  } else {
    fmt::print("# lagom calibrate: {} runs of {} from {} file(s)", report.runs, base.cluster.name,
               flags.files.size());
    if (report.other_clusters > 0) fmt::print(" ({} runs of other clusters left out)", report.other_clusters);
    fmt::print("\n");
    TextTable table({{"constant", true}, {"meaning", true}, {"range", true}, {"before"}, {"after"}, {"±_%"}});
    for (const auto& c : fit.constants) {
      table.add_row({std::string(c.constant->key), std::string(c.constant->meaning),
                     fmt::format("{:g}..{:g}", c.constant->min, c.constant->max),
                     fmt::format("{:.4g}", c.before),
                     c.constrained ? fmt::format("{:.4g}", c.after) : "not constrained by these runs",
                     c.constrained ? fmt::format("{:.1f}", 100.0 * c.relative_stderr) : "-"});
    }
    fmt::print("{}", table.render());
    fmt::print("# MAPE {:.2f}% -> {:.2f}%, mean signed error {}% -> {}% ({} runs; {} whole passes)\n",
               fit.before.mape_pct, fit.after.mape_pct, signed_pct(fit.before.mean_signed_pct),
               signed_pct(fit.after.mean_signed_pct), fit.after.runs, fit.evaluations);
    if (!folds.empty()) {
      fmt::print("# leave one model out: fit on the other models' runs, predict the model left out\n");
      TextTable cv({{"left_out", true}, {"runs"}, {"mape_%"}, {"mean_signed_%"}, {"worst_%"}, {"fit", true}});
      for (const auto& fold : folds) {
        std::string values;
        for (const auto& c : fold.fit.constants) {
          if (c.constrained)
            values += fmt::format("{}{} {:.4g}", values.empty() ? "" : ", ", c.constant->key, c.after);
        }
        if (!fold.fit.accepted()) values += " (refused: out of range)";
        cv.add_row({fold.left_out, std::to_string(fold.held_out.runs),
                    fmt::format("{:.2f}", fold.held_out.mape_pct), signed_pct(fold.held_out.mean_signed_pct),
                    signed_pct(fold.held_out.worst_pct), values});
      }
      fmt::print("{}", cv.render());
      fmt::print("# cross-validated MAPE {:.2f}% (mean signed error {}%) over {} held-out runs\n",
                 report.cv_mape_pct, signed_pct(report.cv_bias_pct), report.cv_runs);
    }
    if (written) fmt::print("# wrote {}\n", flags.out);
  }
  if (!fit.accepted()) {
    throw CommandFailed{make_error(ErrorCode::failure, "calibrate: fit refused: " + fit.refusal())};
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app, Context& context) {
  auto* command = app.add_subcommand(
      "calibrate", "Fit a cluster's physical constants to measured runs (a runs CSV) and write the cluster");
  add_common_flags(*command, context);
  auto flags = std::make_shared<CalibrateFlags>();
  command->add_option("files", flags->files, "Runs files (CSV, docs/validate.md)")->required();
  command->add_option("--cluster", flags->cluster, "The cluster whose constants are fitted (preset or JSON)")
      ->required();
  command->add_option("--out", flags->out,
                      "Write the calibrated cluster JSON here (refused fits write nothing)");
  command->add_option("--fit", flags->fit, "Constants to fit, comma-separated [all calibrate knows]")
      ->delimiter(',');
  command->add_option("--cv", flags->cv, "Cross-validation: model (leave one model out) or none [model]");
  command->add_option("--threads", flags->threads, "Simulation threads [hardware threads]")
      ->check(CLI::Range(1, 256));
  command->callback([flags, &context] { run_calibrate(*flags, context); });
}

}  // namespace lagom::cli
