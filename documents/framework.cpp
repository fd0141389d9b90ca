#include "documents/framework.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace lagom::documents {

using model::Recompute;
using search::bucket_in_unit;
using search::Framework;
using search::framework_profile;
using search::FrameworkKnobs;
using search::FrameworkProfile;
using search::has_dp_buckets;

namespace {

// Parameters of one transformer layer (the embedding and output layer left out), unsharded.
double layer_parameters(const model::WorkloadSpec& w) {
  const double embedding =
      static_cast<double>(w.vocab) * static_cast<double>(w.hidden) * (w.tied_embeddings ? 1.0 : 2.0);
  return (w.parameters() - embedding) / std::max(1, w.layers);
}

}  // namespace

nlohmann::json deepspeed_config(const model::WorkloadSpec& w, const model::Strategy& s,
                                const FrameworkKnobs& k) {
  const FrameworkProfile& p = framework_profile(Framework::deepspeed);
  nlohmann::json zero = {{"stage", s.zero}, {"overlap_comm", s.dp_overlap}};
  // Integers: DeepSpeed's config model declares these sizes int.
  const auto bucket = static_cast<std::int64_t>(bucket_in_unit(p, k.bucket_mb, s));
  if (has_dp_buckets(s)) {
    zero["reduce_bucket_size"] = bucket;
    zero["allgather_bucket_size"] = bucket;
  }
  if (s.zero == 3) {
    // Prefetch depth in layers as elements: layers ahead × one layer's parameters (unsharded).
    const auto prefetch = static_cast<std::int64_t>(std::llround(k.prefetch * layer_parameters(w)));
    zero["stage3_prefetch_bucket_size"] = prefetch;
    // DeepSpeed's default 1e9, raised to the prefetch so that the prefetched layers may stay live.
    zero["stage3_max_live_parameters"] = std::max<std::int64_t>(1000000000, prefetch);
  }
  nlohmann::json doc = {{"train_batch_size", s.global_batch},
                        {"train_micro_batch_size_per_gpu", s.micro_batch},
                        {"zero_optimization", std::move(zero)}};
  if (s.precision == model::Precision::bf16) doc["bf16"] = {{"enabled", true}};
  if (s.precision == model::Precision::fp16) doc["fp16"] = {{"enabled", true}};
  if (s.recompute == Recompute::full) doc["activation_checkpointing"] = {{"partition_activations", false}};
  if (s.tp > 1) doc["tensor_parallel"] = {{"autotp_size", s.tp}};
  return doc;
}

nlohmann::json torch_settings(const model::Strategy& s, const FrameworkKnobs& k) {
  const FrameworkProfile& p = framework_profile(Framework::torch_fsdp);
  nlohmann::json ddp = nlohmann::json::object();
  if (has_dp_buckets(s)) ddp["bucket_cap_mb"] = bucket_in_unit(p, k.bucket_mb, s);
  nlohmann::json shard = nlohmann::json::object();
  if (s.zero >= 2) shard["reshard_after_forward"] = s.zero == 3;
  nlohmann::json doc = {{"wrapper", s.zero >= 2 ? "fully_shard" : "ddp"},
                        {"ddp", std::move(ddp)},
                        {"fully_shard", std::move(shard)}};
  if (s.zero == 3) doc["prefetch_layers"] = k.prefetch;
  if (s.zero == 1) doc["optimizer"] = "ZeroRedundancyOptimizer";
  return doc;
}

nlohmann::json framework_json(const FrameworkProfile& p, const model::WorkloadSpec& w,
                              const model::Strategy& s, const FrameworkKnobs& k) {
  nlohmann::json doc = {{"name", std::string(p.name)},
                        {"version", std::string(p.version)},
                        {"tp_overlap", model::to_string(k.tp_overlap)},
                        {"bucket", bucket_in_unit(p, k.bucket_mb, s)},
                        {"bucket_unit", std::string(to_string(p.bucket_unit))},
                        {"prefetch", k.prefetch}};
  switch (p.framework) {
    case Framework::megatron_lm:
      doc["megatron_args"] = search::megatron_args(s, k);
      break;
    case Framework::torch_fsdp:
      doc["torch"] = torch_settings(s, k);
      break;
    case Framework::deepspeed:
      doc["deepspeed"] = deepspeed_config(w, s, k);
      break;
    case Framework::any:
      break;
  }
  return doc;
}

std::optional<std::pair<std::string, std::string>> framework_file(const search::Problem& problem,
                                                                  const search::TuneResult& result) {
  const Framework framework = problem.space.framework;
  const model::Strategy& strategy = problem.space.strategy;
  if (framework == Framework::megatron_lm) {
    std::string text;
    for (const auto& line : search::megatron_args(strategy, search::framework_knobs(result)))
      text += line + "\n";
    return std::pair{search::framework_file_name(framework), text};
  }
  if (framework == Framework::deepspeed) {
    return std::pair{
        search::framework_file_name(framework),
        deepspeed_config(*problem.workload, strategy, search::framework_knobs(result)).dump(2) + "\n"};
  }
  return std::nullopt;
}

}  // namespace lagom::documents
