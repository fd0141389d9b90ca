#include "cli/output.h"

#include <cmath>
#include <cstdio>
#include <unistd.h>

#include <fmt/format.h>

#include "core/files.h"

namespace lagom::cli {

namespace {
nlohmann::json sanitize(const nlohmann::json& value) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) return nullptr;
  if (value.is_object() || value.is_array()) {
    nlohmann::json copy = value;
    for (auto& element : copy) element = sanitize(element);
    return copy;
  }
  return value;
}
}  // namespace

Status write_output_file(const std::string& path, const std::string& text) {
  return as_write_failure(files::write_outputs({{path, text}}));
}

void print_stderr(const std::string& text) noexcept {
  // fputs, not fmt::print: a stderr the system refuses (a full disk, /dev/full) must not throw from the
  // command frame's own error report.
  std::fputs(text.c_str(), stderr);
}

Status as_write_failure(Status status) {
  // The inputs were good and the command ran: an output the system will not take (a full disk, a
  // read-only directory, /dev/full) is a failure of the run, exit 1 (docs/cli.md#exit-codes).
  if (!status.ok() && status.error().code == ErrorCode::io) {
    return make_error(ErrorCode::failure, status.error().message);
  }
  return status;
}

void print_json(const nlohmann::json& document) {
  const std::string text = sanitize(document).dump();
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

StderrProgress::StderrProgress(bool silent) : m_silent(silent), m_tty(isatty(STDERR_FILENO) == 1) {}

void StderrProgress::begin(const std::string& phase, long total) {
  m_phase = phase;
  m_total = total;
  if (m_silent) return;
  if (m_tty) {
    print_stderr(fmt::format("\r\033[K{} ...", phase));
    m_line_open = true;
  } else {
    print_stderr(fmt::format("# {}{}\n", phase, total > 0 ? fmt::format(" ({} steps)", total) : ""));
  }
}

void StderrProgress::step(long done, const std::string& detail) {
  if (m_silent || !m_tty) return;
  if (m_total > 0) {
    print_stderr(fmt::format("\r\033[K{} [{}/{}] {}", m_phase, done, m_total, detail));
  } else {
    print_stderr(fmt::format("\r\033[K{} [{}] {}", m_phase, done, detail));
  }
  m_line_open = true;
}

void StderrProgress::end() {
  if (m_silent) return;
  if (m_tty && m_line_open) {
    print_stderr(fmt::format("\r\033[K{} done\n", m_phase));
    m_line_open = false;
  }
}

void StderrProgress::warn(const std::string& message) {
  if (m_tty && m_line_open) {
    print_stderr("\n");
    m_line_open = false;
  }
  print_stderr(fmt::format("lagom: warning: {}\n", message));
}

}  // namespace lagom::cli
