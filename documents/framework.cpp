#include "documents/framework.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "model/cost_model.h"

namespace lagom::documents {

using model::CpCommType;
using model::Recompute;
using search::bucket_in_unit;
using search::Framework;
using search::framework_profile;
using search::FrameworkKnobs;
using search::FrameworkProfile;
using search::has_dp_buckets;
using search::layer_parameters;

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
  // The batch as DeepSpeed derives it: with AutoTP (tp > 1) deepspeed.initialize builds its config before
  // the TP groups exist, with no mpu (microsoft/DeepSpeed@v0.16.4 deepspeed/__init__.py:179), so its world
  // size counts every rank (runtime/config.py:730) and train_batch_size / (micro · world) would give tp
  // times fewer accumulation steps than priced (:949-952). Written whole, the three are taken as given (:945)
  // and checked as train_batch_size == micro · steps · world (:931): the steps Lagom priced, the batch in
  // DeepSpeed's count (the global batch times tp; the TP ranks of one replica read the same samples). Without
  // TP the world is the data-parallel group, and the batch is the global one; so it is with a pipeline, whose
  // engine passes its grid as the mpu (the grid's data-parallel size).
  const long steps = s.global_batch / (s.micro_batch * s.dp);
  const long deepspeed_world = s.tp > 1 && s.pp == 1 ? static_cast<long>(s.dp) * s.tp : s.dp;
  nlohmann::json doc = {{"train_batch_size", s.micro_batch * steps * deepspeed_world},
                        {"train_micro_batch_size_per_gpu", s.micro_batch},
                        {"gradient_accumulation_steps", steps},
                        {"zero_optimization", std::move(zero)}};
  if (s.precision == model::Precision::bf16) doc["bf16"] = {{"enabled", true}};
  if (s.precision == model::Precision::fp16) doc["fp16"] = {{"enabled", true}};
  if (s.recompute == Recompute::full) doc["activation_checkpointing"] = {{"partition_activations", false}};
  if (s.tp > 1) doc["tensor_parallel"] = {{"autotp_size", s.tp}};
  // The pipeline's transfers as priced (model::pipeline_splits_over_tp; DeepSpeed's engine splits them
  // over the model-parallel ranks unless told otherwise: microsoft/DeepSpeed@v0.16.4
  // deepspeed/runtime/pipe/engine.py:144-145).
  if (s.pp > 1) {
    const bool split = model::pipeline_splits_over_tp(s);
    doc["pipeline"] = {{"pipe_partitioned", split}, {"grad_partitioned", split}};
  }
  return doc;
}

nlohmann::json torch_settings(const model::Strategy& s, const FrameworkKnobs& k) {
  const FrameworkProfile& p = framework_profile(Framework::torch_fsdp);
  nlohmann::json ddp = nlohmann::json::object();
  // DDP's bucket_cap_mb; fully_shard has no bucket (it reduces per wrapped module).
  if (s.zero == 0 && has_dp_buckets(s)) ddp["bucket_cap_mb"] = bucket_in_unit(p, k.bucket_mb, s);
  nlohmann::json shard = nlohmann::json::object();
  if (s.zero >= 2) shard["reshard_after_forward"] = s.zero == 3;
  // HSDP: fully_shard(mesh=...) on a 2-D mesh replicates over dim 0 and shards over dim 1 (PyTorch 2.7's
  // fully_shard API; the sources of the torch, DeepSpeed and Megatron settings are listed in
  // search/framework.cpp's header).
  if (s.zero >= 2 && s.hybrid_shard()) {
    shard["mesh"] = {{"shape", {s.dp / s.dp_shard, s.zero_shard_ranks()}},
                     {"dim_names", {"dp_replicate", "dp_shard"}}};
  }
  nlohmann::json doc = {{"wrapper", s.zero >= 2 ? "fully_shard" : "ddp"},
                        {"ddp", std::move(ddp)},
                        {"fully_shard", std::move(shard)}};
  if (model::gathers_per_layer(s)) doc["prefetch_layers"] = k.prefetch;
  return doc;
}

