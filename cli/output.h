// The two renderers every report uses: one JSON writer (nlohmann-json, one line on stdout) and an
// aligned human table whose non-data lines start with '#', so awk and grep work on it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/progress.h"
#include "documents/kind.h"

namespace lagom::cli {

// Reads a JSON file: not_found when it cannot be opened, invalid_input when it is not JSON.
Result<nlohmann::json> read_json_file(const std::string& path);

// Whether a --model or --cluster value names a file rather than a preset: it contains '/' or ".json", or
// a file of that name exists in `folder` (the working directory when empty; a runs file's folder for
// `lagom validate`).
bool names_a_file(const std::string& value, const std::string& folder = "");

// `text` safe inside XML/HTML text and double-quoted attributes (& < > " escaped): JUnit files, reports.
std::string markup_escape(std::string_view text);

// Writes `text` to `path` atomically (files::write_atomically, core/files.h). Refuses (invalid_input) when
// `path` is one of `inputs` (the same file, however named): an output never overwrites an input. A write
// the system refuses is a failure (exit 1), see as_write_failure.
Status write_output_file(const std::string& path, const std::string& text,
                         const std::vector<std::string>& inputs = {});

// An io error of writing an output becomes a failure (exit 1): the command ran, the system refused its
// output. Other statuses pass unchanged.
Status as_write_failure(Status status);

// Prints `document` as one line of JSON on stdout. Non-finite numbers become null (JSON has no NaN).
// A document a command writes goes through print_document (its kind and version stamped); print_json
// alone prints what is no document: a spec file (`presets NAME --json`) or a document already stamped by
// its writer in documents/.
void print_json(const nlohmann::json& document);
// print_json of `document` with its `kind` and `version` (documents/kind.h).
void print_document(documents::Kind kind, nlohmann::json document);

// A column-aligned table. Columns are right-aligned except those marked left.
class Table {
 public:
  struct Column {
    std::string title;
    bool left = false;
  };
  explicit Table(std::vector<Column> columns);
  void add_row(std::vector<std::string> cells);
  // Renders "# title  title ..." then one aligned line per row.
  [[nodiscard]] std::string render() const;

 private:
  std::vector<Column> m_columns;
  std::vector<std::vector<std::string>> m_rows;
};

// Progress on stderr: redraws one line in place on a TTY, prints phase start/end lines otherwise,
// nothing at all when silent (warnings still print).
class StderrProgress final : public Progress {
 public:
  explicit StderrProgress(bool silent);
  void begin(const std::string& phase, long total) override;
  void step(long done, const std::string& detail) override;
  void end() override;
  void warn(const std::string& message) override;

 private:
  bool m_silent;
  bool m_tty;
  std::string m_phase;
  long m_total = 0;
  bool m_line_open = false;
};

}  // namespace lagom::cli
