// Plain text and markup for what commands print: an aligned table whose non-data lines start with '#'
// (so awk and grep work on it), and text made safe inside XML/HTML (JUnit files, report pages).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lagom {

// `text` safe inside XML/HTML text and double-quoted attributes (& < > " escaped): JUnit files, reports.
std::string markup_escape(std::string_view text);

// A column-aligned table. Columns are right-aligned except those marked left.
class TextTable {
 public:
  struct Column {
    std::string title;
    bool left = false;
  };
  explicit TextTable(std::vector<Column> columns);
  void add_row(std::vector<std::string> cells);
  // Renders "# title  title ..." then one aligned line per row.
  [[nodiscard]] std::string render() const;

 private:
  std::vector<Column> m_columns;
  std::vector<std::vector<std::string>> m_rows;
};

}  // namespace lagom
