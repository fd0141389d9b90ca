// The presets of docs/model.md#presets: clusters (datasheet numbers, sources in presets.cpp) and workloads.
// `localhost` is listed as a cluster name but has no preset spec: it is resolved from a profile
// (cluster_from_calibration in model/cost_model.h).
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "model/specs.h"

namespace lagom::model {

inline constexpr const char* k_localhost = "localhost";

const std::vector<ClusterSpec>& cluster_presets();
const std::vector<WorkloadSpec>& workload_presets();

// Names in the order of docs/model.md#presets (as `lagom presets` lists them); cluster names include
// "localhost".
std::vector<std::string> cluster_preset_names();
std::vector<std::string> workload_preset_names();

// A preset by exact name (not_found error "unknown cluster preset 'x' (see 'lagom presets')").
// cluster_preset("localhost") is an unavailable error telling to run 'lagom profile' (the CLI resolves
// localhost through the profile database before it gets here).
Result<ClusterSpec> cluster_preset(const std::string& name);
Result<WorkloadSpec> workload_preset(const std::string& name);

}  // namespace lagom::model
