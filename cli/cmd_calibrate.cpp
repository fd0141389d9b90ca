// `lagom calibrate RUNS.csv... --cluster X [--out cluster.json]`: fits the cluster's physical constants to
// measured runs (validate/calibrate.h), reports the error before and after and a leave-one-model-out
// cross-validated error, and writes a cluster spec that `simulate --cluster` takes (docs/calibrate.md).
#include <thread>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/output.h"
#include "inputs/cluster_source.h"
#include "validate/calibrate.h"

namespace lagom::cli {

using inputs::ClusterSource;
using inputs::resolve_cluster_source;
using validate::CalibrationFit;
using validate::cross_validate_by_model;
using validate::CrossValidationFold;
using validate::ErrorStats;
using validate::fit_constants;
using validate::prepare_runs;
using validate::PreparedRun;
using validate::read_runs_table;
using validate::RunsTable;

namespace {

struct CalibrateFlags {
  std::vector<std::string> files;
  std::string cluster, out, cv = "model";
  std::vector<std::string> fit;
  int threads = 0;
};

nlohmann::json stats_json(const ErrorStats& s) {
  return {{"runs", s.runs},
          {"failed", s.failed},
          {"mape_pct", s.mape_pct},
          {"mean_signed_error_pct", s.mean_signed_pct},
          {"worst_error_pct", s.worst_pct}};
}

nlohmann::json constants_json(const CalibrationFit& fit) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : fit.constants) {
    out.push_back({{"key", c.constant->key},
                   {"meaning", c.constant->meaning},
                   {"min", c.constant->min},
                   {"max", c.constant->max},
                   {"before", c.before},
                   {"after", c.after},
                   {"relative_stderr", c.relative_stderr},
                   {"constrained", c.constrained},
                   {"in_range", c.in_range}});
  }
  return out;
}

std::string signed_pct(double value) {
  return fmt::format("{:+.1f}", value);
}

void run_calibrate(const CalibrateFlags& flags, const Context& context) {
  if (flags.cv != "model" && flags.cv != "none") {
    fail(ErrorCode::invalid_input, "--cv: 'model' (leave one model out) or 'none', not '" + flags.cv + "'");
  }
  const int threads =
      flags.threads > 0 ? flags.threads : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const ClusterSource base = unwrap(resolve_cluster_source(flags.cluster, "", std::nullopt, 0));
  if (base.calibration) {
    fail(ErrorCode::invalid_input, "--cluster " + flags.cluster +
                                       ": calibrate fits a cluster spec (a preset or a cluster JSON), not a "
                                       "profiled localhost");
  }
  std::vector<PreparedRun> prepared;
  for (const auto& file : flags.files) {
    const RunsTable table = unwrap(read_runs_table(file));
    auto more = unwrap(prepare_runs(table));
    prepared.insert(prepared.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  // The runs measured on this cluster are the ones fitted; a run of another cluster says nothing about it.
  std::vector<const PreparedRun*> runs;
  for (const auto& run : prepared) {
    if (run.source.cluster.name == base.cluster.name) runs.push_back(&run);
  }
  const std::size_t other_clusters = prepared.size() - runs.size();
  if (runs.empty()) {
    fail(ErrorCode::invalid_input,
         fmt::format("calibrate: no run of cluster '{}' in the runs file(s)", base.cluster.name));
  }
  const CalibrationFit fit = unwrap(fit_constants(runs, base.cluster, flags.fit, threads));
  std::vector<CrossValidationFold> folds;
  if (flags.cv == "model") folds = unwrap(cross_validate_by_model(runs, base.cluster, flags.fit, threads));
  // The cross-validated error over every held-out run, each predicted by the fit that never saw its model.
  double cv_abs = 0, cv_signed = 0;
  int cv_runs = 0;
  for (const auto& fold : folds) {
    cv_abs += fold.held_out.mape_pct * fold.held_out.runs;
    cv_signed += fold.held_out.mean_signed_pct * fold.held_out.runs;
    cv_runs += fold.held_out.runs;
  }
  const double cv_mape = cv_runs > 0 ? cv_abs / cv_runs : 0.0;
  const double cv_bias = cv_runs > 0 ? cv_signed / cv_runs : 0.0;

  bool written = false;
  if (fit.accepted() && !flags.out.empty()) {
    model::ClusterSpec out = fit.cluster;
    out.nodes = base.cluster.nodes;
    std::string moved;
    for (const auto& c : fit.constants) {
      if (c.constrained)
        moved += fmt::format("{}{} {:.4g}", moved.empty() ? "" : ", ", c.constant->key, c.after);
    }
    out.description =
        fmt::format("{}{}calibrated by lagom calibrate on {} runs ({}; MAPE {:.2f}% -> {:.2f}%)",
                    base.cluster.description, base.cluster.description.empty() ? "" : "; ", fit.after.runs,
                    moved, fit.before.mape_pct, fit.after.mape_pct);
    std::vector<std::string> protected_inputs = flags.files;
    protected_inputs.push_back(flags.cluster);
    check(write_output_file(flags.out, model::to_json(out).dump(2) + "\n", protected_inputs));
    written = true;
  }

  if (context.json) {
    nlohmann::json doc = {{"cluster", base.cluster.name},
                          {"runs", runs.size()},
                          {"other_clusters_left_out", other_clusters},
                          {"constants", constants_json(fit)},
                          {"before", stats_json(fit.before)},
                          {"after", stats_json(fit.after)},
                          {"evaluations", fit.evaluations},
                          {"accepted", fit.accepted()}};
    if (!fit.accepted()) doc["refusal"] = fit.refusal();
    if (written) doc["out"] = flags.out;
    if (!folds.empty()) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& fold : folds) {
        list.push_back({{"left_out", fold.left_out},
                        {"held_out", stats_json(fold.held_out)},
                        {"fit_after", stats_json(fold.fit.after)},
                        {"constants", constants_json(fold.fit)},
                        {"accepted", fold.fit.accepted()}});
      }
      doc["cross_validation"] = {{"by", "model"},
                                 {"folds", std::move(list)},
                                 {"mape_pct", cv_mape},
                                 {"mean_signed_error_pct", cv_bias},
                                 {"runs", cv_runs}};
    }
    print_document(documents::Kind::calibrate, std::move(doc));
  } else {
    fmt::print("# lagom calibrate: {} runs of {} from {} file(s)", runs.size(), base.cluster.name,
               flags.files.size());
    if (other_clusters > 0) fmt::print(" ({} runs of other clusters left out)", other_clusters);
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
      fmt::print("# cross-validated MAPE {:.2f}% (mean signed error {}%) over {} held-out runs\n", cv_mape,
                 signed_pct(cv_bias), cv_runs);
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
