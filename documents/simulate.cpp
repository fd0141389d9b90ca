// The `simulate --json` document (docs/simulator.md lists its fields): written, and read back.
#include "documents/simulate.h"

#include <limits>
#include <utility>

#include "core/json_fields.h"
#include "documents/bounds.h"
#include "documents/interval.h"
#include "documents/kind.h"
#include "documents/model.h"
#include "documents/nccl.h"
#include "documents/plan.h"
#include "simulator/simulator.h"

namespace lagom::documents {

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
  nlohmann::json doc = {
      {"model", workload.name},
      {"model_shape", model_shape_json(workload)},
      {"iteration_time_s", r.iteration_time_s},
      {"interval",
       interval_json(model::interval_for(model::regime_of(cluster, strategy, workload), strategy.gpus),
                     {{"iteration_time_s", r.iteration_time_s}})},
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
        {"gpu", cluster.gpu.name},
        {"nccl", nccl_json(cluster)}}},
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

namespace {

Result<SimulatePhases> read_phases(const FieldReader& r) {
  SimulatePhases p;
  LAGOM_TRY(p.compute, read_quantity(r, "compute"));
  LAGOM_TRY(p.exposed_comm, read_quantity(r, "exposed_comm"));
  LAGOM_TRY(p.pipeline_bubble, read_quantity(r, "pipeline_bubble"));
  LAGOM_TRY(p.optimizer, read_quantity(r, "optimizer"));
  return p;
}

Result<SimulateMemory> read_memory(const FieldReader& r) {
  SimulateMemory m;
  LAGOM_TRY(m.weights, read_quantity(r, "weights"));
  LAGOM_TRY(m.grads, read_quantity(r, "grads"));
  LAGOM_TRY(m.optimizer, read_quantity(r, "optimizer"));
  LAGOM_TRY(m.activations, read_quantity(r, "activations"));
  LAGOM_TRY(m.total, read_quantity(r, "total"));
  return m;
}

Result<SimulateOpClass> read_op_class(const FieldReader& r) {
  SimulateOpClass o;
  LAGOM_TRY(o.count, read_quantity(r, "count"));
  LAGOM_TRY(o.time_us, read_quantity(r, "time_us"));
  LAGOM_TRY(o.name, r.string("name", std::nullopt));
  LAGOM_TRY(o.collective, r.string("collective", std::nullopt));
  LAGOM_TRY(o.group, r.string("group", std::nullopt));
  LAGOM_TRY(o.bytes, r.integer("bytes", std::nullopt, 0, std::numeric_limits<std::int64_t>::max()));
  LAGOM_TRY(o.ranks, r.integer("ranks", std::nullopt));
  LAGOM_TRY(o.nodes, r.integer("nodes", std::nullopt));
  return o;
}

// The results: the stages, the breakdown, memory, the op classes and the headline numbers.
Status read_results(const FieldReader& top, SimulateView& v) {
  LAGOM_TRY(const nlohmann::json* stages, top.array("stage_breakdown_s"));
  for (std::size_t i = 0; i < stages->size(); ++i) {
    LAGOM_TRY(const FieldReader stage, top.element("stage_breakdown_s", *stages, i));
    LAGOM_TRY(SimulatePhases p, read_phases(stage));
    v.stages.push_back(p);
  }
  LAGOM_TRY(const FieldReader breakdown, top.object("breakdown_s"));
  LAGOM_TRY(v.breakdown, read_phases(breakdown));
  LAGOM_TRY(const FieldReader memory, top.object("memory_gib_per_gpu"));
  LAGOM_TRY(v.memory, read_memory(memory));
  LAGOM_TRY(const nlohmann::json* ops, top.array("op_classes"));
  for (std::size_t i = 0; i < ops->size(); ++i) {
    LAGOM_TRY(const FieldReader op, top.element("op_classes", *ops, i));
    LAGOM_TRY(SimulateOpClass o, read_op_class(op));
    v.op_classes.push_back(std::move(o));
  }
  LAGOM_TRY(v.iteration_time_s, read_quantity(top, "iteration_time_s"));
  LAGOM_TRY(v.tokens_per_s, read_quantity(top, "tokens_per_s"));
  LAGOM_TRY(v.mfu, read_quantity(top, "mfu"));
  LAGOM_TRY(v.model_tflops_per_gpu, read_quantity(top, "model_tflops_per_gpu"));
  LAGOM_TRY(v.fits_in_memory, top.boolean("fits_in_memory", std::nullopt));
  // Written since the memory reserve: older documents judged fits_in_memory against the GPU's capacity.
  if (top.has("memory_budget_gib")) {
    LAGOM_TRY(v.memory_budget_gib, read_quantity(top, "memory_budget_gib"));
  }
  return {};
}

}  // namespace

Result<SimulateView> read_simulate(const nlohmann::json& document, const std::string& source) {
  LAGOM_TRY_STATUS(require_object(document, source));
  // Later versions may add fields: the ones read are checked, the others left alone.
  const FieldReader top(document, source, "", UnknownFields::ignore);
  SimulateView v;
  LAGOM_TRY_STATUS(read_results(top, v));
  LAGOM_TRY(v.model, top.string("model", std::nullopt));
  LAGOM_TRY(const FieldReader cluster, top.object("cluster"));
  LAGOM_TRY(v.cluster, read_cluster_view(cluster));
  LAGOM_TRY(const FieldReader strategy, top.object("strategy"));
  LAGOM_TRY(v.strategy, read_strategy_view(strategy));
  LAGOM_TRY(v.gpus, strategy.integer("gpus", std::nullopt));
  if (v.stages.empty()) return top.error("stage_breakdown_s", "no stage");
  if (top.has("interval")) {
    LAGOM_TRY(const FieldReader interval, top.object("interval"));
    v.has_interval = true;
    LAGOM_TRY(v.interval_source, interval.string("source", std::string()));
    if (interval.has("iteration_time_s")) {
      LAGOM_TRY(const nlohmann::json* range, interval.array("iteration_time_s"));
      if (range->size() != 2 || !(*range)[0].is_number() || !(*range)[1].is_number() ||
          !(0 <= (*range)[0].get<double>() && (*range)[0].get<double>() <= (*range)[1].get<double>())) {
        return interval.error("iteration_time_s", "must be [low, high] with 0 <= low <= high, or null");
      }
      v.interval = std::make_pair((*range)[0].get<double>(), (*range)[1].get<double>());
    }
  }
  if (v.memory_budget_gib && *v.memory_budget_gib <= 0) {
    return top.error("memory_budget_gib", "must be a positive number");
  }
  return v;
}

ClusterNames simulated_cluster_names(const nlohmann::json& document) {
  ClusterNames names;
  if (!document.is_object() || !document.contains("cluster") || !document["cluster"].is_object())
    return names;
  const FieldReader cluster(document["cluster"], "", "", UnknownFields::ignore);
  const auto text = [&](const char* field) {
    auto read = cluster.string(field, std::string());
    return read.ok() ? std::move(read).value() : std::string();
  };
  names.cluster = text("name");
  names.gpu = text("gpu");
  return names;
}

}  // namespace lagom::documents
