// The one table of `lagom`'s commands (cli/app.h Command), in the order `lagom --help` lists them.
//
// cli/CMakeLists.txt reads the names from the rows below to make the `lagom-<name>` links, so a row keeps
// the form `{"<name>", add_<name>_command},` on one line; tests/repo/check_commands.py checks that every
// name has its link in the build and its place in docs/cli.md (the command list and a `lagom <name>`
// section). A new command: ARCHITECTURE.md's checklist "A new command".
#include "cli/app.h"

namespace lagom::cli {

const std::vector<Command> k_commands = {
    {"presets", add_presets_command},
    {"simulate", add_simulate_command},
    {"explore", add_explore_command},
    {"cost", add_cost_command},
    {"tune", add_tune_command},
    {"profile", add_profile_command},
    {"db", add_db_command},
    {"check", add_check_command},
    {"bench-overlap", add_bench_overlap_command},
    {"validate", add_validate_command},
    {"calibrate", add_calibrate_command},
    {"report", add_report_command},
    {"model", add_model_command},
    {"plan", add_plan_command},
    {"adapt", add_adapt_command},
};

}  // namespace lagom::cli
