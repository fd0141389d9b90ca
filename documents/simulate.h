// The `simulate --json` document (kind "simulate"; docs/simulator.md lists its fields): its writer and its
// reader (what `lagom report` draws).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "documents/setup.h"
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

// Stamped with its kind and version (documents/kind.h).
nlohmann::json simulation_json(const simulator::SimulationResult& result, const model::Strategy& strategy,
                               const model::ClusterSpec& cluster, const model::WorkloadSpec& workload,
                               const SimulateExtras& extras = {});

// Where an iteration's time goes (breakdown_s, and per pipeline stage stage_breakdown_s[]), in seconds.
struct SimulatePhases {
  double compute = 0, exposed_comm = 0, pipeline_bubble = 0, optimizer = 0;
};
// memory_gib_per_gpu: the parts a reader shows and their total, GiB per GPU.
struct SimulateMemory {
  double weights = 0, grads = 0, optimizer = 0, activations = 0, total = 0;
};
// One op_classes[] entry: a collective of one size on one group, its calls per iteration summed over the
// pipeline stages and the time of one call.
struct SimulateOpClass {
  std::string name, collective, group;  // name: e.g. "dp.allreduce.25165824"
  std::int64_t bytes = 0;               // nccl-tests' size of one call
  int ranks = 1, nodes = 1;
  double count = 0, time_us = 0;
};
// A simulate document as read back, of every version.
struct SimulateView {
  std::string model;
  double iteration_time_s = 0, tokens_per_s = 0, mfu = 0, model_tflops_per_gpu = 0;
  SimulatePhases breakdown;
  std::vector<SimulatePhases> stages;  // one per pipeline stage; never empty
  SimulateMemory memory;
  bool fits_in_memory = false;
  // What fits_in_memory was judged against (usable memory less the reserve), > 0; none in documents from
  // before the reserve.
  std::optional<double> memory_budget_gib;
  ClusterView cluster;
  StrategyView strategy;
  int gpus = 1;  // strategy.gpus
  std::vector<SimulateOpClass> op_classes;
  // The iteration time's 90% interval and where it comes from (interval{}); documents from before the
  // intervals have none, and a scenario outside every validated regime has a source and no range.
  bool has_interval = false;
  std::optional<std::pair<double, double>> interval;
  std::string interval_source;
};
// Every field is checked by the one field reader: invalid_input "<source>: <path>: <why>" (e.g.
// "sim.json: stage_breakdown_s[1].optimizer: required"); fields it does not read are left alone.
Result<SimulateView> read_simulate(const nlohmann::json& document, const std::string& source);

// The names in a simulate document's cluster object, each empty where absent or not a string: what a
// caller looks a preset up by (the GPU's memory), never an error (read_simulate checks the document).
struct ClusterNames {
  std::string cluster, gpu;
};
ClusterNames simulated_cluster_names(const nlohmann::json& document);

}  // namespace lagom::documents
