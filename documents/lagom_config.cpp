// lagom-config.json (kind "lagom-config"): every decision of a tune, the op classes with their predicted
// times, and the tune's inputs; and the writing of all the files of `lagom tune --out` at once.
#include "documents/lagom_config.h"

#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/files.h"
#include "core/json_fields.h"
#include "documents/comm_config.h"
#include "documents/framework.h"
#include "documents/kind.h"
#include "documents/tune_inputs.h"

namespace lagom::documents {

nlohmann::json ops_json(const search::Problem& problem, const search::TuneResult& result) {
  namespace f = op_field;
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& r : search::op_reports(problem, result)) {
    nlohmann::json op = {{f::k_name, simulator::op_class_name(r.op.key)},
                         {f::k_collective, std::string(model::to_string(r.op.key.collective))},
                         {f::k_group, std::string(model::to_string(r.op.key.group))},
                         {f::k_bytes, r.op.key.bytes},
                         {f::k_ranks, r.op.shape.ranks},
                         {f::k_nodes, r.op.shape.nodes},
                         {f::k_count, r.op.count},
                         {f::k_algo, std::string(model::to_string(r.config.algo))},
                         {f::k_proto, std::string(model::to_string(r.config.proto))},
                         {f::k_channels, r.config.channels},
                         {f::k_threads, r.config.threads},
                         {f::k_chunk_bytes, r.config.chunk_bytes},
                         {f::k_scope, r.scope},
                         {f::k_predicted_time_us, r.op.time_us}};
    // Only a class on the copy engines carries a policy (simulate --comm-config reads it back).
    if (r.config.cta_policy != model::CtaPolicy::default_policy)
      op["cta_policy"] = std::string(model::to_string(r.config.cta_policy));
    if (r.default_config) {
      op[f::k_default] = {{f::k_algo, std::string(model::to_string(r.default_config->algo))},
                          {f::k_proto, std::string(model::to_string(r.default_config->proto))},
                          {f::k_channels, r.default_config->channels},
                          {f::k_time_us, r.default_time_us}};
    }
    ops.push_back(std::move(op));
  }
  return ops;
}

namespace {

Result<OpClassEntry> read_op(const FieldReader& op) {
  namespace f = op_field;
  OpClassEntry e;
  LAGOM_TRY(e.name, op.string(f::k_name, std::nullopt));
  LAGOM_TRY(e.collective, op.string(f::k_collective, std::nullopt));
  LAGOM_TRY(e.group, op.string(f::k_group, std::nullopt));
  LAGOM_TRY(e.bytes, op.integer(f::k_bytes, std::nullopt, 0, std::numeric_limits<std::int64_t>::max()));
  LAGOM_TRY(e.ranks, op.integer(f::k_ranks, std::nullopt));
  LAGOM_TRY(e.nodes, op.integer(f::k_nodes, std::nullopt));
  LAGOM_TRY(e.algo, op.string(f::k_algo, std::nullopt));
  LAGOM_TRY(e.proto, op.string(f::k_proto, std::nullopt));
  LAGOM_TRY(e.channels, op.integer(f::k_channels, std::nullopt, 0));
  LAGOM_TRY(e.predicted_time_us, op.number(f::k_predicted_time_us, std::nullopt));
  return e;
}

}  // namespace

Result<std::vector<OpClassEntry>> read_ops(const nlohmann::json& document, const std::string& origin) {
  LAGOM_TRY_STATUS(require_object(document, origin));
  // Later versions may add fields: the ones read are checked, the others left alone.
  const FieldReader top(document, origin, "", UnknownFields::ignore);
  LAGOM_TRY(const nlohmann::json* ops, top.array(k_ops_field));
  std::vector<OpClassEntry> entries;
  for (std::size_t i = 0; i < ops->size(); ++i) {
    LAGOM_TRY(const FieldReader op, top.element(k_ops_field, *ops, i));
    LAGOM_TRY(OpClassEntry e, read_op(op));
    entries.push_back(std::move(e));
  }
  return entries;
}

