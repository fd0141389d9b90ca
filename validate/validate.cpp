#include "validate/validate.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/failure.h"
#include "core/files.h"
#include "core/json_fields.h"
#include "core/stats.h"
#include "core/text.h"
#include "core/units.h"
#include "documents/comm_config.h"
#include "inputs/flag_context.h"
#include "inputs/scenario.h"
#include "simulator/simulator.h"

namespace lagom::validate {

using inputs::add_spec_flags;
using inputs::add_strategy_flags;
using inputs::load_cluster;
using inputs::load_workload;
using inputs::parse_issue_priority_flag;
using inputs::SpecFlags;
using inputs::strategy_from_flags;
using inputs::StrategyFlags;

namespace {

namespace fs = std::filesystem;

// Columns that are not flags.
const std::set<std::string> k_data_columns = {"measured_iteration_s", "measured_tokens_per_s", "group",
                                              "note"};
// Columns of mechanisms the model does not have yet (docs/validate.md "Planned columns"): checked like
// any column (a name from `names`, else an integer from `minimum` to `maximum`), listed in the report when
// they carry a value other than their default, and not used by the prediction.
struct PlannedColumn {
  const char* name;
  std::vector<std::string> names;  // the values allowed; empty: an integer
  std::int64_t minimum = 0, maximum = 0;
  const char* default_value;  // "" when the default is the library's own (any value differs)
};
const std::vector<PlannedColumn>& planned_columns() {
  constexpr std::int64_t k_int = std::numeric_limits<int>::max();
  static const std::vector<PlannedColumn> columns = {
      {"fp8-recipe", {"delayed", "current", "mxfp8", "blockwise"}, 0, 0, "delayed"},
      {"fp8-format", {"hybrid", "e4m3"}, 0, 0, "hybrid"},
      {"fp8-amax-history", {}, 1, k_int, "1024"},
      {"fp8-amax-algo", {"max", "most_recent"}, 0, 0, "max"},
      {"fp8-bf16-layers", {}, 0, k_int, "0"},
      {"cuda-graphs", {"on", "off"}, 0, 0, "off"},
      {"norm-sm-margin", {}, 0, k_int, "0"},
      {"nccl-nvls", {"on", "off"}, 0, 0, "on"},
      // CUDA_DEVICE_MAX_CONNECTIONS takes 1 to 32 (CUDA C Programming Guide, "CUDA Environment Variables").
      {"cuda-max-connections", {}, 1, 32, "8"},
      {"nccl-p2p-chunk", {}, 1, std::numeric_limits<std::int64_t>::max(), ""},
  };
  return columns;
}
const PlannedColumn* planned_column(const std::string& name) {
  for (const PlannedColumn& column : planned_columns()) {
    if (name == column.name) return &column;
  }
  return nullptr;
}

// Why `value` is not one the planned column takes, or "".
std::string planned_value_error(const PlannedColumn& column, const std::string& value) {
  if (!column.names.empty()) {
    if (std::find(column.names.begin(), column.names.end(), value) != column.names.end()) return {};
    std::string names;
    for (const auto& n : column.names) names += (names.empty() ? "" : " | ") + n;
    return fmt::format("'{}' is not one of {}", value, names);
  }
  std::int64_t number = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (ec != std::errc() || end != value.data() + value.size() || number < column.minimum ||
      number > column.maximum) {
    return fmt::format("'{}' is not an integer from {} to {}", value, column.minimum, column.maximum);
  }
  return {};
}
// Flags that take no value: a cell of 1/true/yes/on sets them, 0/false/no/off or empty leaves them off.
const std::set<std::string> k_switches = {"sp", "embedding-in-pipeline-split", "loss-in-pipeline-split"};

Result<bool> switch_value(const std::string& value) {
  if (value.empty()) return false;
  if (const auto b = units::parse_boolean(value)) return *b;
  return make_error(ErrorCode::invalid_input, fmt::format("'{}' is not {}", value, units::k_boolean_words));
}

Result<double> positive_number(const std::string& value) {
  std::size_t used = 0;
  double number = 0;
  try {
    number = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || !std::isfinite(number) || !(number > 0)) {
    return make_error(ErrorCode::invalid_input, "'" + value + "' is not a positive number");
  }
  return number;
}

struct RowFlags {
  SpecFlags spec;
  StrategyFlags strategy;
  std::string issue_priority, comm_config;
  std::vector<std::string> planned;  // "column=value" of planned columns that carry a value
};

// The simulate flags a row's cells are read through.
void add_row_flags(CLI::App& app, RowFlags& flags) {
  app.set_help_flag();  // no column is called help
  add_spec_flags(app, flags.spec);
  add_strategy_flags(app, flags.strategy);
  app.add_option("--issue-priority", flags.issue_priority);
  app.add_option("--comm-config", flags.comm_config);
}

// Every column of the header is one docs/validate.md has, whether or not a row fills it: a misspelt
// column with empty cells would otherwise pass, and its values, once given, mean nothing.
Status check_columns(const RunsTable& table) {
  RowFlags scratch;
  CLI::App app{"validate columns"};
  add_row_flags(app, scratch);
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const std::string& name = table.columns[c];
    if (k_data_columns.contains(name) || planned_column(name) != nullptr ||
        app.get_option_no_throw("--" + name) != nullptr) {
      continue;
    }
    return make_error(
        ErrorCode::invalid_input,
        fmt::format("{}:{}: column '{}' (column {}): unknown (a simulate flag without dashes, a "
                    "planned flag, measured_iteration_s, measured_tokens_per_s, group or note)",
                    table.path, table.header_line, name, c + 1));
  }
  return {};
}

// The row's cells through the same CLI11 flags as `lagom simulate`, one cell at a time so an error names
// its column.
Status parse_row(const RunsTable& table, const RunsTable::Row& row, RowFlags& flags) {
  CLI::App app{"validate row"};
  add_row_flags(app, flags);
  flags.spec.presets_unless_path = true;
  const fs::path folder = fs::path(table.path).parent_path();
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const std::string& name = table.columns[c];
    std::string value = row.cells[c];
    if (k_data_columns.contains(name) || value.empty()) continue;
    auto where = [&] {
      return fmt::format("{}:{}: column '{}' (column {})", table.path, row.line, name, c + 1);
    };
    if (const PlannedColumn* planned = planned_column(name)) {
      if (const std::string why = planned_value_error(*planned, value); !why.empty()) {
        return make_error(ErrorCode::invalid_input, where() + ": " + why);
      }
      if (value != planned->default_value) flags.planned.push_back(name + "=" + value);
      continue;
    }
    if (k_switches.contains(name)) {
      auto on = switch_value(value);
      if (!on.ok()) return make_error(ErrorCode::invalid_input, where() + ": " + on.error().message);
      if (!on.value()) continue;
    }
    // Paths are the CSV folder's (docs/validate.md): the database and the comm config always are paths;
    // a model or cluster is one when files::names_a_file says so there, else a preset name (and then
    // never a file of the working directory: presets_unless_path).
    const bool always_path = name == "comm-config" || name == "db";
    if ((always_path || name == "model" || name == "cluster") && fs::path(value).is_relative() &&
        (always_path || files::names_a_file(value, folder.string()))) {
      value = (folder / value).lexically_normal().string();
      if (value.find('/') == std::string::npos) value = "./" + value;  // still a path, not a preset name
    }
    std::vector<std::string> args;
    if (k_switches.contains(name)) {
      args = {"--" + name};
    } else {
      args = {"--" + name, value};
    }
    std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
    try {
      app.parse(args);
    } catch (const CLI::ExtrasError&) {
      return make_error(ErrorCode::invalid_input, where() + ": no simulate flag is called --" + name);
    } catch (const CLI::ParseError& e) {
      return make_error(ErrorCode::invalid_input, where() + ": " + e.what());
    } catch (const CommandFailed& failed) {
      // A value the flag's own bound refuses (add_strategy_flags throws it, as on the command line): named
      // with the file, line and column like every other cell error (found by tests/fuzz).
      return failed.error.with_context(where());
    }
    app.clear();
  }
  return {};
}

