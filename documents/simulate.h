// The `simulate --json` document (kind "simulate"; docs/simulator.md lists its fields).
#pragma once

#include <nlohmann/json.hpp>

#include "model/specs.h"
#include "simulator/simulator.h"

namespace lagom::documents {

// Stamped with its kind and version (documents/kind.h).
nlohmann::json simulation_json(const simulator::SimulationResult& result, const model::Strategy& strategy,
                               const model::ClusterSpec& cluster, const model::WorkloadSpec& workload);

}  // namespace lagom::documents
