// Measurements made elsewhere stored as runs (`lagom db import`, `lagom db fit`): production records as a
// production run, an nccl-tests or vTrain log as an import run with its fits, and a stored run fitted again.
// The `options` each run stores (db::Run::options_json) are the caller's, written by documents/db.h: the
// profiler names no document's fields.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"
#include "db/database.h"
#include "profiler/fit.h"
#include "profiler/nccl_tests_format.h"
#include "profiler/production.h"

namespace lagom::profiler {

// Stores the records of `files` (read from `path`) not stored yet as one production run: its host when every
// record names the same one, its ranks the distinct processes, its nodes the most any record or host count
// says. run_id 0: nothing new.
struct RecordsImport {
  db::Database::ProductionImport imported;
  std::uint64_t dropped_by_writer = 0;  // records the writer's summary lines say it could not write
};
Result<RecordsImport> import_records(db::Database& database, const std::string& path,
                                     const RecordFiles& files, const std::string& options_json);

// Stores a parsed log as a complete import run, its samples and the fits made from them.
struct LogImport {
  std::int64_t run_id = 0;
  FitOutcome outcome;
};
Result<LogImport> import_log(db::Database& database, const std::string& file, const ImportedLog& log,
                             const std::string& options_json);

// Fits a complete stored run again and stores the fits (a production run's records become comm samples
// first: comm_samples_from_records). invalid_input for an incomplete run or one with nothing to fit.
Result<FitOutcome> refit_run(db::Database& database, std::int64_t run_id);

}  // namespace lagom::profiler