std::string cell(const RunsTable& table, const RunsTable::Row& row, const std::string& name) {
  const auto it = std::find(table.columns.begin(), table.columns.end(), name);
  return it == table.columns.end() ? std::string()
                                   : row.cells[static_cast<std::size_t>(it - table.columns.begin())];
}

std::string column_ref(const RunsTable& table, const RunsTable::Row& row, const std::string& name) {
  const auto it = std::find(table.columns.begin(), table.columns.end(), name);
  return fmt::format("{}:{}: column '{}' (column {})", table.path, row.line, name,
                     it - table.columns.begin() + 1);
}

// The run's model, GPUs, precision and parallel dimensions, for its row and its groups.
// A model given by its shape columns is named by its shape ("custom" would make every such model one group,
// and leave-one-model-out calibration needs to tell them apart).
void describe(ValidatedRun& run, const model::WorkloadSpec& workload, const model::Strategy& strategy) {
  run.model = workload.name == "custom"
                  ? fmt::format("custom {}L {}h {}a", workload.layers, workload.hidden, workload.heads)
                  : workload.name;
  run.gpus = strategy.gpus;
  run.precision = model::to_string(strategy.precision);
  run.parallel = fmt::format("tp{} pp{} cp{} ep{} vpp{}", strategy.tp, strategy.pp, strategy.cp, strategy.ep,
                             strategy.vpp);
}

}  // namespace

