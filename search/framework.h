// Framework profiles (`--framework` of explore and tune, docs/cli.md#framework-profiles): what one training
// framework can run, as one table per framework (framework_profile), so that explore returns only strategies
// and tune searches only knobs that the framework has, and tune writes them in the framework's own form
// (megatron.args here; deepspeed.json, torch keyword arguments and torchtitan's job config in
// documents/framework.h).
//
// `any` is Lagom's own space (every method the simulator prices, some of which exist only as Lagom's
// kernels: slice:K and flash TP overlap, see kernels/); a framework profile names the version its table was
// read from. A profile never changes a prediction: the simulator prices the same strategy the same way, the
// profile only narrows which strategies and knob values are offered.
//
// Thread safety: immutable tables and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/enum_table.h"
#include "core/error.h"
#include "model/overlap_method.h"
#include "model/specs.h"
#include "simulator/simulator.h"

namespace lagom::search {

using lagom::to_string;  // the name of every enum with a table (core/enum_table.h)

enum class Framework { any, megatron_lm, torch_fsdp, deepspeed };
// Listed as --framework's help offers them, the default last.
inline constexpr auto k_framework_names = enum_table<Framework>({{Framework::megatron_lm, "megatron-lm"},
                                                                 {Framework::torch_fsdp, "torch-fsdp"},
                                                                 {Framework::deepspeed, "deepspeed"},
                                                                 {Framework::any, "any"}});
constexpr const auto& enum_names(Framework) {
  return k_framework_names;
}
// The value of --framework: invalid_input "framework: 'x' is not megatron-lm, torch-fsdp, deepspeed or any".
Result<Framework> parse_framework_flag(std::string_view name);

// The unit a framework takes its gradient bucket size in.
enum class BucketUnit {
  megabytes,   // Lagom's --bucket-mb: 10^6 bytes of gradients
  parameters,  // Megatron-Core's --ddp-bucket-size: gradient elements (parameters) per bucket
  mebibytes,   // torch DDP's bucket_cap_mb: 2^20 bytes (bucket_bytes_cap = bucket_cap_mb * 1024 * 1024)
  elements,    // DeepSpeed's reduce_bucket_size: gradient elements per bucket
};
inline constexpr auto k_bucket_unit_names = enum_table<BucketUnit>({{BucketUnit::megabytes, "MB"},
                                                                    {BucketUnit::parameters, "parameters"},
                                                                    {BucketUnit::mebibytes, "MiB"},
                                                                    {BucketUnit::elements, "elements"}});
constexpr const auto& enum_names(BucketUnit) {
  return k_bucket_unit_names;
}

// What one framework can run. Lists hold what the framework offers, the framework's default first where it
// has one; an empty cp_comms means "the strategy's own" (any).
struct FrameworkProfile {
  Framework framework = Framework::any;
  std::string_view name;     // "megatron-lm"
  std::string_view version;  // the release the table was read from
  std::vector<model::OverlapMethod> tp_overlaps;
  bool tp_overlap_needs_sp = false;  // Megatron asserts --tp-comm-overlap only with --sequence-parallel
  std::vector<model::CpCommType> cp_comms;
  std::vector<int> zero_stages;
  // Why a ZeRO stage the framework has in some form is not offered (the refusal says it instead of the list).
  std::vector<std::pair<int, std::string_view>> zero_refusals;
  std::vector<model::Recompute> recomputes;
  bool recompute_block = false;  // full recompute of the first N layers of each chunk (recompute_layers)
  bool recompute_every = false;  // full recompute of every k-th layer (recompute_every)
  // Why its checkpointing has no early stop (Strategy::recompute_early_stop); empty: it can stop early.
  std::string_view no_early_stop;
  bool sequence_parallel = true;     // Megatron-style SP (sequence-sharded norms and dropout beside TP)
  bool interleaved_pipeline = true;  // vpp > 1
  bool expert_parallel = true;       // ep > 1
  int max_zero_with_pipeline = 3;    // the highest ZeRO stage the framework runs with pp > 1
  int max_zero_with_tp = 3;          // ... with tp > 1
  // The software stack its runs are priced with when --stack is not given: torch-fsdp's models are
  // PyTorch-native and eager unless compiled (pytorch-eager, the slower of the two, which a planner can
  // afford to be told); the others Megatron-Core's defaults.
  model::Stack default_stack = model::Stack::megatron_core;
  // Hybrid sharding (Strategy::dp_shard < dp): the ZeRO stages it runs with (explore searches dp_shard with
  // these; empty: refused, for the reason no_hybrid_sharding gives). `any` runs every dp_shard given but
  // explore does not search it there, so that its space stays what it was (pin --dp-shard to explore one).
  std::vector<int> hybrid_zero_stages;
  std::string_view no_hybrid_sharding;
  BucketUnit bucket_unit = BucketUnit::megabytes;
  std::vector<double> bucket_grid;  // tune's bucket options, in bucket_unit
  int max_zero_with_bucket = 2;     // the highest ZeRO stage with a bucket size (torch: DDP's, zero 0)
  std::vector<int> prefetch_grid;   // tune's ZeRO-3 prefetch depths (layers gathered ahead)
  std::vector<simulator::IssuePriority> priorities;
  // The communicators whose collective buffers the framework can allocate in NCCL's symmetric windows, so
  // that CTA policy zero moves their AllGather/AlltoAll to the copy engines (search::cta_policy_acts);
  // empty: the framework registers none and NCCL runs its kernels whatever the policy.
  std::vector<model::Group> symmetric_groups;
  // How its pipeline sends a stage's output without sequence parallelism (model::PipelineSplit): `on`,
  // split over TP and all-gathered after the receive; `off`, whole; `stack`, as --stack says (any). Its
  // default for a strategy that does not pin --pp-tp-split (with_framework_defaults), and with
  // pipeline_split_settable the other value is the framework's too (written in its config).
  model::PipelineSplit pipeline_split = model::PipelineSplit::stack;
  bool pipeline_split_settable = true;
  // What its ZeRO-2 is (model::Zero2): FSDP's (torch-fsdp), DeepSpeed's (deepspeed), or `auto` where the
  // framework has none (megatron-lm) or is not one (any). A strategy that does not pin --zero2 takes it
  // (with_framework_defaults); one that pins the other is refused.
  model::Zero2 zero2 = model::Zero2::automatic;
  // Which library shards its zero 3 (model::ShardingLibrary): fully_shard (torch-fsdp), DeepSpeed's ZeRO-3
  // (deepspeed), or `auto` where its own is not counted (megatron-lm's Megatron-FSDP, priced as FSDP1's) or
  // it is not a framework (any). A strategy that does not pin --sharding takes it (with_framework_defaults);
  // one that pins another is refused.
  model::ShardingLibrary sharding = model::ShardingLibrary::automatic;
};

// The one table per framework (search/framework.cpp cites each entry's source).
const FrameworkProfile& framework_profile(Framework framework);

// ok when the framework runs `strategy` (resolved); else invalid_input naming the knob, the value and what
// the framework offers instead, e.g. "--framework megatron-lm: zero 2 is not available (Megatron-LM runs
// ZeRO 1 as --use-distributed-optimizer and ZeRO 3 as --use-megatron-fsdp, no stage 2)".
Status check_strategy(const FrameworkProfile& profile, const model::Strategy& strategy);
// invalid_input when the profile cannot run `priority` (only `any` offers critical-first).
Status check_priority(const FrameworkProfile& profile, simulator::IssuePriority priority);

// A bucket size in the profile's unit as Lagom's MB (10^6 bytes of gradients of `strategy`'s dtype), and
// back.
double bucket_mb_of(const FrameworkProfile& profile, double value, const model::Strategy& strategy);
double bucket_in_unit(const FrameworkProfile& profile, double mb, const model::Strategy& strategy);
// `strategy` with the framework's own pipeline transfers when it does not pin --pp-tp-split (its value is
// `stack`) and a split can act (pp > 1, tp > 1, no SP), its own ZeRO-2 when it does not pin --zero2 and
// runs zero 2, and its own sharding library when it does not pin --sharding: the baseline tune compares
// against, every candidate explore returns, and explore's check of the pinned flags.
model::Strategy with_framework_defaults(const FrameworkProfile& profile, model::Strategy strategy);

// The framework's own default bucket for `strategy` (resolved), in MB: Megatron-Core max(4e7, 1e6·dp·cp)
// parameters, torch DDP 25 MiB and FSDP2 one layer's gradients (it reduces per wrapped block), DeepSpeed
// 5e8 elements; any: the strategy's bucket_mb (Lagom's 25 MB).
double default_bucket_mb(const FrameworkProfile& profile, const model::WorkloadSpec& workload,
                         const model::Strategy& strategy);
// Parameters of one transformer layer (the embedding and output layer left out), unsharded.
double layer_parameters(const model::WorkloadSpec& workload);

// Whether the strategy's gradients go out in buckets during the backward (data parallel, ZeRO below 3).
bool has_dp_buckets(const model::Strategy& strategy);

// The framework knobs a tune chose. megatron_args writes them as Megatron-LM's command-line arguments, one
// flag with its values per line (every word a bare shell word, so `$(cat megatron.args)` passes them
// unchanged; search/framework.cpp cites each flag's source); the JSON forms (a DeepSpeed config fragment,
// torch's keyword arguments, lagom-config.json's `framework` object) are documents/framework.h's.
struct FrameworkKnobs {
  model::OverlapMethod tp_overlap;
  double bucket_mb = 25;
  int prefetch = 1;
  simulator::IssuePriority priority = simulator::IssuePriority::as_scheduled;
  bool symmetric_buffers = false;  // CTA policy zero chosen: the DP buffers go to NCCL's symmetric windows
};
std::vector<std::string> megatron_args(const model::Strategy& strategy, const FrameworkKnobs& knobs);

}  // namespace lagom::search
