#include "core/text.h"

#include <algorithm>

#include <fmt/format.h>

namespace lagom {

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

TextTable::TextTable(std::vector<Column> columns) : m_columns(std::move(columns)) {}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(m_columns.size());
  m_rows.push_back(std::move(cells));
}

std::string TextTable::render() const {
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

}  // namespace lagom
