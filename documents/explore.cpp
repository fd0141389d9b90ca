// The `explore --json` document (docs/simulator.md lists its fields): written, and read back.
#include "documents/explore.h"

#include <limits>
#include <utility>

#include "core/json_fields.h"
#include "documents/bounds.h"
#include "documents/interval.h"
#include "documents/kind.h"
#include "documents/model.h"
#include "documents/nccl.h"

namespace lagom::documents {

nlohmann::json explore_json(const search::ExploreResult& result, const model::Strategy& base,
                            const model::ClusterSpec& cluster, const model::WorkloadSpec& workload,
                            search::Framework framework) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& entry : result.results) {
    results.push_back(
        {{"strategy", model::to_json(entry.strategy)},
         {"iteration_time_s", entry.result.iteration_time_s},
         {"interval", interval_json(model::interval_for(model::regime_of(cluster, entry.strategy, workload),
                                                        entry.strategy.gpus),
                                    {{"iteration_time_s", entry.result.iteration_time_s}})},
         {"tokens_per_s", entry.result.tokens_per_s},
         {"mfu", entry.result.mfu},
         {"memory_gib_per_gpu_total", entry.result.memory.total},
         {"memory_margin_gib", entry.result.memory_budget_gib - entry.result.memory.total}});
  }
  nlohmann::json doc = {{"model", workload.name},
                        {"model_shape", model_shape_json(workload)},
                        {"cluster",
                         {{"name", cluster.name},
                          {"nodes", cluster.nodes},
                          {"gpus_per_node", cluster.gpus_per_node},
                          {"gpu", cluster.gpu.name},
                          {"nccl", nccl_json(cluster)}}},
                        {"gpus", base.gpus},
                        {"memory_budget_gib", cluster.gpu.memory_budget_gib()},
                        {"memory_reserve_gib", cluster.gpu.memory_reserve_gib},
                        {"global_batch", base.global_batch},
                        {"evaluated", result.evaluated},
                        {"pruned", result.pruned},
                        {"out_of_memory", result.out_of_memory},
                        {"simulated", result.simulated},
                        {"elapsed_s", result.elapsed_s},
                        {"results", std::move(results)}};
  if (framework != search::Framework::any) {
    const search::FrameworkProfile& profile = search::framework_profile(framework);
    doc["framework"] = {{"name", std::string(profile.name)}, {"version", std::string(profile.version)}};
  }
  return stamp(Kind::explore, std::move(doc));
}

namespace {

Result<ExploreEntry> read_entry(const FieldReader& r) {
  ExploreEntry e;
  LAGOM_TRY(e.iteration_time_s, read_quantity(r, "iteration_time_s"));
  LAGOM_TRY(e.memory_gib_per_gpu_total, read_quantity(r, "memory_gib_per_gpu_total"));
  LAGOM_TRY(e.tokens_per_s, read_quantity(r, "tokens_per_s"));
  LAGOM_TRY(e.mfu, read_quantity(r, "mfu"));
  LAGOM_TRY(const FieldReader strategy, r.object("strategy"));
  LAGOM_TRY(e.strategy, read_strategy_view(strategy));
  return e;
}

}  // namespace

Result<ExploreView> read_explore(const nlohmann::json& document, const std::string& source) {
  LAGOM_TRY_STATUS(require_object(document, source));
  // Later versions may add fields: the ones read are checked, the others left alone.
  const FieldReader top(document, source, "", UnknownFields::ignore);
  constexpr auto k_most = std::numeric_limits<std::int64_t>::max();
  ExploreView v;
  LAGOM_TRY(const nlohmann::json* results, top.array("results"));
  for (std::size_t i = 0; i < results->size(); ++i) {
    LAGOM_TRY(const FieldReader entry, top.element("results", *results, i));
    LAGOM_TRY(ExploreEntry e, read_entry(entry));
    v.results.push_back(std::move(e));
  }
  LAGOM_TRY(v.model, top.string("model", std::nullopt));
  LAGOM_TRY(const FieldReader cluster, top.object("cluster"));
  LAGOM_TRY(v.cluster, read_cluster_view(cluster));
  LAGOM_TRY(v.gpus, top.integer("gpus", std::nullopt));
  LAGOM_TRY(v.evaluated, top.integer("evaluated", std::nullopt, 0, k_most));
  LAGOM_TRY(v.simulated, top.integer("simulated", std::nullopt, 0, k_most));
  LAGOM_TRY(v.global_batch, top.integer("global_batch", std::nullopt, 1, k_most));
  return v;
}

}  // namespace lagom::documents
