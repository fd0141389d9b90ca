// `lagom db`: not built yet; the command exists so that the contract's command list is complete.
#include "cli/app.h"

namespace lagom::cli {

void add_db_command(CLI::App& app, Context& context) {
  auto* command = app.add_subcommand("db", "(not implemented yet)");
  add_common_flags(*command, context);
  command->callback([] { fail(ErrorCode::unavailable, "db: not implemented yet in this build"); });
}

}  // namespace lagom::cli
