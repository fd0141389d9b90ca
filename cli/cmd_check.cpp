// `lagom check`: regression checks of a current simulate/tune/profile result against a baseline.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "check/predicted.h"
#include "check/regression.h"
#include "cli/app.h"
#include "cli/output.h"
#include "core/units.h"
#include "db/database.h"
#include "documents/check.h"
#include "documents/check_predicted.h"
#include "documents/profile.h"

namespace lagom::cli {

namespace {

struct CheckOptions {
  std::string baseline;  // a JSON file written by --json, or a run id in --db
  std::string current;
  std::string db_path = "lagom.db";
  std::string tolerance = "5";  // percent; "5%" or "field=pct,..." too
  std::string junit_path;       // optional JUnit XML report
  std::string predicted;        // lagom-config.json: compare production records instead (check/predicted.h)
  std::int64_t run_id = 0;      // the production run of --predicted
};

// A --baseline or --current that names a run of --db: digits, and no file of that name.
bool is_run_id(const std::string& what) {
  std::error_code ec;
  return !what.empty() && what.find_first_not_of("0123456789") == std::string::npos &&
         !std::filesystem::exists(what, ec);
}

Result<nlohmann::json> load_document(const std::string& what, const CheckOptions& options) {
  if (is_run_id(what)) {
    auto doc = documents::export_run_document(options.db_path, std::stoll(what));
    if (!doc.ok()) return doc.error().with_context(fmt::format("{}: run {}", options.db_path, what));
    return doc;
  }
  return read_json_file(what);
}

void run_check(const CheckOptions& options, const Context& context) {
  const check::Tolerance tolerance = unwrap(check::parse_tolerance(options.tolerance));
  const nlohmann::json baseline = unwrap(load_document(options.baseline, options));
  const nlohmann::json current = unwrap(load_document(options.current, options));
  const auto kind_of = [](const nlohmann::json& doc, const std::string& name) {
    auto kind = check::detect_kind(doc);
    if (!kind.ok()) throw CommandFailed{kind.error().with_context(name)};
    return *kind;
  };
  const check::DocumentKind base_kind = kind_of(baseline, options.baseline);
  const check::DocumentKind cur_kind = kind_of(current, options.current);
  if (base_kind != cur_kind) {
    fail(ErrorCode::invalid_input,
         fmt::format("check: baseline is a {} document but current is a {} document",
                     documents::to_string(base_kind), documents::to_string(cur_kind)));
  }
  check(check::check_tolerance_fields(tolerance, base_kind));
  auto metrics_of = [](const nlohmann::json& doc, check::DocumentKind kind, const std::string& name) {
    auto metrics = check::extract_metrics(doc, kind);
    if (!metrics.ok()) throw CommandFailed{metrics.error().with_context(name)};
    return *metrics;
  };
  const auto base_metrics = metrics_of(baseline, base_kind, options.baseline);
  const auto cur_metrics = metrics_of(current, cur_kind, options.current);
  // Comparing results of different models or clusters is rarely meant: say so, and compare anyway.
  // Profiles: a run of another backend (cpu against mpi) or host measures other things (issue 32: 146
  // "added" rows and no word of why).
  const auto base_run = documents::described_run(baseline), cur_run = documents::described_run(current);
  for (std::size_t i = 0; i < base_run.size() && i < cur_run.size(); ++i) {
    const std::string& a = base_run[i].second;
    const std::string& b = cur_run[i].second;
    if (!a.empty() && !b.empty() && a != b) {
      context.progress().warn(fmt::format(
          "check: the baseline's {} is {} but the current's is {}: the documents describe different "
          "runs",
          base_run[i].first, a, b));
    }
  }
  const check::Report report = check::compare(base_kind, base_metrics, cur_metrics, tolerance);

  if (!options.junit_path.empty()) {
    if (auto written = write_output_file(options.junit_path, check::render_junit(report)); !written.ok()) {
      throw CommandFailed{written.error().with_context("check: --junit")};
    }
  }
  if (context.json) {
    print_json(documents::to_json(check::to_document(report)));
  } else {
    fmt::print("{}", check::render_table(report));
  }
  if (report.regressions() > 0) {
    std::string names;
    for (const auto& c : report.comparisons) {
      if (c.verdict != check::Verdict::regressed && c.verdict != check::Verdict::missing) continue;
      if (!names.empty()) names += ", ";
      names += c.verdict == check::Verdict::missing ? c.name + " (missing)"
                                                    : fmt::format("{} ({:+.1f}%)", c.name, c.delta_pct);
    }
    fail(ErrorCode::regression,
         fmt::format("check: {} regression(s) beyond tolerance: {}", report.regressions(), names));
  }
}

struct PredictedCheckOptions {
  std::string config_path;
  std::string db_path;
  std::int64_t run_id = 0;
  std::string tolerance;  // percent, e.g. "10" or "10%"
};

double parse_percent(const std::string& text) {
  const std::optional<double> value = units::parse_percentage(text);
  if (!value || *value < 0 || *value > 1000) {
    fail(ErrorCode::invalid_input,
         "check: --tolerance " + text + ": with --predicted, one percentage from 0 to 1000 (e.g. 10 or 10%)");
  }
  return *value;
}

// check --predicted: exit 1 (regression) when an op class drifted beyond the tolerance.
void run_check_predicted(const PredictedCheckOptions& options, const Context& context) {
  using check::check_op_classes;
  using check::read_predictions;
  using check::rule_text;
  const double tolerance_pct = parse_percent(options.tolerance);
  const auto classes = unwrap(read_predictions(options.config_path));
  auto database = db::Database::open(options.db_path, db::Database::Mode::read_only);
  if (!database.ok()) throw CommandFailed{database.error().with_context("check")};
  const auto run = database->run(options.run_id);
  if (!run.ok())
    throw CommandFailed{run.error().with_context(fmt::format("check: --run {}", options.run_id))};
  if (run->backend != db::k_backend_production) {
    fail(ErrorCode::invalid_input, fmt::format("check: --run {} is a {} run; --predicted compares production "
                                               "records (lagom db import)",
                                               options.run_id, run->backend));
  }
  const auto records = database->production_records(options.run_id);
  if (!records.ok()) throw CommandFailed{records.error().with_context("check")};
  std::size_t unmatched = 0;
  const auto checks = check_op_classes(classes, *records, tolerance_pct, &unmatched);
  std::vector<std::string> drifted;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    if (checks[i].status == "drift") {
      drifted.push_back(
          fmt::format("{} ({:+.1f}%, rule {})", classes[i].name, checks[i].delta_pct, rule_text(classes[i])));
    }
  }
  if (context.json) {
    print_json(documents::to_json(check::predicted_check_document(
        options.config_path, options.run_id, tolerance_pct, records->size(), unmatched, classes, checks)));
  } else {
    fmt::print("# {} against production run {}: {} records, {} matched no op class; tolerance {}%\n",
               options.config_path, options.run_id, records->size(), unmatched, tolerance_pct);
    fmt::print("{}", check::predicted_check_table(classes, checks));
  }
  if (!drifted.empty()) {
    std::string names;
    for (const auto& d : drifted) names += (names.empty() ? "" : "; ") + d;
    fail(ErrorCode::regression,
         fmt::format("check: {} op class(es) drifted beyond {}%: {}", drifted.size(), tolerance_pct, names));
  }
}

}  // namespace

