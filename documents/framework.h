// What a tune under a framework profile writes in the framework's own JSON forms (search/framework.h holds
// the profiles and Megatron-LM's arguments; documents/framework.cpp cites each key's source):
//   deepspeed_config  a DeepSpeed config fragment (keys merged into the job's ds_config.json; the file
//                     deepspeed.json);
//   torch_settings    torch's keyword arguments: {"wrapper": "ddp"|"fully_shard",
//                     "ddp": {...DistributedDataParallel kwargs}, "fully_shard": {...}, "prefetch_layers":
//                     n}, which the shim's torch_kwargs() hands to the job;
//   framework_json    lagom-config.json's (and tune --json's) `framework` object: name, version, the knobs
//                     in the framework's units and its own form (one of the above, or megatron_args).
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
nlohmann::json framework_json(const search::FrameworkProfile& profile, const model::WorkloadSpec& workload,
                              const model::Strategy& strategy, const search::FrameworkKnobs& knobs);

// The framework's own file for a tune under a framework profile: (name, text) — megatron.args or
// deepspeed.json — or none (any; torch-fsdp, whose settings are lagom-config.json's framework.torch).
std::optional<std::pair<std::string, std::string>> framework_file(const search::Problem& problem,
                                                                  const search::TuneResult& result);

}  // namespace lagom::documents
