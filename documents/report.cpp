// The `report --json` document.
#include "documents/report.h"

#include <utility>

#include "documents/kind.h"

namespace lagom::documents {

nlohmann::json to_json(const ReportDocument& document) {
  nlohmann::json sections = nlohmann::json::array();
  for (const auto& s : document.sections) sections.push_back({{"kind", s.kind}, {"source", s.source}});
  return stamp(Kind::report,
               {{"out", document.out}, {"bytes", document.bytes}, {"sections", std::move(sections)}});
}

}  // namespace lagom::documents
