// The `presets --json` document.
#include "documents/presets.h"

#include <utility>

#include "documents/kind.h"

namespace lagom::documents {

nlohmann::json to_json(const PresetsDocument& document) {
  nlohmann::json clusters = nlohmann::json::array();
  for (const auto& c : document.clusters) {
    nlohmann::json row = {{"name", c.name}, {"description", c.description}};
    if (c.gpus_per_node) row["gpus_per_node"] = *c.gpus_per_node;
    if (c.gpu) row["gpu"] = *c.gpu;
    clusters.push_back(std::move(row));
  }
  nlohmann::json models = nlohmann::json::array();
  for (const auto& w : document.models) {
    models.push_back({{"name", w.name},
                      {"layers", w.layers},
                      {"hidden", w.hidden},
                      {"heads", w.heads},
                      {"kv_heads", w.kv_heads},
                      {"parameters", w.parameters},
                      {"moe", w.moe}});
  }
  return stamp(Kind::presets, {{"clusters", std::move(clusters)}, {"models", std::move(models)}});
}

}  // namespace lagom::documents
