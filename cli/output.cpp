#include "cli/output.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <fmt/format.h>
#include <sys/stat.h>

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
  struct stat target {};
  const bool exists = ::stat(path.c_str(), &target) == 0;
  for (const auto& input : inputs) {
    struct stat in {};
    if (exists && !input.empty() && ::stat(input.c_str(), &in) == 0 && in.st_dev == target.st_dev &&
        in.st_ino == target.st_ino) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("{}: is an input of this command ({}); not overwritten", path, input));
    }
  }
  if (exists && !S_ISREG(target.st_mode)) {
    // A device or a pipe (/dev/stdout, /dev/full): no rename is possible, write straight through and check.
    std::FILE* out = std::fopen(path.c_str(), "wb");
    if (out == nullptr)
      return make_error(ErrorCode::io, fmt::format("{}: cannot write ({})", path, std::strerror(errno)));
    const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
    const int saved = errno;
    const bool closed = std::fclose(out) == 0;
    if (!written || !closed) {
      return make_error(ErrorCode::io,
                        fmt::format("{}: cannot write ({})", path, std::strerror(written ? errno : saved)));
    }
    return {};
  }
  const std::filesystem::path target_path(path);
  const std::string dir = target_path.has_parent_path() ? target_path.parent_path().string() : ".";
  std::string temp =
      (std::filesystem::path(dir) / ("." + target_path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0)
    return make_error(ErrorCode::io, fmt::format("{}: cannot write ({})", path, std::strerror(errno)));
  std::size_t done = 0;
  int error = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  // mkstemp makes the file 0600; give it the mode a plain create would (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (error == 0 && ::fchmod(fd, 0666 & ~mask) != 0) error = errno;
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    return make_error(ErrorCode::io, fmt::format("{}: cannot write ({})", path, std::strerror(error)));
  }
  return {};
}

Result<nlohmann::json> read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::not_found, fmt::format("{}: cannot open file", path));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    return make_error(ErrorCode::invalid_input, fmt::format("{}: not valid JSON ({})", path, e.what()));
  }
}

void print_json(const nlohmann::json& document) {
  const std::string text = sanitize(document).dump();
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
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
