// The `simulate --json` document (docs/simulator.md lists its fields).
#include "documents/simulate.h"

#include <utility>

#include "documents/kind.h"
#include "documents/model.h"
#include "documents/plan.h"
#include "simulator/simulator.h"

namespace lagom::documents {

SimulatedCluster simulated_cluster(const nlohmann::json& doc) {
  SimulatedCluster out;
  if (!doc.is_object() || !doc.contains("cluster") || !doc["cluster"].is_object()) return out;
  const nlohmann::json& cluster = doc["cluster"];
  auto text = [&](const char* key) {
    return cluster.contains(key) && cluster[key].is_string() ? cluster[key].get<std::string>()
                                                             : std::string();
  };
  out.name = text("name");
  out.gpu = text("gpu");
  return out;
}

nlohmann::json simulation_json(const simulator::SimulationResult& r, const model::Strategy& strategy,
                               const model::ClusterSpec& cluster, const model::WorkloadSpec& workload,
                               const SimulateExtras& extras) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& b : r.stages) {
    stages.push_back({{"compute", b.compute_s},
                      {"exposed_comm", b.exposed_comm_s},
                      {"pipeline_bubble", b.pipeline_bubble_s},
                      {"optimizer", b.optimizer_s}});
  }
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& c : r.op_classes) {
    ops.push_back({{"name", simulator::op_class_name(c.key)},
                   {"collective", std::string(model::to_string(c.key.collective))},
                   {"group", std::string(model::to_string(c.key.group))},
                   {"bytes", c.key.bytes},
                   {"ranks", c.shape.ranks},
                   {"nodes", c.shape.nodes},
                   {"count", c.count},
                   {"time_us", c.time_us}});
  }
  nlohmann::json doc = {{"model", workload.name},
                        {"model_shape", model_shape_json(workload)},
                        {"iteration_time_s", r.iteration_time_s},
                        {"tokens_per_s", r.tokens_per_s},
                        {"model_tflops_per_gpu", r.model_tflops_per_gpu},
                        {"hardware_tflops_per_gpu", r.hardware_tflops_per_gpu},
                        {"mfu", r.mfu},
                        {"hfu", r.hfu},
                        {"breakdown_s",
                         {{"compute", r.breakdown.compute_s},
                          {"exposed_comm", r.breakdown.exposed_comm_s},
                          {"pipeline_bubble", r.breakdown.pipeline_bubble_s},
                          {"optimizer", r.breakdown.optimizer_s}}},
                        {"stage_breakdown_s", std::move(stages)},
                        {"memory_gib_per_gpu",
                         {{"weights", r.memory.weights},
                          {"grads", r.memory.grads},
                          {"optimizer", r.memory.optimizer},
                          {"activations", r.memory.activations},
                          {"optimizer_step", r.memory.optimizer_step},
                          {"total", r.memory.total}}},
                        {"fits_in_memory", r.fits_in_memory},
                        {"memory_stage", r.memory.stage},
                        {"memory_budget_gib", r.memory_budget_gib},
                        {"memory_reserve_gib", cluster.gpu.memory_reserve_gib},
                        {"memory_margin_gib", r.memory_budget_gib - r.memory.total},
                        {"strategy", model::to_json(strategy)},
                        {"cluster",
                         {{"name", cluster.name},
                          {"nodes", cluster.nodes},
                          {"gpus_per_node", cluster.gpus_per_node},
                          {"gpu", cluster.gpu.name}}},
                        {"op_classes", std::move(ops)},
                        {"tasks", r.tasks}};
  if (extras.comm_config) {
    const SimulateCommConfig& c = *extras.comm_config;
    doc["comm_config"] = {{"file", c.file},
                          {"tp_overlap", std::string(model::to_string(c.tp_overlap))},
                          {"bucket_mb", c.bucket_mb},
                          {"fsdp_prefetch", c.fsdp_prefetch},
                          {"op_classes", c.op_classes},
                          {"communicators", c.communicators}};
  }
  if (extras.run) doc["run"] = plan_row_json(*extras.run);
  return stamp(Kind::simulate, std::move(doc));
}

}  // namespace lagom::documents
