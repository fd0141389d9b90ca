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

// The resolved shape of a workload, `model_shape` in every document that prices one: layers, hidden, heads,
// kv_heads, head_dim, ffn_hidden, ffn_type, vocab, seq, tied_embeddings, parameters (a count),
// flops_per_token (model FLOPs, forward and backward, per token); encoder/decoder layers and moe when set.
nlohmann::json model_shape_json(const model::WorkloadSpec& workload);
// The same as one '#' line of the human outputs.
std::string model_shape_text(const model::WorkloadSpec& workload);
// Model FLOPs per token of one sequence, forward and backward (0 without a sequence length).
double flops_per_token(const model::WorkloadSpec& workload);

// `simulate --json`.
nlohmann::json simulation_json(const simulator::SimulationResult& result, const model::Strategy& strategy,
                               const model::ClusterSpec& cluster, const model::WorkloadSpec& workload);

// `explore --json`: `base` carries the GPUs and the global batch explored.
nlohmann::json explore_json(const search::ExploreResult& result, const model::Strategy& base,
                            const model::ClusterSpec& cluster, const model::WorkloadSpec& workload);

// Tune's predicted speedup split, each against the same baseline (NCCL's defaults, the strategy's framework
// knobs): the NCCL knobs alone, the framework knobs alone, both.
struct SpeedupSplit {
  double nccl = 1, framework = 1;  // both: TuneResult::speedup()
};

// `tune --json`; `note` is added when not empty, the grid and the trials with `explain`.
nlohmann::json tune_json(const search::Problem& problem, const search::TuneResult& result,
                         const SpeedupSplit& split, const std::string& out_dir, const std::string& note,
                         bool explain);
// The grid of a tune result: every decision with its scope and option labels.
nlohmann::json grid_json(const search::TuneResult& result);

}  // namespace lagom::cli
