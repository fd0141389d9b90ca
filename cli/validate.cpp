#include "cli/validate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/scenario.h"
#include "simulator/simulator.h"

namespace lagom::cli {

namespace {

namespace fs = std::filesystem;

// Columns that are not flags.
const std::set<std::string> k_data_columns = {"measured_iteration_s", "measured_tokens_per_s", "group",
                                              "note"};
// Flags that take no value: a cell of 1/true/yes/on sets them, 0/false/no/off or empty leaves them off.
const std::set<std::string> k_switches = {"sp"};

bool looks_like_path(const std::string& value) {
  return value.find('/') != std::string::npos || value.ends_with(".json");
}

Result<bool> switch_value(const std::string& value) {
  std::string v = value;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v.empty() || v == "0" || v == "false" || v == "no" || v == "off") return false;
  return make_error(ErrorCode::invalid_input, "'" + value + "' is not 1/0, true/false, yes/no or on/off");
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
};

// The row's cells through the same CLI11 flags as `lagom simulate`, one cell at a time so an error names
// its column.
Status parse_row(const RunsTable& table, const RunsTable::Row& row, RowFlags& flags) {
  CLI::App app{"validate row"};
  add_spec_flags(app, flags.spec);
  add_strategy_flags(app, flags.strategy);
  const fs::path folder = fs::path(table.path).parent_path();
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const std::string& name = table.columns[c];
    std::string value = row.cells[c];
    if (k_data_columns.contains(name) || value.empty()) continue;
    auto where = [&] {
      return fmt::format("{}:{}: column '{}' (column {})", table.path, row.line, name, c + 1);
    };
    if (k_switches.contains(name)) {
      auto on = switch_value(value);
      if (!on.ok()) return make_error(ErrorCode::invalid_input, where() + ": " + on.error().message);
      if (!on.value()) continue;
    }
    if ((name == "model" || name == "cluster") && looks_like_path(value) && fs::path(value).is_relative()) {
      value = (folder / value).lexically_normal().string();
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
  }
  return stats;
}

Result<std::vector<ValidatedRun>> validate_runs(const RunsTable& table) {
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
  std::vector<ValidatedRun> runs;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    ValidatedRun run;
    run.file = table.path;
    run.line = row.line;
    run.group = cell(table, row, "group");
    run.note = cell(table, row, "note");
    run.model = cell(table, row, "model").empty() ? "custom" : cell(table, row, "model");
    run.cluster = cell(table, row, "cluster");
    auto scenario = load_scenario(flags[r].spec, flags[r].strategy);
    if (!scenario.ok()) {
      // A row the flags describe but the model cannot build (a strategy that does not divide the shapes,
      // an unknown preset) is an input error, as it is for `lagom simulate`.
      return make_error(scenario.error().code,
                        fmt::format("{}:{}: {}", table.path, row.line, scenario.error().message));
    }
    const auto& s = *scenario.value();
    run.model = s.workload.name;
    run.cluster = s.cluster.name;
    run.gpus = s.strategy.gpus;
    run.precision = model::to_string(s.strategy.precision);
    run.parallel = fmt::format("tp{} pp{} cp{} ep{} vpp{}", s.strategy.tp, s.strategy.pp, s.strategy.cp,
                               s.strategy.ep, s.strategy.vpp);
    run.measured_s = by_time ? measured[r]
                             : static_cast<double>(s.strategy.global_batch) *
                                   static_cast<double>(s.workload.seq) / measured[r];
    auto result = simulator::simulate(s.workload, s.cluster, s.strategy, *s.costs);
    if (result.ok()) {
      run.predicted_s = result.value().iteration_time_s;
      run.fits_in_memory = result.value().fits_in_memory;
    } else {
      run.failure = result.error().message;
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

std::map<std::string, std::map<std::string, ErrorStats>> grouped_stats(
    const std::vector<ValidatedRun>& runs) {
  std::map<std::string, std::map<std::string, std::vector<const ValidatedRun*>>> members;
  for (const auto& run : runs) {
    members["model"][run.model].push_back(&run);
    members["precision"][run.precision].push_back(&run);
    members["cluster"][run.cluster].push_back(&run);
    members["parallel"][run.parallel].push_back(&run);
    if (!run.group.empty()) members["group"][run.group].push_back(&run);
  }
  std::map<std::string, std::map<std::string, ErrorStats>> out;
  for (const auto& [by, groups] : members) {
    for (const auto& [name, list] : groups) out[by][name] = error_stats(list);
  }
  return out;
}

}  // namespace lagom::cli
