// What commands print: one JSON writer (nlohmann-json, one line on stdout), the output files they write,
// and progress on stderr. The aligned human table is core/text.h's TextTable.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"
#include "core/json_fields.h"
#include "core/progress.h"
#include "core/text.h"

namespace lagom::cli {

// Writes `text` to `path` atomically through files::write_outputs (core/files.h): refused (invalid_input,
// naming the file) when `path` is a file this run read, whichever flag named it, or an existing file Lagom
// did not write (docs/cli.md#inputs-and-outputs). A write the system refuses is a failure (exit 1), see
// as_write_failure.
Status write_output_file(const std::string& path, const std::string& text);

// An io error of writing an output becomes a failure (exit 1): the command ran, the system refused its
// output. Other statuses pass unchanged.
Status as_write_failure(Status status);

// Writes `text` to stderr; a stderr the system refuses is ignored (never an exception).
void print_stderr(const std::string& text) noexcept;

// Prints `document` as one line of JSON on stdout. Non-finite numbers become null (JSON has no NaN).
// A document a command writes is its kind's writer's (documents/, stamped with its kind and version there);
// what is no document is printed alike: a spec file (`presets NAME --json`), adapt's event lines.
void print_json(const nlohmann::json& document);

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
