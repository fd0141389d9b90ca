// The `tune --json` document (docs/search.md lists its fields). The per-op-class entries come from
// ops_json (documents/lagom_config.h), the one writer they share with lagom-config.json.
#include "documents/tune.h"

#include <limits>
#include <utility>

#include "core/json_fields.h"
#include "documents/bounds.h"
#include "documents/comm_config.h"
#include "documents/framework.h"
#include "documents/interval.h"
#include "documents/kind.h"
#include "documents/lagom_config.h"
#include "documents/model.h"
#include "documents/nccl.h"

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
  nlohmann::json doc = {
      {"search", std::string(search::to_string(result.search))},
      {"runtime", std::string(model::to_string(result.runtime))},
      {"model", problem.workload->name},
      {"model_shape", model_shape_json(*problem.workload)},
      {"nccl", nccl_json(*problem.cluster)},
      {"op_classes", result.result.op_classes.size()},
      {"evaluations", result.evaluations},
      {"search_time_s", result.search_time_s},
      {"predicted_iteration_time_s", result.predicted_iteration_s()},
      {"interval",
       interval_json(
           model::interval_for(model::regime_of(*problem.cluster, problem.space.strategy, *problem.workload),
                               problem.space.strategy.gpus),
           {{"predicted_iteration_time_s", result.predicted_iteration_s()}})},
      {"baseline_iteration_time_s", result.baseline_iteration_s()},
      {"speedup", result.speedup()},
      {"speedup_nccl", split.nccl},
      {"speedup_framework", split.framework},
      {"memory_gib_per_gpu_total", result.result.memory.total},
      {"memory_margin_gib", result.result.memory_budget_gib - result.result.memory.total},
      {"grid_options", result.grid_options},
      {"oracle_evaluations", result.oracle_evaluations},
      {"comm_knobs_searched", result.comm_knobs_searched},
      {"overlap", documents::overlap_json(result.assignment)},
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
        documents::framework_json(search::framework_profile(problem.space.framework), *problem.workload,
                                  problem.space.strategy, search::framework_knobs(result));
  }
  return stamp(Kind::tune, std::move(doc));
}

namespace {

Result<TunedOp> read_tuned_op(const FieldReader& r) {
  namespace f = op_field;
  TunedOp op;
  LAGOM_TRY(op.name, r.string(f::k_name, std::nullopt));
  LAGOM_TRY(op.count, read_quantity(r, f::k_count));
  // The call's size and communicator: an impossible one (a negative size, no ranks) is refused like a
  // negative time (documents/bounds.h), whichever command reads the document.
  LAGOM_TRY(op.bytes, r.integer(f::k_bytes, 0, 0, std::numeric_limits<std::int64_t>::max()));
  LAGOM_TRY(const std::int64_t ranks, r.integer(f::k_ranks, 0, 1));
  LAGOM_TRY(const std::int64_t nodes, r.integer(f::k_nodes, 0, 1));
  op.ranks = static_cast<int>(ranks);
  op.nodes = static_cast<int>(nodes);
  LAGOM_TRY(op.algo, r.string(f::k_algo, std::nullopt));
  LAGOM_TRY(op.proto, r.string(f::k_proto, std::nullopt));
  LAGOM_TRY(op.channels, r.integer(f::k_channels, std::nullopt, 0));
  LAGOM_TRY(op.predicted_time_us, read_quantity(r, f::k_predicted_time_us));
  LAGOM_TRY(op.scope, r.string(f::k_scope, std::nullopt));
  // Written since `lagom report` exists: older documents have no default.
  if (r.has(f::k_default)) {
    LAGOM_TRY(const FieldReader d, r.object(f::k_default));
    OpDefault nccl;
    LAGOM_TRY(nccl.algo, d.string(f::k_algo, std::nullopt));
    LAGOM_TRY(nccl.proto, d.string(f::k_proto, std::nullopt));
    LAGOM_TRY(nccl.channels, d.integer(f::k_channels, std::nullopt, 0));
    LAGOM_TRY(nccl.time_us, read_quantity(d, f::k_time_us));
    op.nccl_default = std::move(nccl);
  }
  return op;
}

}  // namespace

Result<TuneView> read_tune(const nlohmann::json& document, const std::string& source) {
  LAGOM_TRY_STATUS(require_object(document, source));
  // Later versions may add fields: the ones read are checked, the others left alone.
  const FieldReader top(document, source, "", UnknownFields::ignore);
  TuneView v;
  LAGOM_TRY(const nlohmann::json* ops, top.array(k_ops_field));
  for (std::size_t i = 0; i < ops->size(); ++i) {
    LAGOM_TRY(const FieldReader op, top.element(k_ops_field, *ops, i));
    LAGOM_TRY(TunedOp o, read_tuned_op(op));
    v.ops.push_back(std::move(o));
  }
  LAGOM_TRY(v.search, top.string("search", std::nullopt));
  LAGOM_TRY(v.runtime, top.string("runtime", std::nullopt));
  LAGOM_TRY(v.predicted_iteration_time_s, read_quantity(top, "predicted_iteration_time_s"));
  LAGOM_TRY(v.baseline_iteration_time_s, read_quantity(top, "baseline_iteration_time_s"));
  LAGOM_TRY(v.speedup, read_quantity(top, "speedup"));
  LAGOM_TRY(v.evaluations,
            top.integer("evaluations", std::nullopt, 0, std::numeric_limits<std::int64_t>::max()));
  // tune --json names the model too, but not the cluster: only the pair says what was tuned.
  if (top.has("model") && top.has("cluster")) {
    LAGOM_TRY(v.model, top.string("model", std::nullopt));
    LAGOM_TRY(v.cluster, top.string("cluster", std::nullopt));
  }
  return v;
}

}  // namespace lagom::documents
