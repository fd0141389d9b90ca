// The runs file of `lagom validate` (docs/validate.md): CSV with a header row, `#` comment lines and blank
// lines skipped, one run per line (a quoted field may hold commas, not line breaks). Parsed with libcsv
// (Debian's libcsv-dev).
#pragma once

#include <string>
#include <vector>

#include "core/error.h"

namespace lagom::validate {

struct RunsTable {
  std::string path;
  std::vector<std::string> columns;  // header names, trimmed
  int header_line = 0;               // 1-based line number of the header
  struct Row {
    int line = 0;                    // 1-based line number in the file
    std::vector<std::string> cells;  // one per column, trimmed ("" = not given)
  };
  std::vector<Row> rows;
};

// not_found when the file cannot be read; invalid_input (naming file and line) for a row whose cell count
// is not the header's, a malformed quote, a repeated or empty column name, or a file without a header.
Result<RunsTable> read_runs_table(const std::string& path);

// invalid_input when two of `paths` name one file, by any spelling (validate and calibrate would count its
// runs twice): "PATH: given twice (as FIRST)".
Status distinct_runs_files(const std::vector<std::string>& paths);

}  // namespace lagom::validate
