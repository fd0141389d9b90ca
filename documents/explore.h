// The `explore --json` document (kind "explore"; docs/simulator.md lists its fields).
#pragma once

#include <nlohmann/json.hpp>

#include "model/specs.h"
#include "search/explore.h"
#include "search/framework.h"

namespace lagom::documents {

// `base` carries the GPUs and the global batch explored; under a framework profile (`framework`, not any)
// its name and version are added. Stamped with its kind and version.
nlohmann::json explore_json(const search::ExploreResult& result, const model::Strategy& base,
                            const model::ClusterSpec& cluster, const model::WorkloadSpec& workload,
                            search::Framework framework = search::Framework::any);

}  // namespace lagom::documents
