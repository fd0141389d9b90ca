// `lagom validate RUNS.csv...`: measured runs against the iteration model (validate/validate.h,
// docs/validate.md): per-run predicted, measured and signed error; MAPE and mean signed error overall and
// per group; exit 1 above --max-mape or when a run could not be simulated.
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/output.h"
#include "documents/validate.h"
#include "validate/runs_csv.h"
#include "validate/validate.h"

namespace lagom::cli {

using validate::distinct_runs_files;
using validate::error_stats;
using validate::ErrorStats;
using validate::grouped_stats;
using validate::read_runs_table;
using validate::RunsTable;
using validate::validate_runs;
using validate::ValidatedRun;

namespace {

struct ValidateFlags {
  std::vector<std::string> files;
  std::optional<double> max_mape_pct;
};

documents::ValidateStats stats_row(const ErrorStats& s) {
  return {s.runs, s.failed, s.median_abs_pct, s.mape_pct, s.mean_signed_pct, s.worst_pct};
}

documents::ValidateRunRow run_row(const ValidatedRun& run) {
  documents::ValidateRunRow row;
  row.file = run.file;
  row.line = run.line;
  row.model = run.model;
  row.cluster = run.cluster;
  row.gpus = run.gpus;
  row.precision = run.precision;
  row.parallel = run.parallel;
  // A failed run given in tokens/s has no iteration time: the model could not resolve its shape.
  if (run.measured_s > 0) row.measured_iteration_s = run.measured_s;
  if (run.failure.empty()) {
    row.predicted_iteration_s = run.predicted_s;
    row.error_pct = run.error_pct();
    row.fits_in_memory = run.fits_in_memory;
    row.regime = model::regime_name(run.regime);
  } else {
    row.failure = run.failure;
  }
  if (!run.group.empty()) row.group = run.group;
  row.planned_ignored = run.planned;
  if (!run.no_effect.empty()) row.no_effect = run.no_effect;
  if (!run.note.empty()) row.note = run.note;
  return row;
}

std::string pct(double value) {
  return fmt::format("{:+.1f}", value);
}

// The validated regimes (model/accuracy.h): what each run set says about the model's error, and the 90%
// bounds on measured ÷ predicted that a prediction in the regime carries.
void print_regimes(const std::vector<model::Regime>& regimes, int covered, int counted) {
  TextTable table({{"regime", true},
                   {"runs"},
                   {"models"},
                   {"gpus", true},
                   {"mape_%"},
                   {"bias_%"},
                   {"90%_measured/predicted", true},
                   {"held_out_cover_%", true},
                   {"data", true}});
  for (const model::Regime& r : regimes) {
    const std::string bounds = r.low_ratio ? fmt::format("{:.3f}..{:.3f}", *r.low_ratio, *r.high_ratio)
                                           : std::string("too few runs");
    table.add_row({model::regime_name(r), std::to_string(r.runs), std::to_string(r.models),
                   fmt::format("{}-{}", r.min_gpus, r.max_gpus), fmt::format("{:.2f}", r.mape_pct),
                   pct(r.bias_pct), bounds,
                   r.held_out_coverage
                       ? fmt::format("{:.1f} of {}", 100 * *r.held_out_coverage, r.held_out_runs)
                       : std::string("-"),
                   r.data});
  }
  fmt::print("{}", table.render());
  if (counted > 0) {
    fmt::print("# the 90% bounds, each computed without the run's own model, hold {} of {} runs ({:.1f}%)\n",
               covered, counted, 100.0 * covered / counted);
  }
}

// One row per run: predicted against measured, or why the model could not simulate it.
void print_run_table(const std::vector<ValidatedRun>& runs) {
  TextTable table({{"line", true},
                   {"model", true},
                   {"cluster", true},
                   {"gpus"},
                   {"precision", true},
                   {"parallel", true},
                   {"measured_s"},
                   {"predicted_s"},
                   {"error_%"},
                   {"note", true}});
  for (const auto& run : runs) {
    const std::string where = fmt::format("{}:{}", run.file, run.line);
    if (!run.failure.empty()) {
      table.add_row({where, run.model, run.cluster, std::to_string(run.gpus), run.precision, run.parallel,
                     run.measured_s > 0 ? fmt::format("{:.4f}", run.measured_s) : "-", "-", "-",
                     "not simulated: " + run.failure});
      continue;
    }
    table.add_row({where, run.model, run.cluster, std::to_string(run.gpus), run.precision, run.parallel,
                   fmt::format("{:.4f}", run.measured_s), fmt::format("{:.4f}", run.predicted_s),
                   pct(run.error_pct()),
                   run.fits_in_memory ? run.note : "does not fit in memory; " + run.note});
  }
  fmt::print("{}", table.render());
}

void run_validate(const ValidateFlags& flags, const Context& context) {
  if (flags.max_mape_pct && !(*flags.max_mape_pct >= 0)) {
    fail(ErrorCode::invalid_input, "--max-mape: must be a percentage >= 0");
  }
  if (const Status distinct = distinct_runs_files(flags.files); !distinct.ok())
    throw CommandFailed{distinct.error()};
  std::vector<ValidatedRun> runs;
  for (const auto& file : flags.files) {
    const RunsTable table = unwrap(read_runs_table(file));
    auto more = unwrap(validate_runs(table));
    runs.insert(runs.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  std::vector<const ValidatedRun*> all;
  int failed = 0, not_fitting = 0;
  for (const auto& run : runs) {
    all.push_back(&run);
    failed += !run.failure.empty();
    not_fitting += run.failure.empty() && !run.fits_in_memory;
  }
  const ErrorStats overall = error_stats(all);
  const auto groups = grouped_stats(runs);
  const bool too_far = flags.max_mape_pct && overall.mape_pct > *flags.max_mape_pct;
  const std::vector<model::ResidualRun> residuals = validate::residual_runs(runs);
  const std::vector<model::Regime> regimes = model::compute_regimes(residuals);
  // The overall leave-one-model-out coverage is the regimes' own, summed (compute_regimes held each run out
  // once already; each regime's coverage is its covered runs over held_out_runs, so the count is exact).
  int covered = 0, counted = 0;
  for (const model::Regime& r : regimes) {
    counted += r.held_out_runs;
    if (r.held_out_coverage) covered += static_cast<int>(std::lround(*r.held_out_coverage * r.held_out_runs));
  }

  if (context.json) {
    documents::ValidateDocument document;
    for (const auto& run : runs) document.runs.push_back(run_row(run));
    document.overall = stats_row(overall);
    for (const auto& [key, named] : groups) {
      for (const auto& [name, stats] : named) document.groups[key][name] = stats_row(stats);
    }
    document.failed = failed;
    document.not_fitting = not_fitting;
    document.passed = !too_far && failed == 0;
    document.max_mape_pct = flags.max_mape_pct;
    document.accuracy = regimes;
    if (counted > 0) document.held_out_coverage = static_cast<double>(covered) / counted;
    document.held_out_runs = counted;
    print_json(documents::to_json(document));
  } else {
    fmt::print("# lagom validate: {} runs from {} file(s)\n", runs.size(), flags.files.size());
    std::set<std::string> planned;
    for (const auto& run : runs) planned.insert(run.planned.begin(), run.planned.end());
    if (!planned.empty()) {
      std::string list;
      for (const auto& p : planned) list += (list.empty() ? "" : ", ") + p;
      fmt::print("# planned columns with values, not modelled yet (the predictions ignore them): {}\n", list);
    }
    // Columns a row sets that cannot act on its strategy: simulate would refuse them as flags; a measured
    // row keeps what its job was run with, so it is priced and said here (`no_effect` in --json).
    for (const auto& run : runs) {
      if (!run.no_effect.empty())
        fmt::print("# {}:{}: no effect on this row: {}\n", run.file, run.line, run.no_effect);
    }
    print_run_table(runs);
    TextTable summary({{"by", true},
                       {"group", true},
                       {"runs"},
                       {"failed"},
                       {"mape_%"},
                       {"median_%"},
                       {"mean_signed_%"},
                       {"worst_%"}});
    auto add = [&](const std::string& by, const std::string& name, const ErrorStats& s) {
      summary.add_row({by, name, std::to_string(s.runs), std::to_string(s.failed),
                       fmt::format("{:.2f}", s.mape_pct), fmt::format("{:.2f}", s.median_abs_pct),
                       pct(s.mean_signed_pct), pct(s.worst_pct)});
    };
    add("all", "all", overall);
    for (const auto& [key, named] : groups) {
      for (const auto& [name, s] : named) add(key, name, s);
    }
    fmt::print("{}", summary.render());
    print_regimes(regimes, covered, counted);
    if (failed > 0) fmt::print("# {} run(s) could not be simulated\n", failed);
    if (not_fitting > 0)
      fmt::print("# {} run(s) do not fit in memory in the model (they ran)\n", not_fitting);
    if (flags.max_mape_pct) {
      fmt::print("# MAPE {:.2f} % {} the limit {:.2f} %\n", overall.mape_pct,
                 too_far ? "exceeds" : "is within", *flags.max_mape_pct);
    }
  }
  if (too_far || failed > 0) {
    throw CommandFailed{make_error(
        ErrorCode::failure, failed > 0 ? fmt::format("validate: {} run(s) could not be simulated", failed)
                                       : fmt::format("validate: MAPE {:.2f} % exceeds --max-mape {:.2f} %",
                                                     overall.mape_pct, *flags.max_mape_pct))};
  }
}

}  // namespace

void add_validate_command(CLI::App& app, Context& context) {
  auto* command =
      app.add_subcommand("validate", "Compare measured runs (a runs CSV) with the iteration model");
  add_common_flags(*command, context);
  auto flags = std::make_shared<ValidateFlags>();
  command->add_option("files", flags->files, "Runs files (CSV, docs/validate.md)")->required();
  command->add_option_function<double>(
      "--max-mape", [flags](const double& v) { flags->max_mape_pct = bounded("--max-mape", v, 0.0, 1e6); },
      "Exit 1 when the mean absolute percentage error exceeds PCT");
  command->callback([flags, &context] { run_validate(*flags, context); });
}

}  // namespace lagom::cli
