// The `tune --json` document (kind "tune"; docs/search.md lists its fields). Its per-op-class entries come
// from ops_json (documents/lagom_config.h), the one writer they share with lagom-config.json; read_tune reads
// the tune's result from either document.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "search/outputs.h"
#include "search/search.h"

namespace lagom::documents {

// Tune's predicted speedup split, each against the same baseline (NCCL's defaults, the strategy's framework
// knobs): the NCCL knobs alone, the framework knobs alone, both.
struct SpeedupSplit {
  double nccl = 1, framework = 1;  // both: TuneResult::speedup()
};

// `note` is added when not empty, the grid and the trials with `explain`, under a framework profile
// (problem.space.framework) its settings (`framework`: documents::framework_json, as lagom-config.json has
// them). Stamped with its kind and version.
nlohmann::json tune_json(const search::Problem& problem, const search::TuneResult& result,
                         const SpeedupSplit& split, const std::string& out_dir, const std::string& note,
                         bool explain);
// The grid of a tune result: every decision with its scope and option labels.
nlohmann::json grid_json(const search::TuneResult& result);

// NCCL's own choice for an op class (ops[].default) and its predicted time.
struct OpDefault {
  std::string algo, proto;
  int channels = 0;
  double time_us = 0;
};
// One ops[] entry as a reader of the tune's result shows it: the knobs chosen, the predicted time of one
// call, the calls per iteration and NCCL's own choice.
struct TunedOp {
  std::string name;          // the op class, e.g. "dp.allreduce.25165824"
  double count = 0;          // calls per iteration
  std::int64_t bytes = 0;    // nccl-tests' size of one call, >= 0 (0 where a hand-written file has none)
  int ranks = 0, nodes = 0;  // the communicator: ranks >= 1, nodes >= 1 (0 where an older file has none)
  std::string algo, proto;
  int channels = 0;
  double predicted_time_us = 0;
  std::string scope;                      // where the choice applies, e.g. "per call (tuner plugin)"
  std::optional<OpDefault> nccl_default;  // none in documents from before `default` was written
};
// A tune --json document or a lagom-config.json (every version) as read back: the search, its prediction
// against NCCL's defaults, and the op classes.
struct TuneView {
  std::string search, runtime;
  double predicted_iteration_time_s = 0, baseline_iteration_time_s = 0, speedup = 0;
  std::int64_t evaluations = 0;
  // lagom-config.json names the model and the cluster tuned for; tune --json does not (it names the model
  // alone: both are none then).
  std::optional<std::string> model, cluster;
  std::vector<TunedOp> ops;
};
// Every field is checked by the one field reader: invalid_input "<source>: <path>: <why>" (e.g.
// "t.json: ops[0].default.time_us: required"); fields it does not read are left alone.
Result<TuneView> read_tune(const nlohmann::json& document, const std::string& source);

}  // namespace lagom::documents
