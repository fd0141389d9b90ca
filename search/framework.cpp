#include "search/framework.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "model/cost_model.h"
#include "search/space.h"

namespace lagom::search {

namespace {

using model::CpCommType;
using model::Group;
using model::OverlapMethod;
using model::OverlapMethodKind;
using model::Recompute;
using simulator::IssuePriority;

// Sources of the tables below:
//   [M] NVIDIA/Megatron-LM@core_v0.15.0 (0d7e02bd26) megatron/training/arguments.py, the line given;
//       megatron/training/training.py:984-987 for the default bucket.
//   [T] PyTorch 2.7 public API: torch.nn.parallel.DistributedDataParallel(bucket_cap_mb=25, MiB:
//       bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)); torch.distributed.fsdp.fully_shard
//       (FSDP2: reshard_after_forward=True is ZeRO-3, False keeps the gathered parameters until the
//       backward, ZeRO-2); FSDPModule.set_modules_to_forward_prefetch / set_modules_to_backward_prefetch
//       (explicit prefetch beyond FSDP2's implicit one layer);
//       torch.distributed.optim.ZeroRedundancyOptimizer (ZeRO-1 beside DDP);
//       torch.distributed.tensor.parallel (ColwiseParallel, RowwiseParallel, SequenceParallel);
//       torch.distributed.pipelining (Schedule1F1B, ScheduleInterleaved1F1B);
//       torch.distributed.tensor.experimental.context_parallel (ring attention; its rotate method
//       "allgather" gathers K/V once, "alltoall" passes K/V blocks around the ring); torch.utils.checkpoint
//       (full: a layer; selective: a submodule such as the core attention; with
//       create_selective_checkpoint_contexts, a per-op policy).
//   [Ti] pytorch/torchtitan@e347b1e5 torchtitan/distributed/activation_checkpoint.py: mode full, selective
//       with selective_ac_option "op" (per-op policy, Recompute::op) or "k" (every k-th block,
//       Strategy::recompute_every).
//   [D] microsoft/DeepSpeed@v0.16.4 (e2dc3eeb19), read from source: deepspeed/runtime/zero/config.py
//       zero_optimization.stage 0-3 (:91), reduce_bucket_size (:109) and allgather_bucket_size (:128),
//       elements, default 5e8, overlap_comm (:134), stage3_prefetch_bucket_size (:208, default 5e7) and
//       stage3_max_live_parameters (:231, default 1e9), elements; the pipeline engine refuses ZeRO-2/3
//       (deepspeed/runtime/pipe/engine.py:78: "ZeRO-2 and ZeRO-3 are incompatible with pipeline
//       parallelism"); AutoTP training, tensor_parallel.autotp_size (runtime/tensor_parallel/config.py:45,
//       new in 0.16.4), is refused with ZeRO-3 (runtime/engine.py:425-427); bf16.enabled, fp16.enabled
//       (runtime/constants.py:123-126, 151-153); activation_checkpointing.partition_activations
//       (runtime/activation_checkpointing/config.py:27) recomputes whole layers; DeepSpeed-Ulysses is CP
//       by all-to-all; DeepSpeed-MoE dispatches by all-to-all.

constexpr OverlapMethod k_none{OverlapMethodKind::none, 1};
constexpr OverlapMethod k_te{OverlapMethodKind::te, 1};
const std::vector<Recompute> k_all_recompute{Recompute::none, Recompute::selective, Recompute::full};
// torch.utils.checkpoint runs Megatron-style selective (a checkpointed submodule) and, with a selective
// policy, torchtitan's per-op one [Ti] (MaxText's remat presets are JAX's: no framework Lagom writes for).
const std::vector<Recompute> k_torch_recompute{Recompute::none, Recompute::selective, Recompute::full,
                                               Recompute::op};

FrameworkProfile make_any() {
  FrameworkProfile p;
  p.framework = Framework::any;
  p.name = "any";
  p.version = "every method: Lagom's own (slice:K and flash TP overlap run with Lagom's kernels) and TE's te";
  p.tp_overlaps = grid_tp_overlaps();
  p.zero_stages = {0, 1, 2, 3};
  p.recomputes = k_torch_recompute;
  p.recompute_block = true;
  p.recompute_every = true;
  p.bucket_grid.assign(k_grid_bucket_mb.begin(), k_grid_bucket_mb.end());
  p.prefetch_grid.assign(k_grid_prefetch.begin(), k_grid_prefetch.end());
  p.priorities = {IssuePriority::as_scheduled, IssuePriority::critical_first};
  // Lagom's space: every communicator's buffers may be symmetric windows.
  for (const auto& [group, name] : model::k_group_names) p.symmetric_groups.push_back(group);
  return p;
}

FrameworkProfile make_megatron() {
  FrameworkProfile p;
  p.framework = Framework::megatron_lm;
  p.name = "megatron-lm";
  p.version = "Megatron-Core core_v0.15.0";
  // --tp-comm-overlap [M:2090] runs Transformer Engine's userbuffers (Lagom's te); it needs
  // --sequence-parallel [M:931].
  p.tp_overlaps = {k_none, k_te};
  p.tp_overlap_needs_sp = true;
  // --cp-comm-type p2p|a2a|allgather|a2a+p2p, default p2p [M:2706]; a2a+p2p needs
  // --hierarchical-context-parallel-sizes, which Lagom does not model (model::resolve_strategy refuses it).
  p.cp_comms = {CpCommType::p2p, CpCommType::a2a, CpCommType::allgather};
  // DDP (0), --use-distributed-optimizer (1) [M:2658], --use-megatron-fsdp [M:2674] with
  // --data-parallel-sharding-strategy optim_grads_params (3) [M:2677]. Stage 2 is not offered: Lagom maps
  // Megatron's sharding to ZeRO 1 and 3 only.
  p.zero_stages = {0, 1, 3};
  p.zero_refusals = {{2,
                      "Megatron-LM runs ZeRO 1 as --use-distributed-optimizer and ZeRO 3 as "
                      "--use-megatron-fsdp, no stage 2"}};
  // --recompute-granularity full|selective [M:2010] (selective: core_attn by default [M:2045]);
  // --recompute-method block --recompute-num-layers N recomputes the first N layers of each model chunk
  // (megatron/core/recompute.py, NVIDIA/Megatron-LM@d98e8a64: `layer_idx < recompute_num_layers` over the
  // chunk's layers).
  p.recomputes = k_all_recompute;
  p.recompute_block = true;
  // Its checkpoint is its own autograd Function, reentrant (megatron/core/tensor_parallel/random.py:407 at
  // core_v0.15.0): the whole forward reruns.
  p.no_early_stop = "Megatron's CheckpointFunction reruns the whole forward";
  p.no_hybrid_sharding =
      "Megatron-Core's partial distributed optimizer, its optimizer instances, is not modelled";
  // --ddp-bucket-size counts parameters [M:2620]; the default is max(4e7, 1e6 · dp·cp) [training.py:984].
  p.bucket_unit = BucketUnit::parameters;
  p.bucket_grid = {1e7, 2e7, 4e7, 8e7};
  // Megatron-FSDP has no prefetch depth in layers (--suggested-communication-unit-size counts elements and
  // bounds the buffer): one layer ahead, as Lagom prices it by default.
  p.prefetch_grid = {1};
  // --high-priority-stream-groups [M:2264] raises CUDA stream priorities, not the order on a link, so
  // Lagom's critical-first is not offered.
  p.priorities = {IssuePriority::as_scheduled};
  // --use-nccl-ub [M:2660] allocates the DP param and grad buffers (dense and expert) from an NCCL memory
  // pool registered as symmetric windows unless --disable-symmetric-registration [M:2664]
  // (megatron/core/distributed/param_and_grad_buffer.py:681-690, nccl_allocator.py:107-129; symmetric
  // needs torch >= 2.9). The param all-gathers of --use-distributed-optimizer and --use-megatron-fsdp run
  // on those buffers; the TP, CP and EP collectives do not (activations from the caching allocator).
  p.symmetric_groups = {Group::dp, Group::dp_shard, Group::expert_dp};
  // Megatron-Core sends a stage's whole output (its p2p_communication.py no longer reads
  // --scatter-gather-tensors-in-pipeline: NVIDIA/Megatron-LM@23.04 megatron/core/pipeline_parallel/).
  p.pipeline_split = model::PipelineSplit::off;
  p.pipeline_split_settable = false;
  return p;
}

FrameworkProfile make_torch() {
  FrameworkProfile p;
  p.framework = Framework::torch_fsdp;
  p.name = "torch-fsdp";
  p.version = "PyTorch 2.7 (DDP, FSDP2 fully_shard, DTensor TP, torch.distributed.pipelining)";
  p.default_stack = model::Stack::pytorch_eager;  // torchtitan's configs: compile = false
  // No TP overlap without torch.compile (async TP is an inductor pass, not a module API) [T].
  p.tp_overlaps = {k_none};
  p.cp_comms = {CpCommType::allgather, CpCommType::p2p};
  // DDP (0), fully_shard(reshard_after_forward=False) (2), True (3) [T]. torch's ZeRO-1,
  // torch.distributed.optim.ZeroRedundancyOptimizer beside DDP, all-reduces the gradients, then each rank
  // broadcasts its updated shard (zero_redundancy_optimizer.py _sync_params): not the reduce-scatter and
  // all-gather Lagom prices for ZeRO-1, whose tuner rules would never match.
  p.zero_stages = {0, 2, 3};
  p.zero_refusals = {{1,
                      "torch's ZeRO-1, DDP + ZeroRedundancyOptimizer, all-reduces gradients and broadcasts "
                      "each rank's shard: not modelled; torch-fsdp runs zero 0, 2, 3"}};
  p.recomputes = k_torch_recompute;
  p.recompute_every = true;
  // torch has no MoE token dispatcher of its own.
  p.expert_parallel = false;
  // HSDP: fully_shard on a 2-D device mesh (replicate, shard) [T]; ZeroRedundancyOptimizer has no replicas.
  p.hybrid_zero_stages = {2, 3};
  p.bucket_unit = BucketUnit::mebibytes;
  p.bucket_grid = {25, 50, 100, 200};
  p.max_zero_with_bucket = 0;  // fully_shard reduces per wrapped module: no bucket to tune
  p.prefetch_grid = {1, 2};
  p.priorities = {IssuePriority::as_scheduled};
  // No NCCL symmetric windows at torchtitan@e347b1e5 (FSDP2 gathers into caching-allocator buffers). Later
  // torchtitan adds parallelism.enable_fsdp_symm_mem (b5bcd76c: config/configs.py:160,
  // distributed/fsdp.py:102-109, FSDPModule.set_symm_mem_for_comm); whether those gathers then run as NCCL
  // symmetric-window calls depends on torch's symmetric-memory backend, not read here: not offered.
  // torch.distributed.pipelining sends a stage's output tensors whole.
  p.pipeline_split = model::PipelineSplit::off;
  p.pipeline_split_settable = false;
  // Its zero 2 is fully_shard(reshard_after_forward=False) [T]: FSDP's, gathered before every forward.
  p.zero2 = model::Zero2::fsdp;
  // Its sharding is FSDP2's fully_shard [T].
  p.sharding = model::ShardingLibrary::fsdp2;
  return p;
}

FrameworkProfile make_deepspeed() {
  FrameworkProfile p;
  p.framework = Framework::deepspeed;
  p.name = "deepspeed";
  p.version = "DeepSpeed 0.16.4";
  p.tp_overlaps = {k_none};
  p.cp_comms = {CpCommType::a2a};  // DeepSpeed-Ulysses
  p.zero_stages = {0, 1, 2, 3};
  p.recomputes = {Recompute::none, Recompute::full};
  // Its checkpoint (CheckpointFunction, reentrant) and non_reentrant_checkpoint are its own and rerun the
  // whole function ([D] runtime/activation_checkpointing/checkpointing.py:488, 704).
  p.no_early_stop = "DeepSpeed's checkpoint and non_reentrant_checkpoint rerun the whole forward";
  p.sequence_parallel = false;     // AutoTP shards the linear layers only
  p.interleaved_pipeline = false;  // PipelineModule runs one stage per rank
  p.max_zero_with_pipeline = 1;    // [D] pipe/engine.py
  p.max_zero_with_tp = 2;          // [D] AutoTP training composes with ZeRO 1 and 2, not 3
  p.no_hybrid_sharding = "DeepSpeed's hierarchical partitioning (hpZ, MiCS) is not modelled";
  p.bucket_unit = BucketUnit::elements;
  p.bucket_grid = {5e7, 2e8, 5e8};  // 5e8 is the default
  p.prefetch_grid = {1, 2};
  p.priorities = {IssuePriority::as_scheduled};
  // DeepSpeed 0.16.4 registers no NCCL buffers (no ncclCommRegister, symmetric memory or CTA policy in its
  // Python source): its collectives run NCCL's kernels whatever the policy.
  // Its pipeline engine splits a stage's output over the model-parallel ranks (pipe_partitioned and
  // grad_partitioned, true by default: [D] runtime/pipe/engine.py:144-145); the config sets either way.
  p.pipeline_split = model::PipelineSplit::on;
  // Stage 2 keeps the whole 16-bit parameters on every rank and all-gathers the updated partitions after
  // the step ([D] runtime/zero/stage_1_and_2.py:1930).
  p.zero2 = model::Zero2::deepspeed;
  // Its ZeRO-3 is its own ([D] runtime/zero/stage3.py), not FSDP.
  p.sharding = model::ShardingLibrary::deepspeed;
  return p;
}

template <typename T>
bool contains(const std::vector<T>& values, const T& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

template <typename T, typename F>
std::string listed(const std::vector<T>& values, F&& name) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::string(name(values[i]));
  return out;
}

Status refuse(const FrameworkProfile& p, const std::string& what) {
  return make_error(ErrorCode::invalid_input, fmt::format("--framework {}: {}", p.name, what));
}

double grad_bytes(const model::Strategy& s) {
  return model::bytes_per_element(s.gradient_dtype());
}

}  // namespace

bool has_dp_buckets(const model::Strategy& s) {
  return s.dp * s.cp > 1 && s.zero < 3;
}

Result<Framework> parse_framework_flag(std::string_view name) {
  auto framework = k_framework_names.parse_or_error(name);
  if (!framework.ok()) return framework.error().with_context("framework");
  return framework;
}

const FrameworkProfile& framework_profile(Framework framework) {
  static const std::array<FrameworkProfile, 4> k_profiles{make_any(), make_megatron(), make_torch(),
                                                          make_deepspeed()};
  return k_profiles.at(static_cast<std::size_t>(framework));
}

Status check_strategy(const FrameworkProfile& p, const model::Strategy& s) {
  if (p.framework == Framework::any) return {};
  if (!contains(p.tp_overlaps, s.tp_overlap)) {
    return refuse(
        p, fmt::format("tp-overlap {} is not available ({} runs {})", model::to_string(s.tp_overlap), p.name,
                       listed(p.tp_overlaps, [](const auto& m) { return model::to_string(m); })));
  }
  if (p.tp_overlap_needs_sp && s.tp_overlap.kind != OverlapMethodKind::none && !s.sp) {
    return refuse(p, fmt::format("tp-overlap {} needs --sp (Megatron asserts --tp-comm-overlap only with "
                                 "--sequence-parallel)",
                                 model::to_string(s.tp_overlap)));
  }
  if (s.sp && !p.sequence_parallel) return refuse(p, "--sp is not available (no sequence parallelism)");
  if (s.cp > 1 && !p.cp_comms.empty() && !contains(p.cp_comms, s.cp_comm)) {
    return refuse(p, fmt::format("cp-comm-type {} is not available ({} runs {})", model::to_string(s.cp_comm),
                                 p.name, listed(p.cp_comms, [](auto c) { return model::to_string(c); })));
  }
  if (!contains(p.zero_stages, s.zero)) {
    for (const auto& [stage, why] : p.zero_refusals) {
      if (stage == s.zero) return refuse(p, fmt::format("zero {} is not available ({})", s.zero, why));
    }
    return refuse(p, fmt::format("zero {} is not available ({} runs zero {})", s.zero, p.name,
                                 listed(p.zero_stages, [](int z) { return std::to_string(z); })));
  }
  if (s.tp > 1 && s.zero > p.max_zero_with_tp) {
    return refuse(p, fmt::format("zero {} with tp > 1 is not available ({} runs zero {} at most with TP)",
                                 s.zero, p.name, p.max_zero_with_tp));
  }
  if (s.pp > 1 && s.zero > p.max_zero_with_pipeline) {
    return refuse(
        p, fmt::format("zero {} with pp > 1 is not available ({} runs zero {} at most with a pipeline)",
                       s.zero, p.name, p.max_zero_with_pipeline));
  }
  if (s.hybrid_shard() && p.hybrid_zero_stages.empty()) {
    return refuse(p, fmt::format("dp-shard {} (hybrid sharding) is not available ({})", s.dp_shard,
                                 p.no_hybrid_sharding));
  }
  if (s.hybrid_shard() && !contains(p.hybrid_zero_stages, s.zero)) {
    return refuse(p, fmt::format("dp-shard {} (hybrid sharding) with zero {} is not available ({} shards "
                                 "hybrid with zero {})",
                                 s.dp_shard, s.zero, p.name,
                                 listed(p.hybrid_zero_stages, [](int z) { return std::to_string(z); })));
  }
  if (!contains(p.recomputes, s.recompute)) {
    return refuse(p, fmt::format("recompute {} is not available ({} runs {})", model::to_string(s.recompute),
                                 p.name, listed(p.recomputes, [](auto r) { return model::to_string(r); })));
  }
  if (s.recompute_layers > 0 && !p.recompute_block) {
    return refuse(p,
                  fmt::format("recompute-layers {} is not available ({} recomputes every layer or none; "
                              "the first N layers of each chunk is Megatron-LM's --recompute-method block)",
                              s.recompute_layers, p.name));
  }
  if (s.recompute_every > 0 && !p.recompute_every) {
    return refuse(p, fmt::format("recompute-every {} is not available ({} recomputes every layer or none; "
                                 "every k-th layer is torchtitan's selective_ac_option = \"k\")",
                                 s.recompute_every, p.name));
  }
  if (!p.pipeline_split_settable && s.pp > 1 &&
      model::pipeline_splits_over_tp(s) != (p.pipeline_split == model::PipelineSplit::on)) {
    return refuse(p, fmt::format("pp-tp-split {} is not available ({} sends a pipeline stage's output {})",
                                 model::to_string(s.pp_tp_split), p.name,
                                 p.pipeline_split == model::PipelineSplit::on ? "split over TP" : "whole"));
  }
  // `auto` is the framework's own (with_framework_defaults).
  if (s.zero == 2 && p.zero2 != model::Zero2::automatic && s.zero2 != model::Zero2::automatic &&
      s.zero2 != p.zero2) {
    return refuse(
        p, fmt::format("zero2 {} is not available ({}'s zero 2 is {})", model::to_string(s.zero2), p.name,
                       p.zero2 == model::Zero2::fsdp
                           ? "FSDP's: fully_shard(reshard_after_forward=False)"
                           : "DeepSpeed's stage 2: whole parameters, shards gathered after the step"));
  }
  if (s.recompute_early_stop && !p.no_early_stop.empty())
    return refuse(p, fmt::format("recompute-early-stop is not available ({})", p.no_early_stop));
  if (s.sharding != model::ShardingLibrary::automatic && p.sharding != model::ShardingLibrary::automatic &&
      s.sharding != p.sharding) {
    return refuse(p, fmt::format("sharding {} is not available ({} shards with {})",
                                 model::to_string(s.sharding), p.name, model::to_string(p.sharding)));
  }
  if (s.vpp > 1 && !p.interleaved_pipeline)
    return refuse(p, "vpp > 1 is not available (no interleaved pipeline schedule)");
  if (s.ep > 1 && !p.expert_parallel) return refuse(p, "ep > 1 is not available (no expert parallelism)");
  if (p.framework != Framework::megatron_lm) {
    // Megatron-Core's own overlap and MoE options (docs/cli.md): the other frameworks have no equivalent.
    if (s.p2p_overlap || s.param_gather_overlap || s.param_gather_with_optimizer || s.bucket_per_chunk)
      return refuse(p,
                    "the p2p-overlap, param-gather-overlap and per-chunk bucket options are Megatron-LM's");
    if (s.moe_dispatcher != model::MoeDispatcher::alltoall)
      return refuse(p, "moe-dispatcher allgather is Megatron-LM's (all-to-all only)");
  }
  return {};
}

Status check_priority(const FrameworkProfile& p, IssuePriority priority) {
  if (contains(p.priorities, priority)) return {};
  return refuse(p,
                fmt::format("issue-priority {} is not available (no framework orders concurrent collectives "
                            "on a link; only --framework any offers it)",
                            simulator::to_string(priority)));
}

double bucket_mb_of(const FrameworkProfile& p, double value, const model::Strategy& s) {
  switch (p.bucket_unit) {
    case BucketUnit::megabytes:
      return value;
    case BucketUnit::mebibytes:
      return value * 1024.0 * 1024.0 / 1e6;
    case BucketUnit::parameters:
    case BucketUnit::elements:
      return value * grad_bytes(s) / 1e6;
  }
  return value;
}

double bucket_in_unit(const FrameworkProfile& p, double mb, const model::Strategy& s) {
  switch (p.bucket_unit) {
    case BucketUnit::megabytes:
      return mb;
    case BucketUnit::mebibytes:
      return mb * 1e6 / (1024.0 * 1024.0);
    case BucketUnit::parameters:
    case BucketUnit::elements:
      return std::round(mb * 1e6 / grad_bytes(s));
  }
  return mb;
}

double layer_parameters(const model::WorkloadSpec& w) {
  const double embedding =
      static_cast<double>(w.vocab) * static_cast<double>(w.hidden) * (w.tied_embeddings ? 1.0 : 2.0);
  return (w.parameters() - embedding) / std::max(1, w.layers);
}

model::Strategy with_framework_defaults(const FrameworkProfile& profile, model::Strategy strategy) {
  // Only where each can act (model::pipeline_splits_over_tp; zero 2; FSDP's layer gathers): elsewhere the
  // value would mean nothing, and given back as a flag it is refused by the flag contexts.
  const bool can_act = strategy.pp > 1 && strategy.tp > 1 && !strategy.sp;
  if (can_act && strategy.pp_tp_split == model::PipelineSplit::stack)
    strategy.pp_tp_split = profile.pipeline_split;
  if (strategy.zero == 2 && strategy.zero2 == model::Zero2::automatic) strategy.zero2 = profile.zero2;
  if (model::gathers_per_layer(strategy) && strategy.sharding == model::ShardingLibrary::automatic)
    strategy.sharding = profile.sharding;
  return strategy;
}

double default_bucket_mb(const FrameworkProfile& p, const model::WorkloadSpec& w, const model::Strategy& s) {
  switch (p.framework) {
    case Framework::megatron_lm:
      return bucket_mb_of(p, std::max(4e7, 1e6 * s.dp * s.cp), s);
    case Framework::torch_fsdp:
      // FSDP2 reduce-scatters each fully_shard module's gradients in one call, no bucket size: torchtitan
      // wraps every transformer block, so a bucket is one layer's gradients on this rank (TP shards them).
      if (s.zero >= 2) return layer_parameters(w) / s.tp * grad_bytes(s) / 1e6;
      return bucket_mb_of(p, 25, s);
    case Framework::deepspeed:
      return bucket_mb_of(p, 5e8, s);
    case Framework::any:
      break;
  }
  return s.bucket_mb;
}

std::vector<std::string> megatron_args(const model::Strategy& s, const FrameworkKnobs& k) {
  const FrameworkProfile& p = framework_profile(Framework::megatron_lm);
  std::vector<std::string> out;
  auto add = [&](std::string line) { out.push_back(std::move(line)); };
  // The layout [M:2561, 2563, 2704, 3033, 3035, 2586, 2224, 1974, 1981].
  add(fmt::format("--tensor-model-parallel-size {}", s.tp));
  add(fmt::format("--pipeline-model-parallel-size {}", s.pp));
  if (s.cp > 1) add(fmt::format("--context-parallel-size {}", s.cp));
  if (s.ep > 1) {
    add(fmt::format("--expert-model-parallel-size {}", s.ep));
    add(fmt::format("--expert-tensor-parallel-size {}", s.expert_tp > 0 ? s.expert_tp : s.tp));
  }
  if (s.vpp > 1) add(fmt::format("--num-virtual-stages-per-pipeline-rank {}", s.vpp));
  if (s.sp) add("--sequence-parallel");
  add(fmt::format("--micro-batch-size {}", s.micro_batch));
  add(fmt::format("--global-batch-size {}", s.global_batch));
  // Precision [M:2518-2522]: with --bf16 Megatron reduces gradients in fp32 unless --grad-reduce-in-bf16
  // [M:733-745]; Lagom's gradient dtype says which.
  if (s.precision == model::Precision::bf16 || s.precision == model::Precision::fp8) {
    add("--bf16");
    if (s.gradient_dtype() == model::Precision::bf16) add("--grad-reduce-in-bf16");
  } else if (s.precision == model::Precision::fp16) {
    add("--fp16");
  }
  if (s.cp > 1) add(fmt::format("--cp-comm-type {}", model::to_string(s.cp_comm)));
  // Recompute [M:2010, 2031, 2040]: full recomputes every layer of a stage.
  if (s.recompute == Recompute::selective) add("--recompute-granularity selective");
  if (s.recompute == Recompute::full) {
    add("--recompute-granularity full");
    add(s.recompute_layers > 0 ? "--recompute-method block" : "--recompute-method uniform");
    add(fmt::format("--recompute-num-layers {}", s.recompute_layers > 0 ? s.recompute_layers : 1));
  }
  // ZeRO [M:2658, 2674, 2677].
  if (s.zero == 1) add("--use-distributed-optimizer");
  if (s.zero == 3) {
    add("--use-megatron-fsdp");
    add("--data-parallel-sharding-strategy optim_grads_params");
  }
  // Overlap [M:2605, 2629, 2631, 2591, 2090].
  if (s.dp_overlap && s.dp * s.cp > 1) add("--overlap-grad-reduce");
  if (s.param_gather_overlap) add("--overlap-param-gather");
  if (s.param_gather_with_optimizer) add("--overlap-param-gather-with-optimizer-step");
  if (s.vpp > 1 && !s.p2p_overlap) add("--no-overlap-p2p-communication");  // Megatron's default is on
  if (k.tp_overlap.kind == OverlapMethodKind::te) add("--tp-comm-overlap");
  // CTA policy zero acts on symmetric buffers only: the DP buffers in NCCL's windows [M:2660].
  if (k.symmetric_buffers) add("--use-nccl-ub");
  // The bucket, in parameters [M:2620].
  if (has_dp_buckets(s)) add(fmt::format("--ddp-bucket-size {:.0f}", bucket_in_unit(p, k.bucket_mb, s)));
  return out;
}

}  // namespace lagom::search
