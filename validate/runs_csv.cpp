#include "validate/runs_csv.h"

#include <algorithm>
#include <csv.h>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/files.h"

namespace lagom::validate {

namespace {

std::string trim(std::string text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// One line's fields through libcsv (strict: a stray quote is an error).
Result<std::vector<std::string>> split_line(const std::string& line) {
  struct Fields {
    std::vector<std::string> values;
  } fields;
  csv_parser parser{};
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI) != 0) {
    return make_error(ErrorCode::failure, "cannot start the CSV parser");
  }
  auto on_field = [](void* data, std::size_t size, void* out) {
    static_cast<Fields*>(out)->values.emplace_back(static_cast<const char*>(data), size);
  };
  const std::size_t parsed = csv_parse(&parser, line.data(), line.size(), on_field, nullptr, &fields);
  const bool ok = parsed == line.size() && csv_fini(&parser, on_field, nullptr, &fields) == 0;
  const std::string why = ok ? std::string() : csv_strerror(csv_error(&parser));
  csv_free(&parser);
  if (!ok) return make_error(ErrorCode::invalid_input, "malformed CSV (" + why + ")");
  return fields.values;
}

}  // namespace

Status distinct_runs_files(const std::vector<std::string>& paths) {
  for (std::size_t i = 0; i < paths.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (paths[i] == paths[j] || files::same_file(paths[i], paths[j])) {
        return make_error(ErrorCode::invalid_input,
                          fmt::format("{}: given twice (as {})", paths[i], paths[j]));
      }
    }
  }
  return {};
}

Result<RunsTable> read_runs_table(const std::string& path) {
  LAGOM_TRY(const std::string content, files::read_input(path));
  std::istringstream in(content);
  RunsTable table;
  table.path = path;
  std::string line;
  int number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte-order mark
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    if (line.find('\0') != std::string::npos) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("{}:{}: not a text file (NUL byte)", path, number));
    }
    auto fields = split_line(text);
    if (!fields.ok())
      return make_error(ErrorCode::invalid_input,
                        fmt::format("{}:{}: {}", path, number, fields.error().message));
    std::vector<std::string> cells = std::move(fields).value();
    for (auto& cell : cells) cell = trim(cell);
    if (!header) {
      std::set<std::string> seen;
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (cells[i].empty()) {
          return make_error(ErrorCode::invalid_input,
                            fmt::format("{}:{}: column {} of the header has no name", path, number, i + 1));
        }
        if (!seen.insert(cells[i]).second) {
          return make_error(ErrorCode::invalid_input,
                            fmt::format("{}:{}: column '{}' appears twice", path, number, cells[i]));
        }
      }
      table.columns = std::move(cells);
      table.header_line = number;
      header = true;
      continue;
    }
    if (cells.size() != table.columns.size()) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("{}:{}: {} cells, the header has {} columns", path, number, cells.size(),
                                    table.columns.size()));
    }
    table.rows.push_back({number, std::move(cells)});
  }
  if (!header) return make_error(ErrorCode::invalid_input, path + ": no header row (and no runs)");
  return table;
}

}  // namespace lagom::validate
