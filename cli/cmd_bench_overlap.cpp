// `lagom bench-overlap`: not built yet; the command exists so that the contract's command list is complete.
#include "cli/app.h"

namespace lagom::cli {

void add_bench_overlap_command(CLI::App& app, Context& context) {
  auto* command = app.add_subcommand("bench-overlap", "(not implemented yet)");
  add_common_flags(*command, context);
  command->callback([] { fail(ErrorCode::unavailable, "bench-overlap: not implemented yet in this build"); });
}

}  // namespace lagom::cli
