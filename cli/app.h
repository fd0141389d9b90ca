// The command frame: global flags, command registration, and the one place that maps errors to exit
// codes. Each command lives in cmd_<name>.cpp and registers itself through add_<name>_command().
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/error.h"
#include "core/failure.h"
#include "core/progress.h"
#include "model/strategy_knobs.h"

namespace lagom::cli {

// Exit statuses of the command-line contract (docs/cli.md#exit-codes).
inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_failure = 1;  // failed run, or a regression found by `check`
inline constexpr int k_exit_usage = 2;    // bad usage or bad input

int exit_code_for(ErrorCode code);

// Flags every command shares, and the services commands use.
struct Context {
  bool json = false;   // --json: one JSON document on stdout, nothing else there
  bool quiet = false;  // --quiet: no progress on stderr (warnings and errors still print)
  Progress& progress() const;
};

// CommandFailed, unwrap, fail, flag_value and bounded: core/failure.h (the flag adders of inputs/ throw them
// too). check(): a Status or CommandFailed.
inline void check(const Status& status) {
  if (!status.ok()) throw CommandFailed{status.error()};
}

// The most GPUs (or ranks) a flag takes (model/strategy_knobs.h).
inline constexpr int k_max_gpus = model::k_max_gpus;

// Adds --json and --quiet to a subcommand (after the command name, anywhere among its flags).
void add_common_flags(CLI::App& command, Context& context);

// Each command's registration (cmd_<name>.cpp): adds the subcommand of its name, with its summary and flags.
void add_presets_command(CLI::App& app, Context& context);
void add_simulate_command(CLI::App& app, Context& context);
void add_explore_command(CLI::App& app, Context& context);
void add_cost_command(CLI::App& app, Context& context);
void add_tune_command(CLI::App& app, Context& context);
void add_profile_command(CLI::App& app, Context& context);
void add_db_command(CLI::App& app, Context& context);
void add_check_command(CLI::App& app, Context& context);
void add_bench_overlap_command(CLI::App& app, Context& context);
void add_validate_command(CLI::App& app, Context& context);
void add_calibrate_command(CLI::App& app, Context& context);
void add_report_command(CLI::App& app, Context& context);
void add_model_command(CLI::App& app, Context& context);
void add_adapt_command(CLI::App& app, Context& context);
void add_plan_command(CLI::App& app, Context& context);

// One command of `lagom`: its name (what `lagom <name>` and the link `lagom-<name>` select) and its
// registration. The one list of commands is k_commands (cli/commands.cpp): run_cli registers from it,
// cli/CMakeLists.txt makes the `lagom-<name>` links from it, and the repo test
// (tests/repo/check_commands.py) fails when docs/cli.md or the build's links disagree with it.
struct Command {
  const char* name;
  void (*add)(CLI::App& app, Context& context);
};
extern const std::vector<Command> k_commands;

// Runs the command line; returns the exit status. argv[0]'s base name `lagom-<command>` selects <command>.
int run_cli(int argc, char** argv);

}  // namespace lagom::cli
