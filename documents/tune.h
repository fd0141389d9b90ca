// The `tune --json` document (kind "tune"; docs/search.md lists its fields). Its per-op-class entries come
// from search::ops_json, the one writer they share with lagom-config.json.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "search/outputs.h"
#include "search/search.h"

namespace lagom::documents {

// Tune's predicted speedup split, each against the same baseline (NCCL's defaults, the strategy's framework
// knobs): the NCCL knobs alone, the framework knobs alone, both.
struct SpeedupSplit {
  double nccl = 1, framework = 1;  // both: TuneResult::speedup()
};

// `note` is added when not empty, the grid and the trials with `explain`, under a framework profile
// (problem.space.framework) its settings (`framework`: search::framework_json, as lagom-config.json has
// them). Stamped with its kind and version.
nlohmann::json tune_json(const search::Problem& problem, const search::TuneResult& result,
                         const SpeedupSplit& split, const std::string& out_dir, const std::string& note,
                         bool explain);
// The grid of a tune result: every decision with its scope and option labels.
nlohmann::json grid_json(const search::TuneResult& result);

}  // namespace lagom::documents
