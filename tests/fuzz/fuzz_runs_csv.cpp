// Fuzz target: a runs file of `lagom validate` / `lagom calibrate` (docs/validate.md): the table read by
// libcsv (validate/runs_csv.h), then every row checked and its inputs loaded (prepare_runs). Model and
// cluster names that are files resolve in the scratch folder, where nothing else is.
#include "cli/app.h"
#include "fuzz_input.h"
#include "validate/runs_csv.h"
#include "validate/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = lagom::fuzz::write_scratch("runs.csv", lagom::fuzz::text_of(data, size));
  auto table = lagom::validate::read_runs_table(path);
  if (!table) return 0;
  // The cli's second error channel (cli/app.h): a flag callback ends the command with CommandFailed, which
  // run_cli turns into `lagom: error:`; anything else escaping is a crash.
  try {
    (void)lagom::validate::prepare_runs(table.value());
  } catch (const lagom::CommandFailed&) {
  }
  return 0;
}
