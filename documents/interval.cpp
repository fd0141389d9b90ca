#include "documents/interval.h"

namespace lagom::documents {

nlohmann::json interval_json(const model::PredictionInterval& interval,
                             const std::vector<std::pair<std::string, double>>& figures) {
  nlohmann::json out = {{"level", model::k_interval_level}};
  for (const auto& [field, predicted] : figures) {
    const auto range = interval.of(predicted);
    out[field] = range ? nlohmann::json::array({range->first, range->second}) : nlohmann::json();
  }
  const model::Regime* r = interval.regime;
  out["regime"] = r != nullptr ? nlohmann::json(model::regime_name(*r)) : nlohmann::json();
  out["runs"] = r != nullptr ? nlohmann::json(r->runs) : nlohmann::json();
  out["data"] = r != nullptr ? nlohmann::json(r->data) : nlohmann::json();
  out["held_out_coverage"] =
      r != nullptr && r->held_out_coverage ? nlohmann::json(*r->held_out_coverage) : nlohmann::json();
  out["source"] = interval.source();
  out["differs"] = interval.differs;
  out["extrapolated"] =
      interval.extrapolated.empty() ? nlohmann::json() : nlohmann::json(interval.extrapolated);
  out["why"] = interval.why.empty() ? nlohmann::json() : nlohmann::json(interval.why);
  return out;
}

}  // namespace lagom::documents
