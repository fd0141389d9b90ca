// The JSON documents the commands print with --json, one file each (cli/json_<command>.cpp), so a field
// is added in one place and `lagom check` / `lagom report` read what the writers write. The fields are
// documented in docs/simulator.md (simulate, explore) and docs/search.md (tune).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/specs.h"
#include "search/explore.h"
#include "search/outputs.h"
#include "search/search.h"
#include "simulator/simulator.h"

namespace lagom::cli {

// `simulate --json`.
nlohmann::json simulation_json(const simulator::SimulationResult& result, const model::Strategy& strategy,
                               const model::ClusterSpec& cluster, const model::WorkloadSpec& workload);

// `explore --json`: `base` carries the GPUs and the global batch explored.
nlohmann::json explore_json(const search::ExploreResult& result, const model::Strategy& base,
                            const model::ClusterSpec& cluster, const model::WorkloadSpec& workload);

// Tune's predicted speedup split, each against the same baseline (NCCL's defaults, the strategy's framework
// knobs): the NCCL knobs alone, the framework knobs alone, both.
struct SpeedupSplit {
  double nccl = 1, framework = 1, both = 1;
};

// `tune --json`; `note` is added when not empty, the grid and the trials with `explain`.
nlohmann::json tune_json(const search::Problem& problem, const search::TuneResult& result,
                         const SpeedupSplit& split, const std::string& out_dir, const std::string& note,
                         bool explain);
// The grid of a tune result: every decision with its scope and option labels.
nlohmann::json grid_json(const search::TuneResult& result);

}  // namespace lagom::cli
