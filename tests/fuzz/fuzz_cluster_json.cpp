// Fuzz target: a cluster file (`--cluster FILE`, docs/model.md): parsed, written back and read again (the
// round trip `lagom presets --show` relies on).
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "fuzz_input.h"
#include "model/specs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto document = nlohmann::json::parse(lagom::fuzz::text_of(data, size), nullptr, false);
  if (document.is_discarded()) return 0;
  auto cluster = lagom::model::parse_cluster(document, "cluster.json");
  if (!cluster) return 0;
  auto again = lagom::model::parse_cluster(lagom::model::to_json(cluster.value()), "cluster.json");
  if (!again) std::abort();
  return 0;
}
