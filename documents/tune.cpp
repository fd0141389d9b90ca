// The `tune --json` document (docs/search.md lists its fields). The per-op-class entries come from
// ops_json (documents/lagom_config.h), the one writer they share with lagom-config.json.
#include "documents/tune.h"

#include "documents/kind.h"
#include "documents/lagom_config.h"
#include "documents/model.h"
#include "search/framework.h"
#include "simulator/comm_config.h"

namespace lagom::documents {

nlohmann::json grid_json(const search::TuneResult& r) {
  nlohmann::json grid = nlohmann::json::array();
  auto add = [&](const search::Decision& d) {
    nlohmann::json options = nlohmann::json::array();
    for (const auto& o : d.options) options.push_back(o.label);
    grid.push_back({{"decision", d.name}, {"scope", d.scope}, {"options", std::move(options)}});
  };
  for (const auto& d : r.structural) add(d);
  for (const auto& d : r.decisions) add(d);
  return grid;
}

nlohmann::json tune_json(const search::Problem& problem, const search::TuneResult& result,
                         const SpeedupSplit& split, const std::string& out_dir, const std::string& note,
                         bool explain) {
  nlohmann::json ops = ops_json(problem, result);
  nlohmann::json doc = {{"search", std::string(search::to_string(result.search))},
                        {"runtime", std::string(model::to_string(result.runtime))},
                        {"model", problem.workload->name},
                        {"model_shape", model_shape_json(*problem.workload)},
                        {"op_classes", result.result.op_classes.size()},
                        {"evaluations", result.evaluations},
                        {"search_time_s", result.search_time_s},
                        {"predicted_iteration_time_s", result.predicted_iteration_s()},
                        {"baseline_iteration_time_s", result.baseline_iteration_s()},
                        {"speedup", result.speedup()},
                        {"speedup_nccl", split.nccl},
                        {"speedup_framework", split.framework},
                        {"memory_gib_per_gpu_total", result.result.memory.total},
                        {"memory_margin_gib", result.result.memory_budget_gib - result.result.memory.total},
                        {"grid_options", result.grid_options},
                        {"oracle_evaluations", result.oracle_evaluations},
                        {"comm_knobs_searched", result.comm_knobs_searched},
                        {"overlap", simulator::overlap_json(result.assignment)},
                        {"out", out_dir},
                        {"ops", std::move(ops)}};
  if (!note.empty()) doc["note"] = note;
  if (explain) {
    nlohmann::json trials = nlohmann::json::array();
    for (const auto& t : result.trials) {
      trials.push_back({{"decision", t.decision},
                        {"option", t.option},
                        {"iteration_us", t.iteration_us},
                        {"compute_us", t.compute_us},
                        {"comm_us", t.comm_us},
                        {"note", t.note}});
    }
    doc["explain"] = {{"grid", grid_json(result)}, {"trials", std::move(trials)}, {"notes", result.notes}};
  }
  if (problem.space.framework != search::Framework::any) {
    doc["framework"] =
        search::framework_json(search::framework_profile(problem.space.framework), *problem.workload,
                               problem.space.strategy, search::framework_knobs(result));
  }
  return stamp(Kind::tune, std::move(doc));
}

}  // namespace lagom::documents
