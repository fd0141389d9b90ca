// The `explore --json` document (docs/simulator.md lists its fields).
#include "documents/explore.h"

#include "documents/kind.h"
#include "documents/model.h"

namespace lagom::documents {

nlohmann::json explore_json(const search::ExploreResult& result, const model::Strategy& base,
                            const model::ClusterSpec& cluster, const model::WorkloadSpec& workload,
                            search::Framework framework) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& entry : result.results) {
    results.push_back({{"strategy", model::to_json(entry.strategy)},
                       {"iteration_time_s", entry.result.iteration_time_s},
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
                          {"gpu", cluster.gpu.name}}},
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

}  // namespace lagom::documents
