// The `simulate --json` document (kind "simulate"; docs/simulator.md lists its fields).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "model/specs.h"
#include "plan/plan.h"
#include "simulator/simulator.h"

namespace lagom::documents {

// What a `--comm-config` applied (`comm_config`): its file and the knobs the run used (the config's overlap
// knobs replace the strategy's).
struct SimulateCommConfig {
  std::string file;
  model::OverlapMethod tp_overlap;
  double bucket_mb = 0;
  int fsdp_prefetch = 1;
  std::size_t op_classes = 0, communicators = 0;  // the op classes and communicators it sets
};

// What `lagom simulate` adds beyond the simulation: the comm config applied, the whole run priced
// (`run`, --tokens: plan_row_json).
struct SimulateExtras {
  std::optional<SimulateCommConfig> comm_config;
  std::optional<plan::PlanRow> run;
};

// The cluster a simulate document names (`cluster`: its name and GPU), each "" where the document does not
// say (a document made by hand, or cut down).
struct SimulatedCluster {
  std::string name, gpu;
};
SimulatedCluster simulated_cluster(const nlohmann::json& simulate_document);

// Stamped with its kind and version (documents/kind.h).
nlohmann::json simulation_json(const simulator::SimulationResult& result, const model::Strategy& strategy,
                               const model::ClusterSpec& cluster, const model::WorkloadSpec& workload,
                               const SimulateExtras& extras = {});

}  // namespace lagom::documents
