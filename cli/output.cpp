#include "cli/output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
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

Status write_output_file(const std::string& path, const std::string& text,
                         const std::vector<std::string>& inputs) {
  for (const auto& input : inputs) {
    if (files::same_file(path, input)) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("{}: is an input of this command ({}); not overwritten", path, input));
    }
  }
  return as_write_failure(files::write_atomically(path, text));
}

Status as_write_failure(Status status) {
  // The inputs were good and the command ran: an output the system will not take (a full disk, a
  // read-only directory, /dev/full) is a failure of the run, exit 1 (docs/cli.md#exit-codes).
  if (!status.ok() && status.error().code == ErrorCode::io) {
    return make_error(ErrorCode::failure, status.error().message);
  }
  return status;
}

std::string markup_escape(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

bool names_a_file(const std::string& value, const std::string& folder) {
  if (value.find('/') != std::string::npos || value.find(".json") != std::string::npos) return true;
  std::error_code ec;
  return std::filesystem::is_regular_file(
      folder.empty() ? std::filesystem::path(value) : std::filesystem::path(folder) / value, ec);
}

Result<nlohmann::json> read_json_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return make_error(ErrorCode::invalid_input, fmt::format("{}: is a directory, not a JSON file", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::not_found, fmt::format("{}: cannot open file", path));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and out_of_range for a number no double holds (1e400: "number overflow"): both are the
    // file's fault, not an internal error.
    return make_error(ErrorCode::invalid_input, fmt::format("{}: not valid JSON ({})", path, e.what()));
  }
}

void print_json(const nlohmann::json& document) {
  const std::string text = sanitize(document).dump();
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void print_document(documents::Kind kind, nlohmann::json document) {
  print_json(documents::stamp(kind, std::move(document)));
}

Table::Table(std::vector<Column> columns) : m_columns(std::move(columns)) {}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(m_columns.size());
  m_rows.push_back(std::move(cells));
}

std::string Table::render() const {
  std::vector<std::size_t> width(m_columns.size());
  for (std::size_t c = 0; c < m_columns.size(); ++c) {
    width[c] = m_columns[c].title.size() + (c == 0 ? 2 : 0);
    for (const auto& row : m_rows) width[c] = std::max(width[c], row[c].size());
  }
  auto cell = [&](const std::string& text, std::size_t c) {
    return m_columns[c].left ? fmt::format("{:<{}}", text, width[c]) : fmt::format("{:>{}}", text, width[c]);
  };
  std::string out;
  for (std::size_t c = 0; c < m_columns.size(); ++c) {
    const std::string title = c == 0 ? "# " + m_columns[c].title : m_columns[c].title;
    out += (c == 0 ? "" : "  ") + cell(title, c);
  }
  out += '\n';
  for (const auto& row : m_rows) {
    for (std::size_t c = 0; c < m_columns.size(); ++c) out += (c == 0 ? "" : "  ") + cell(row[c], c);
    out += '\n';
  }
  return out;
}

StderrProgress::StderrProgress(bool silent) : m_silent(silent), m_tty(isatty(STDERR_FILENO) == 1) {}

void StderrProgress::begin(const std::string& phase, long total) {
  m_phase = phase;
  m_total = total;
  if (m_silent) return;
  if (m_tty) {
    fmt::print(stderr, "\r\033[K{} ...", phase);
    m_line_open = true;
  } else {
    fmt::print(stderr, "# {}{}\n", phase, total > 0 ? fmt::format(" ({} steps)", total) : "");
  }
}

void StderrProgress::step(long done, const std::string& detail) {
  if (m_silent || !m_tty) return;
  if (m_total > 0) {
    fmt::print(stderr, "\r\033[K{} [{}/{}] {}", m_phase, done, m_total, detail);
  } else {
    fmt::print(stderr, "\r\033[K{} [{}] {}", m_phase, done, detail);
  }
  m_line_open = true;
}

void StderrProgress::end() {
  if (m_silent) return;
  if (m_tty && m_line_open) {
    fmt::print(stderr, "\r\033[K{} done\n", m_phase);
    m_line_open = false;
  }
}

void StderrProgress::warn(const std::string& message) {
  if (m_tty && m_line_open) {
    fmt::print(stderr, "\n");
    m_line_open = false;
  }
  fmt::print(stderr, "lagom: warning: {}\n", message);
}

}  // namespace lagom::cli
