// The `report --json` document (kind "report", docs/report.md): what `lagom report` wrote, the page's file
// and size and one entry per section (the kind of document drawn and where it came from).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lagom::documents {

struct ReportSectionRow {
  std::string kind;    // the kind of the document drawn (report/report.h's names)
  std::string source;  // its file, or "<db> run <id>"
};

struct ReportDocument {
  std::string out;        // the HTML file
  std::size_t bytes = 0;  // its size
  std::vector<ReportSectionRow> sections;
};

// Stamped with its kind and version.
nlohmann::json to_json(const ReportDocument& document);

}  // namespace lagom::documents
