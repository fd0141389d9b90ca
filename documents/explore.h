// The `explore --json` document (kind "explore"; docs/simulator.md lists its fields): its writer and its
// reader (what `lagom report` draws).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "documents/setup.h"
#include "model/specs.h"
#include "search/explore.h"
#include "search/framework.h"

namespace lagom::documents {

// `base` carries the GPUs and the global batch explored; under a framework profile (`framework`, not any)
// its name and version are added. Stamped with its kind and version.
nlohmann::json explore_json(const search::ExploreResult& result, const model::Strategy& base,
                            const model::ClusterSpec& cluster, const model::WorkloadSpec& workload,
                            search::Framework framework = search::Framework::any);

// One results[] entry: a strategy that fits in memory and its simulated iteration.
struct ExploreEntry {
  StrategyView strategy;
  double iteration_time_s = 0, tokens_per_s = 0, mfu = 0;
  double memory_gib_per_gpu_total = 0;
};
// An explore document as read back, of every version.
struct ExploreView {
  std::string model;
  ClusterView cluster;
  int gpus = 1;
  std::int64_t global_batch = 1;
  std::int64_t evaluated = 0, simulated = 0;  // strategies enumerated, and those simulated
  std::vector<ExploreEntry> results;          // best first; empty when none fit in memory
};
// Every field is checked by the one field reader: invalid_input "<source>: <path>: <why>" (e.g.
// "e.json: results[1].strategy.pp: required"); fields it does not read are left alone.
Result<ExploreView> read_explore(const nlohmann::json& document, const std::string& source);

}  // namespace lagom::documents
