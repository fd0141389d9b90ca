// The `presets --json` document (kind "presets", docs/cli.md#lagom-presets): the cluster and model presets
// by name with a few fields each (`presets --show NAME --json` prints a spec file, not a document).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lagom::documents {

struct PresetClusterRow {
  std::string name, description;
  std::optional<int> gpus_per_node;  // none for localhost: it is whatever the profile found
  std::optional<std::string> gpu;
};

struct PresetModelRow {
  std::string name;
  int layers = 0;
  long hidden = 0;
  int heads = 0, kv_heads = 0;
  double parameters = 0;  // a count
  bool moe = false;
};

struct PresetsDocument {
  std::vector<PresetClusterRow> clusters;
  std::vector<PresetModelRow> models;
};

// Stamped with its kind and version.
nlohmann::json to_json(const PresetsDocument& document);

}  // namespace lagom::documents
