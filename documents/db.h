// The `lagom db` documents (docs/cli.md#lagom-db), kinds "db-list", "db-show", "db-import" and "db-fit": the
// runs of a profile database, one run's sample counts and fits, what an import stored, the fits of a run.
// A run, its samples and its fits are written as in the profile documents (documents/profile.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/database.h"
#include "profiler/profile.h"

namespace lagom::documents {

// `db list --json`: `runs[]`, each {id, status, backend, suite, host, ranks, nodes, started_at,
// finished_at (null while incomplete)}.
struct DbListDocument {
  std::vector<db::Run> runs;
};

// `db show RUN --json`.
struct DbShowDocument {
  db::Run run;
  std::size_t comm = 0, compute = 0, overlap = 0, production_records = 0;  // samples of each kind
  db::FitSet fits;
};

// `db import --json` of production records (format "records").
struct DbImportRecordsDocument {
  std::optional<std::int64_t> run_id;   // null: every record was already stored, no run was added
  std::size_t files = 0, records = 0;   // read
  std::size_t added = 0, already = 0;   // stored, already held
  std::uint64_t dropped_by_writer = 0;  // the writers' summary lines: records they could not write
  std::vector<std::string> warnings;
};

// `db import --json` of an nccl-tests log or a vTrain LUT: the run added, its samples and their fits.
struct DbImportLogDocument {
  std::int64_t run_id = 0;
  std::string format;  // "nccl-tests" | "vtrain-lut"
  std::string collective;
  int ranks = 0, nodes = 1;
  std::size_t samples = 0;
  std::vector<std::string> skipped;       // rows not imported, each "line N: why"
  std::vector<std::string> fits_skipped;  // series not fitted, and why
  db::FitSet fits;
};

// `db fit RUN --json`: the fits (collectives, gemms, scalars at the top) with the run and what was not
// fitted.
struct DbFitDocument {
  std::int64_t run_id = 0;
  std::vector<std::string> skipped;
  db::FitSet fits;
};

// Each stamped with its kind and version.
nlohmann::json to_json(const DbListDocument& document);
nlohmann::json to_json(const DbShowDocument& document);
nlohmann::json to_json(const DbImportRecordsDocument& document);
nlohmann::json to_json(const DbImportLogDocument& document);
nlohmann::json to_json(const DbFitDocument& document);

// The `options` a run stores (db::Run::options_json; a run's `options` in the documents): a profile's
// backend, suite and resolved sweep; an import's records path and the files read, or its log file, format
// and collective.
std::string profile_run_options(const profiler::ProfileOptions& options, const profiler::Sweep& sweep);
std::string records_import_options(const std::string& path, const std::vector<std::string>& files);
std::string log_import_options(const std::string& file, const std::string& format,
                               const std::string& collective);

}  // namespace lagom::documents
