#include "cli/app.h"

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

void fail(ErrorCode code, const std::string& message) {
  throw CommandFailed{make_error(code, message)};
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
std::string describe_parse_error(const CLI::ParseError& e, const std::string& command) {
  std::string what = e.what();
  const std::string prefix = command.empty() ? "" : command + ": ";
  return prefix + what;
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
      fmt::print(stderr, "lagom: error: unknown command '{}' (see 'lagom --help')\n", args[1]);
      return k_exit_usage;
    }
  }

  std::string command_name;
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
    if (!app.get_subcommands().empty()) command_name = app.get_subcommands().front()->get_name();
    fmt::print(stderr, "lagom: error: {}\n", describe_parse_error(e, command_name));
    return k_exit_usage;
  } catch (const CommandFailed& failed) {
    std::fflush(stdout);
    fmt::print(stderr, "lagom: error: {}\n", failed.error.message);
    return exit_code_for(failed.error.code);
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "lagom: error: out of memory\n");
    return k_exit_failure;
  } catch (const std::exception& e) {
    fmt::print(stderr, "lagom: error: internal error: {}\n", e.what());
    return k_exit_failure;
  }
}

}  // namespace lagom::cli