Status check_tuned_for(const nlohmann::json& config, const std::string& origin,
                       const model::WorkloadSpec& workload, const model::ClusterSpec& cluster,
                       const model::Strategy& strategy) {
  auto refuse = [&](const std::string& field, const std::string& tuned, const std::string& here) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{}: {}: tuned for {} but this run has {} (run 'lagom tune' for this run)",
                                  origin, field, tuned, here));
  };
  if (config.contains("model") && config["model"].is_string() && config["model"] != workload.name)
    return refuse("model", config["model"].get<std::string>(), workload.name);
  if (config.contains("cluster") && config["cluster"].is_string() && config["cluster"] != cluster.name)
    return refuse("cluster", config["cluster"].get<std::string>(), cluster.name);
  if (config.contains("strategy") && config["strategy"].is_object()) {
    const nlohmann::json here = model::to_json(strategy);
    // The structural fields; tp_overlap and bucket_mb are knobs the config itself sets.
    for (const char* key : {"gpus", "tp", "pp", "dp", "cp", "ep", "sp", "vpp", "zero", "micro_batch",
                            "global_batch", "recompute", "schedule", "precision", "attention"}) {
      const auto& tuned = config["strategy"];
      if (tuned.contains(key) && here.contains(key) && tuned[key] != here[key]) {
        return refuse(std::string("strategy.") + key, tuned[key].dump(), here[key].dump());
      }
    }
    // dp_shard is left out at 0 (model/strategy_knobs.h, omit_zero): absent reads as 0.
    auto shard = [](const nlohmann::json& s) {
      return s.contains("dp_shard") ? s["dp_shard"] : nlohmann::json(0);
    };
    if (shard(config["strategy"]) != shard(here))
      return refuse("strategy.dp_shard", shard(config["strategy"]).dump(), shard(here).dump());
  }
  return {};
}

nlohmann::json config_json(const search::Problem& problem, const search::TuneResult& result,
                           const search::OutputContext& context) {
  nlohmann::json ops = ops_json(problem, result);
  nlohmann::json communicators = nlohmann::json::array();
  for (const auto& [group, ctas] : result.assignment.comm_ctas) {
    communicators.push_back({{"group", std::string(model::to_string(group))},
                             {"ctas", ctas},
                             {"min_ctas", ctas},
                             {"max_ctas", ctas}});
  }
  nlohmann::json process = nlohmann::json::object();
  if (result.comm_knobs_searched && result.runtime == model::Runtime::nccl) {
    process = {{"threads", result.choice.threads}, {"chunk_bytes", result.choice.chunk_bytes}};
  }
  nlohmann::json config = {
      {"search", std::string(search::to_string(result.search))},
      {"runtime", std::string(model::to_string(result.runtime))},
      {"model", context.model},
      {"cluster", context.cluster},
      {"strategy", context.strategy},
      {"comm_knobs_searched", result.comm_knobs_searched},
      {"predicted_iteration_time_s", result.predicted_iteration_s()},
      {"baseline_iteration_time_s", result.baseline_iteration_s()},
      {"speedup", result.speedup()},
      {"evaluations", result.evaluations},
      {"search_time_s", result.search_time_s},
      {"op_classes", result.result.op_classes.size()},
      {"ops", std::move(ops)},
      {"communicators", std::move(communicators)},
      {"overlap", documents::overlap_json(result.assignment)},
      {"process", std::move(process)},
      {"notes", result.notes},
      {"tune", tune_inputs_json(problem, result, context.model, context.cluster, context.plugin_path)}};
  return stamp(Kind::lagom_config, std::move(config));
}

Status write_tune_outputs(const search::Problem& problem, const search::TuneResult& result,
                          const search::OutputContext& context) {
  namespace fs = std::filesystem;
  const fs::path dir(context.out_dir);
  LAGOM_TRY(const std::string env, search::env_text(problem, result, context));
  nlohmann::json config = config_json(problem, result, context);
  // Under a framework profile lagom-config.json also says the framework's settings (framework_json); `any`
  // writes the file it always wrote.
  if (problem.space.framework != search::Framework::any) {
    config["framework"] =
        documents::framework_json(search::framework_profile(problem.space.framework), *problem.workload,
                                  problem.space.strategy, search::framework_knobs(result));
  }
  std::vector<std::pair<std::string, std::string>> files{
      {"nccl_tuner.conf", search::tuner_conf_text(problem, result)},
      {"lagom.env", env},
      {"lagom-config.json", config.dump(2) + "\n"}};
  const auto own_file = documents::framework_file(problem, result);
  if (own_file) files.push_back(*own_file);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    return make_error(ErrorCode::io, fmt::format("out {}: cannot create the directory ({})", dir.string(),
                                                 ec ? ec.message() : "not a directory"));
  }
  // All three or none: a plugin or lagom.init() never reads a mix of two tunes. Only files Lagom wrote are
  // replaced, never an input of the run (files::write_outputs). A framework file an earlier tune left in
  // this folder would describe another choice: removed when Lagom wrote it, a file of the user's stays.
  std::vector<std::pair<std::string, std::string>> targets;
  for (const auto& [name, text] : files) targets.emplace_back((dir / name).string(), text);
  std::vector<std::string> stale;
  for (const auto framework : {search::Framework::megatron_lm, search::Framework::deepspeed}) {
    const std::string name = search::framework_file_name(framework);
    if (!own_file || own_file->first != name) stale.push_back((dir / name).string());
  }
  if (auto status = files::write_outputs(targets, stale); !status.ok()) {
    return status.error().with_context(fmt::format("out {}", dir.string()));
  }
  return {};
}

}  // namespace lagom::documents
