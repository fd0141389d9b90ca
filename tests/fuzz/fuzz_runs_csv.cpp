// Fuzz target: a runs file of `lagom validate` / `lagom calibrate` (docs/validate.md): the table read by
// libcsv (cli/runs_csv.h), then every row checked and its inputs loaded (prepare_runs). Model and cluster
// names that are files resolve in the scratch folder, where nothing else is.
#include "cli/runs_csv.h"
#include "cli/validate.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = lagom::fuzz::write_scratch("runs.csv", lagom::fuzz::text_of(data, size));
  auto table = lagom::cli::read_runs_table(path);
  if (!table) return 0;
  (void)lagom::cli::prepare_runs(table.value());
  return 0;
}
