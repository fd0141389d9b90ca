// What a tune under a framework profile writes in the framework's own JSON forms (search/framework.h holds
// the profiles and Megatron-LM's arguments; documents/framework.cpp cites each key's source):
//   deepspeed_config  a DeepSpeed config fragment (keys merged into the job's ds_config.json; the file
//                     deepspeed.json);
//   torch_settings    torch's keyword arguments: {"wrapper": "ddp"|"fully_shard",
//                     "ddp": {...DistributedDataParallel kwargs}, "fully_shard": {...}, "prefetch_layers":
//                     n}, which the shim's torch_kwargs() hands to the job; under hybrid sharding
//                     fully_shard's "mesh": the 2-D device mesh's shape [dp_replicate, dp_shard·cp] and
//                     dimension names;
//   framework_json    lagom-config.json's (and tune --json's) `framework` object: name, version, the knobs
//                     in the framework's units and its own form (one of the above, or megatron_args;
//                     torch-fsdp's also torchtitan's job config: "torchtitan" and "torchtitan_toml", or
//                     "torchtitan_unavailable").
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "model/specs.h"
#include "search/framework.h"
#include "search/outputs.h"
#include "search/search.h"

namespace lagom::documents {

nlohmann::json deepspeed_config(const model::WorkloadSpec& workload, const model::Strategy& strategy,
                                const search::FrameworkKnobs& knobs);
nlohmann::json torch_settings(const model::Strategy& strategy, const search::FrameworkKnobs& knobs);
// torchtitan's job config (TOML) for `strategy` (resolved): the settings torchtitan can apply, named as
// pytorch/torchtitan@e347b1e5e6b6 torchtitan/config/job_config.py names them (the last commit with TOML job
// configs: 9810191b replaced them by Python config registries; tests/data/torchtitan/ holds the key list):
// [parallelism] the degrees (data_parallel_shard_degree / data_parallel_replicate_degree from zero and
// dp_shard), fsdp_reshard_after_forward, the CP rotate method and the pipeline schedule and micro-batch;
// [activation_checkpoint] mode; [training] local_batch_size, global_batch_size, seq_len,
// mixed_precision_param. `settings` holds the same keys as JSON ({section: {key: value}}), `toml` the
// fragment. When torchtitan cannot run the strategy both are empty and `unavailable` says why (zero 1: no
// ZeRO-1 in torchtitan; zero 0 with cp > 1: torchtitan applies FSDP over the CP ranks; vpp > 1; a
// precision other than bf16 or fp32).
struct TorchtitanConfig {
  nlohmann::json settings = nlohmann::json::object();
  std::string toml;
  std::string unavailable;
};
TorchtitanConfig torchtitan_config(const model::WorkloadSpec& workload, const model::Strategy& strategy);

nlohmann::json framework_json(const search::FrameworkProfile& profile, const model::WorkloadSpec& workload,
                              const model::Strategy& strategy, const search::FrameworkKnobs& knobs);

// The framework's own file for a tune under a framework profile: (name, text) — megatron.args or
// deepspeed.json — or none (any; torch-fsdp, whose settings are lagom-config.json's framework.torch).
std::optional<std::pair<std::string, std::string>> framework_file(const search::Problem& problem,
                                                                  const search::TuneResult& result);

}  // namespace lagom::documents