void add_check_command(CLI::App& app, Context& context) {
  auto options = std::make_shared<CheckOptions>();
  auto* command = app.add_subcommand("check", "Compare a result against a baseline; exit 1 on regression");
  auto* baseline =
      command->add_option("--baseline", options->baseline, "Baseline: a --json file, or a run id in --db");
  auto* current =
      command->add_option("--current", options->current, "Current: a --json file, or a run id in --db");
  auto* predicted = command->add_option(
      "--predicted", options->predicted,
      "Instead: compare the production records of --run with the op-class times of this lagom-config.json");
  auto* run =
      command->add_option("--run", options->run_id, "The production run (lagom db import) of --predicted");
  predicted->excludes(baseline)->excludes(current)->needs(run);
  run->needs(predicted);
  command->add_option("--db", options->db_path, "Profile database for run ids")->capture_default_str();
  command
      ->add_option("--tolerance", options->tolerance,
                   "Allowed worsening in percent: 5, 5%, or metric=pct,... (JSON field names)")
      ->capture_default_str();
  // check --predicted writes no JUnit report: refused rather than accepted and silently not written.
  command->add_option("--junit", options->junit_path, "Also write a JUnit XML report to FILE")
      ->excludes(predicted);
  add_common_flags(*command, context);
  command->callback([options, command, &context] {
    if (!options->predicted.empty()) {
      run_check_predicted({options->predicted, options->db_path, options->run_id, options->tolerance},
                          context);
      return;
    }
    if (options->baseline.empty() || options->current.empty()) {
      fail(ErrorCode::invalid_input,
           "check: --baseline and --current are required (or --predicted with --run)");
    }
    // --db is read for a run id only: with two files it would have no effect (docs/cli.md#lagom-check).
    if (command->count("--db") > 0 && !is_run_id(options->baseline) && !is_run_id(options->current)) {
      fail(ErrorCode::invalid_input,
           fmt::format("check: --db {}: it is read for run ids, and --baseline and --current are files: the "
                       "flag would have no effect",
                       options->db_path));
    }
    run_check(*options, context);
  });
}

}  // namespace lagom::cli
