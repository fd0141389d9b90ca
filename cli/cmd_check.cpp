// `lagom check`: not built yet; the command exists so that the contract's command list is complete.
#include "cli/app.h"

namespace lagom::cli {

void add_check_command(CLI::App& app, Context& context) {
  auto* command = app.add_subcommand("check", "(not implemented yet)");
  add_common_flags(*command, context);
  command->callback([] { fail(ErrorCode::unavailable, "check: not implemented yet in this build"); });
}

}  // namespace lagom::cli
