#include "cli/app.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <mpi.h>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli/output.h"
#include "lagom/build_info.h"

namespace lagom::cli {

int exit_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::failure:
    case ErrorCode::regression:
      return k_exit_failure;
    case ErrorCode::invalid_input:
    case ErrorCode::not_found:
    case ErrorCode::unavailable:
    case ErrorCode::io:
      return k_exit_usage;
  }
  return k_exit_failure;
}

Progress& Context::progress() const {
  static StderrProgress loud(false);
  static StderrProgress silent(true);
  return quiet ? static_cast<Progress&>(silent) : static_cast<Progress&>(loud);
}

void add_common_flags(CLI::App& command, Context& context) {
  command.add_flag("--json", context.json, "Print one JSON document on stdout");
  command.add_flag("--quiet", context.quiet, "No progress on stderr");
}

namespace {

void print_version() {
  auto yes_no = [](const char* version) {
    return std::string_view(version).empty() ? std::string("no") : fmt::format("yes ({})", version);
  };
  fmt::print("lagom {} ({})\n", build::k_version, build::k_git_sha);
  fmt::print("cuda: {}\n", yes_no(build::k_cuda_version));
  fmt::print("nccl: {}\n", yes_no(build::k_nccl_version));
#if defined(OMPI_MAJOR_VERSION)
  fmt::print("mpi: yes (Open MPI {}.{}.{}, MPI {}.{})\n", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
             OMPI_RELEASE_VERSION, MPI_VERSION, MPI_SUBVERSION);
#else
  fmt::print("mpi: yes (MPI {}.{})\n", MPI_VERSION, MPI_SUBVERSION);
#endif
}

// CLI11's messages, made to read as "lagom: error: <what>: <why>".
// Levenshtein distance (insertions, deletions, substitutions of one character each).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The flag of `command` closest to `flag` ("--gpu" → "--gpus"): within a third of its length in edits
// (at least one), or one that `flag` is a prefix of; "" when none is close.
std::string closest_flag(const CLI::App& command, std::string_view flag) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(1, flag.size() / 3) + 1;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) {
      const std::string candidate = "--" + name;
      const std::size_t d = candidate.rfind(flag, 0) == 0 ? 1 : edit_distance(flag, candidate);
      if (d < best_distance) {
        best_distance = d;
        best = candidate;
      }
    }
  }
  return best;
}

// CLI11's message, except for arguments a command does not take: the first unknown flag named with the
// closest known one ("unknown flag --gpu (did you mean --gpus?)"), or the first stray value.
std::string describe_parse_error(const CLI::ParseError& e, const CLI::App* command) {
  const std::string prefix = command != nullptr ? command->get_name() + ": " : "";
  if (command != nullptr && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    const std::vector<std::string> extras = command->remaining();
    for (const std::string& extra : extras) {
      if (extra.size() < 2 || extra[0] != '-') continue;
      const std::string flag = extra.substr(0, extra.find('='));
      const std::string near = closest_flag(*command, flag);
      const std::string hint = near.empty() ? fmt::format("see 'lagom {} --help'", command->get_name())
                                            : fmt::format("did you mean {}?", near);
      return fmt::format("{}unknown flag {} ({})", prefix, flag, hint);
    }
    if (!extras.empty()) {
      return fmt::format("{}unexpected argument '{}' (see 'lagom {} --help')", prefix, extras.front(),
                         command->get_name());
    }
  }
  return prefix + e.what();
}

// An empty argument (`--seq ''`, `--out=`, `lagom model ''`) would read as the flag's default, or as no
// path at all: CLI11 converts "" to 0 for a number. One rule for every command: it is an error naming the
// flag, before any command runs. "" when `args` (the command's, after its name) holds none.
std::string empty_argument(const std::vector<std::string>& args) {
  for (std::size_t i = 2; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() > 2 && arg.rfind("--", 0) == 0 && arg.back() == '=') {
      return fmt::format("{}: {}: an empty value (leave the flag out for its default)", args[1],
                         arg.substr(0, arg.size() - 1));
    }
    if (!arg.empty()) continue;
    if (args[i - 1].size() > 1 && args[i - 1][0] == '-') {
      return fmt::format("{}: {}: an empty value (leave the flag out for its default)", args[1], args[i - 1]);
    }
    return fmt::format("{}: an empty argument", args[1]);
  }
  return "";
}

}  // namespace

int run_cli(int argc, char** argv) {
  // lagom-<command> links dispatch on the program name.
  std::vector<std::string> args(argv, argv + argc);
  std::string program = args.empty() ? "lagom" : args[0];
  if (const auto slash = program.rfind('/'); slash != std::string::npos) program = program.substr(slash + 1);
  if (program.rfind("lagom-", 0) == 0 && program.size() > 6) {
    args.insert(args.begin() + 1, program.substr(6));
  }

  Context context;
  CLI::App app{"Lagom: profile, model, simulate and tune communication in distributed LLM training", "lagom"};
  app.require_subcommand(0, 1);
  app.set_version_flag("", "");  // handled below so that --version prints the build facts
  bool show_version = false;
  app.add_flag("--version", show_version, "Print the version, git SHA and GPU/MPI support");
  app.footer(
      "Run 'lagom <command> --help' for a command's flags. Exit codes: 0 ok, 1 failure or regression, "
      "2 bad usage or input.");

  for (const Command& command : k_commands) command.add(app, context);

  // An unknown command gets a clear message rather than CLI11's "argument was not expected".
  if (args.size() > 1 && !args[1].empty() && args[1][0] != '-') {
    bool known = false;
    for (const Command& command : k_commands) known = known || args[1] == command.name;
    if (!known) {
      print_stderr(fmt::format("lagom: error: unknown command '{}' (see 'lagom --help')\n", args[1]));
      return k_exit_usage;
    }
  }

  if (const std::string empty = empty_argument(args); !empty.empty()) {
    print_stderr(fmt::format("lagom: error: {}\n", empty));
    return k_exit_usage;
  }

  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11 wants them reversed
    app.parse(reversed);
    if (show_version) {
      print_version();
      return k_exit_ok;
    }
    if (app.get_subcommands().empty()) {
      std::cout << app.help();
      return k_exit_ok;
    }
    return k_exit_ok;
  } catch (const CLI::CallForHelp&) {
    std::cout << (app.get_subcommands().empty() ? app.help() : app.get_subcommands().front()->help());
    return k_exit_ok;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return k_exit_ok;
  } catch (const CLI::ParseError& e) {
    const CLI::App* command = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front();
    print_stderr(fmt::format("lagom: error: {}\n", describe_parse_error(e, command)));
    return k_exit_usage;
  } catch (const CommandFailed& failed) {
    std::fflush(stdout);
    print_stderr(fmt::format("lagom: error: {}\n", failed.error.message));
    return exit_code_for(failed.error.code);
  } catch (const std::bad_alloc&) {
    std::fflush(stdout);
    std::fputs(  // no allocation: there may be no memory left
        "lagom: error: out of memory (the system refused an allocation: too little memory, or a limit such "
        "as "
        "ulimit -v)\n",
        stderr);
    return k_exit_failure;
  } catch (const std::exception& e) {
    print_stderr(fmt::format("lagom: error: internal error: {}\n", e.what()));
    return k_exit_failure;
  }
}

}  // namespace lagom::cli