namespace {

// [Ti] pytorch/torchtitan@e347b1e5e6b6 (2026-02-15): torchtitan/config/job_config.py, the line given;
// torchtitan/train.py:196-215 (gradient accumulation = global_batch_size / (local_batch_size · dp)) and
// torchtitan/distributed/pipeline_parallel.py:186-194 (with pp, local_batch_size is split into micro-batches
// of pipeline_parallel_microbatch_size); torchtitan/distributed/parallel_dims.py:136-153 (FSDP over
// dp_shard·cp, replicas over dp_replicate).
std::string torchtitan_unavailable(const model::Strategy& s) {
  if (s.zero == 1)
    return "zero 1: torchtitan shards with FSDP2 (zero 2 or 3) or replicates (zero 0), no ZeRO-1";
  if (s.zero == 0 && s.cp > 1)
    return "zero 0 with cp > 1: torchtitan applies FSDP over the CP ranks (parallel_dims.py:83-85)";
  if (s.vpp > 1) return "vpp > 1: torchtitan's interleaved schedules split stages by module names";
  if (s.precision != model::Precision::bf16 && s.precision != model::Precision::fp32) {
    return fmt::format("precision {}: torchtitan's mixed_precision_param is bfloat16 or float32",
                       model::to_string(s.precision));
  }
  // [Ti:652-656]: mode none, full, or selective with selective_ac_option "op" or "k"; torchtitan has no
  // core-attention-only recompute (Megatron's selective), and MaxText's policies are JAX's.
  if (s.recompute != Recompute::none && s.recompute != Recompute::full && s.recompute != Recompute::op) {
    return fmt::format(
        "recompute {}: torchtitan checkpoints whole blocks (full, every k-th: "
        "--recompute-every) or per op (op)",
        model::to_string(s.recompute));
  }
  if (s.cp > 1 && s.cp_comm != CpCommType::allgather && s.cp_comm != CpCommType::p2p) {
    return fmt::format("cp-comm-type {}: torchtitan rotates K/V by allgather or alltoall",
                       model::to_string(s.cp_comm));
  }
  return "";
}

// One TOML value: integers as they are, strings as TOML basic strings (JSON's escapes are TOML's).
std::string toml_value(const nlohmann::json& v) {
  return v.dump();
}

}  // namespace

TorchtitanConfig torchtitan_config(const model::WorkloadSpec& w, const model::Strategy& s) {
  TorchtitanConfig out;
  out.unavailable = torchtitan_unavailable(s);
  if (!out.unavailable.empty()) return out;
  const bool sharded = s.zero >= 2;
  const int shard = s.hybrid_shard() ? s.dp_shard : s.dp;
  // [Ti:312-351, 360, 396, 412, 428, 446]: DDP is shard degree 1, FSDP replicate degree 1, HSDP both > 1.
  nlohmann::json parallelism = {{"data_parallel_shard_degree", sharded ? shard : 1},
                                {"data_parallel_replicate_degree", sharded ? s.dp / shard : s.dp},
                                {"tensor_parallel_degree", s.tp},
                                {"pipeline_parallel_degree", s.pp},
                                {"context_parallel_degree", s.cp}};
  if (sharded) parallelism["fsdp_reshard_after_forward"] = s.zero == 3 ? "always" : "never";
  // The torch profile's CP methods: allgather gathers K/V once, p2p passes K/V blocks around the ring.
  if (s.cp > 1)
    parallelism["context_parallel_rotate_method"] =
        s.cp_comm == CpCommType::allgather ? "allgather" : "alltoall";
  if (s.pp > 1) {
    parallelism["pipeline_parallel_schedule"] = s.schedule == model::Schedule::gpipe ? "GPipe" : "1F1B";
    parallelism["pipeline_parallel_microbatch_size"] = s.micro_batch;
  }
  // [Ti:652-656]: none; full (every block); selective with "op" (the per-op policy) or "k" (every k-th
  // block, counted from 1: torchtitan/distributed/activation_checkpoint.py _apply_layer_sac).
  nlohmann::json checkpoint = {{"mode", "none"}};
  if (s.recompute == Recompute::op) {
    checkpoint = {{"mode", "selective"}, {"selective_ac_option", "op"}};
  } else if (s.recompute == Recompute::full && s.recompute_every > 0) {
    checkpoint = {{"mode", "selective"}, {"selective_ac_option", std::to_string(s.recompute_every)}};
  } else if (s.recompute == Recompute::full) {
    checkpoint = {{"mode", "full"}};
  }
  // [Ti] torchtitan/config/job_config.py:675 early_stop (default false), passed to ptd_checkpoint_wrapper
  // by the every-k-th block and full policies (torchtitan/distributed/activation_checkpoint.py:45, 154).
  if (s.recompute_early_stop) checkpoint["early_stop"] = true;
  // [Ti:253-282]: a step's local batch per DP rank; with pp the whole step's, split into micro-batches.
  const long local = s.pp > 1 ? s.global_batch / s.dp : s.micro_batch;
  const nlohmann::json training = {
      {"local_batch_size", local},
      {"global_batch_size", s.global_batch},
      {"seq_len", w.seq},
      {"mixed_precision_param", s.precision == model::Precision::fp32 ? "float32" : "bfloat16"}};
  out.settings = {
      {"parallelism", parallelism}, {"activation_checkpoint", checkpoint}, {"training", training}};
  out.toml =
      "# torchtitan job config (pytorch/torchtitan@e347b1e5 torchtitan/config/job_config.py), from lagom\n";
  for (const auto& [section, keys] : out.settings.items()) {
    out.toml += fmt::format("\n[{}]\n", section);
    for (const auto& [key, value] : keys.items())
      out.toml += fmt::format("{} = {}\n", key, toml_value(value));
  }
  return out;
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
    case Framework::torch_fsdp: {
      doc["torch"] = torch_settings(s, k);
      TorchtitanConfig titan = torchtitan_config(w, s);
      if (titan.unavailable.empty()) {
        doc["torchtitan"] = std::move(titan.settings);
        doc["torchtitan_toml"] = std::move(titan.toml);
      } else {
        doc["torchtitan_unavailable"] = std::move(titan.unavailable);
      }
      break;
    }
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