ErrorStats error_stats(const std::vector<const ValidatedRun*>& runs) {
  ErrorStats stats;
  double abs_sum = 0, signed_sum = 0;
  for (const ValidatedRun* run : runs) {
    if (!run->failure.empty()) continue;
    const double e = run->error_pct();
    ++stats.runs;
    abs_sum += std::fabs(e);
    signed_sum += e;
    if (std::fabs(e) > std::fabs(stats.worst_pct)) stats.worst_pct = e;
  }
  if (stats.runs > 0) {
    stats.mape_pct = abs_sum / stats.runs;
    stats.mean_signed_pct = signed_sum / stats.runs;
    std::vector<double> absolute;
    for (const ValidatedRun* run : runs) {
      if (run->failure.empty()) absolute.push_back(std::fabs(run->error_pct()));
    }
    stats.median_abs_pct = median(std::move(absolute));
  }
  for (const ValidatedRun* run : runs) stats.failed += !run->failure.empty();
  return stats;
}

Result<std::vector<PreparedRun>> prepare_runs(const RunsTable& table) {
  LAGOM_TRY_STATUS(check_columns(table));
  const bool by_time =
      std::find(table.columns.begin(), table.columns.end(), "measured_iteration_s") != table.columns.end();
  const bool by_tokens =
      std::find(table.columns.begin(), table.columns.end(), "measured_tokens_per_s") != table.columns.end();
  if (by_time == by_tokens) {
    return make_error(
        ErrorCode::invalid_input,
        table.path + ": needs exactly one of the columns measured_iteration_s and measured_tokens_per_s");
  }
  const std::string measured_column = by_time ? "measured_iteration_s" : "measured_tokens_per_s";
  // Every row is read and checked before any is simulated: a bad file fails at once, whole.
  std::vector<RowFlags> flags(table.rows.size());
  std::vector<double> measured(table.rows.size());
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    LAGOM_TRY_STATUS(parse_row(table, row, flags[r]));
    auto value = positive_number(cell(table, row, measured_column));
    if (!value.ok()) {
      return make_error(ErrorCode::invalid_input,
                        column_ref(table, row, measured_column) + ": " + value.error().message);
    }
    measured[r] = value.value();
  }
  std::vector<PreparedRun> runs;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    PreparedRun run;
    run.report.file = table.path;
    run.report.line = row.line;
    run.report.group = cell(table, row, "group");
    run.report.note = cell(table, row, "note");
    run.report.cluster = cell(table, row, "cluster");
    run.report.planned = flags[r].planned;
    run.measured = measured[r];
    run.measured_is_tokens_per_s = !by_time;
    if (by_time) run.report.measured_s = measured[r];
    // The inputs the row names are read first: a model or cluster that cannot be read, or a strategy
    // column without a value it needs, is an input error. A strategy the model cannot build on them (one
    // that does not divide the shapes) is a failed run: the model could not answer it.
    auto in_row = [&](const Error& e) {
      return make_error(e.code, fmt::format("{}:{}: {}", table.path, row.line, e.message));
    };
    auto workload = load_workload(flags[r].spec);
    if (!workload.ok()) return in_row(workload.error());
    run.workload = std::move(workload.value());
    auto requested = strategy_from_flags(flags[r].strategy);
    if (!requested.ok()) return in_row(requested.error());
    run.strategy = requested.value();
    run.strategy_flags = flags[r].strategy;
    describe(run.report, run.workload, run.strategy);  // a failed run is still grouped
    auto source = load_cluster(flags[r].spec, run.strategy.gpus);
    if (!source.ok()) return in_row(source.error());
    run.source = std::move(source.value());
    if (!flags[r].comm_config.empty()) {
      auto document = read_json_file(flags[r].comm_config);
      if (!document.ok()) return in_row(document.error());
      auto assignment = documents::parse_comm_config(document.value(), flags[r].comm_config);
      if (!assignment.ok()) return in_row(assignment.error());
      run.assignment = std::move(assignment.value());
      run.comm_config = flags[r].comm_config;
    }
    if (!flags[r].issue_priority.empty()) {
      auto priority = parse_issue_priority_flag(flags[r].issue_priority);
      if (!priority.ok()) return in_row(priority.error());
      run.assignment.priority = priority.value();
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

ValidatedRun simulate_run(const PreparedRun& prepared, const model::ClusterSpec& cluster) {
  ValidatedRun run = prepared.report;
  auto scenario =
      simulator::Scenario::make(prepared.workload, cluster, prepared.strategy, prepared.source.calibration);
  if (!scenario.ok()) {
    run.failure = scenario.error().message;
    return run;
  }
  const auto& s = *scenario.value();
  run.cluster = s.cluster.name;
  describe(run, s.workload, s.strategy);
  if (const Status context = inputs::check_flag_contexts(prepared.strategy_flags, s.workload, s.strategy);
      !context.ok()) {
    run.no_effect = context.error().message;
  }
  run.measured_s = prepared.measured_is_tokens_per_s
                       ? static_cast<double>(s.strategy.global_batch) * static_cast<double>(s.workload.seq) /
                             prepared.measured
                       : prepared.measured;
  if (!prepared.comm_config.empty()) {
    if (auto valid = s.costs->validate(prepared.assignment); !valid.ok()) {
      run.failure = prepared.comm_config + ": " + valid.error().message;
      return run;
    }
  }
  auto result = simulator::simulate(s.workload, s.cluster, s.strategy, *s.costs, prepared.assignment);
  if (result.ok()) {
    run.predicted_s = result.value().iteration_time_s;
    run.fits_in_memory = result.value().fits_in_memory;
    run.regime = model::regime_of(s.cluster, s.strategy, s.workload);
  } else {
    run.failure = result.error().message;
  }
  return run;
}

Result<std::vector<ValidatedRun>> validate_runs(const RunsTable& table) {
  LAGOM_TRY(const std::vector<PreparedRun> prepared, prepare_runs(table));
  std::vector<ValidatedRun> runs;
  runs.reserve(prepared.size());
  for (const auto& run : prepared) runs.push_back(simulate_run(run, run.source.cluster));
  return runs;
}

std::vector<model::ResidualRun> residual_runs(const std::vector<ValidatedRun>& runs) {
  std::vector<model::ResidualRun> out;
  for (const ValidatedRun& run : runs) {
    if (!run.failure.empty()) continue;
    out.push_back({run.regime, run.model, std::filesystem::path(run.file).filename().string(), run.gpus,
                   run.predicted_s, run.measured_s});
  }
  return out;
}

std::map<std::string, std::map<std::string, ErrorStats>> grouped_stats(
    const std::vector<ValidatedRun>& runs) {
  std::map<std::string, std::map<std::string, std::vector<const ValidatedRun*>>> members;
  for (const auto& run : runs) {
    members["model"][run.model].push_back(&run);
    members["precision"][run.precision].push_back(&run);
    members["cluster"][run.cluster].push_back(&run);
    members["parallel"][run.parallel].push_back(&run);
    members["group"][run.group.empty() ? "(none)" : run.group].push_back(&run);
  }
  std::map<std::string, std::map<std::string, ErrorStats>> out;
  for (const auto& [by, groups] : members) {
    for (const auto& [name, list] : groups) out[by][name] = error_stats(list);
  }
  return out;
}

}  // namespace lagom::validate
