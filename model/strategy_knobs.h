// The strategy's knobs as one table: each knob of model::Strategy once, with its JSON key (to_json and
// parse_strategy, model/strategy_json.h), its flag and help (inputs/scenario.cpp's add_strategy_flags) and
// how its value is spelt and bounded. The three readers walk the table with for_each_knob, so a knob is one
// row: ARCHITECTURE.md's checklist "A new strategy knob / a new parallelism dimension" says what else it
// needs (its check in resolve_strategy, its effect in the stage plan, docs/cli.md's row).
//
// The kinds of knob (one descriptor type each; a reader overloads on them):
//   CountKnob<T>  an integer: JSON number ≥ json_min (up to T's range), flag `--x N` within
//                 [flag_min, flag_max] (counts bounded so products of them stay far from overflow); with
//                 omit_zero, 0 is left out of the JSON;
//   SwitchKnob    "on"|"off" in JSON, `--x on|off` (true|false too, as runs files write either);
//   BooleanKnob   true|false in JSON, `--x on|off|true|false`;
//   ToggleKnob    true|false in JSON, `--x` without a value (no flag when `flag` is empty);
//   ChoiceKnob    an enum by its name table (core/enum_table.h), in JSON and at the flag;
//   NumberKnob    a finite number: JSON ≥ 0 (> 0 unless zero_allowed) and ≤ max; the flag the same, but > 0
//                 when flag_positive;
//   MethodKnob    the TP overlap method (model/overlap_method.h, its one parser);
//   DtypeKnob     the gradient dtype: JSON writes the resolved one (Strategy::gradient_dtype), reads any
//                 precision name; the flag takes bf16|fp16|fp32;
//   BucketKnob    the gradient bucket, MB: JSON a positive number; the flag a number or `chunk` (which sets
//                 the ToggleKnob bucket_mb_per_chunk instead).
// Defaults are model::Strategy's initialisers; the help's [default] restates them for `--help`.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "core/enum_table.h"
#include "model/specs.h"

namespace lagom::model {

// The most GPUs (or ranks) a count flag takes: 2^20, beyond any cluster built, so that products of counts and
// sizes stay far from overflow in the cost model.
inline constexpr int k_max_gpus = 1 << 20;

// What every knob has: its JSON key, its flag ("--tp"; empty: no flag of its own) and the flag's help.
struct KnobName {
  std::string_view key, flag, help;
};
template <typename T>
struct CountKnob {
  KnobName name;
  T json_min = 1, flag_min = 1, flag_max = k_max_gpus;
  // 0 is not written to JSON (absent reads as 0): a knob added after documents were recorded whose 0
  // means "as before", so that every document of a strategy without it stays as it was.
  bool omit_zero = false;
};
struct SwitchKnob {
  KnobName name;
};
struct BooleanKnob {
  KnobName name;
};
struct ToggleKnob {
  KnobName name;
};
template <typename E, std::size_t N>
struct ChoiceKnob {
  KnobName name;
  const EnumTable<E, N>& table;
};
// Clang 14 has no class template argument deduction for aggregates (P1816), so the guide is spelled out.
template <typename E, std::size_t N>
ChoiceKnob(KnobName, const EnumTable<E, N>&) -> ChoiceKnob<E, N>;
struct NumberKnob {
  KnobName name;
  bool zero_allowed = false;
  double max = 1e6;  // in the knob's unit, beyond any sensible value
  bool flag_positive = false;
};
struct MethodKnob {
  KnobName name;
};
struct DtypeKnob {
  KnobName name;
};
struct BucketKnob {
  KnobName name;
};

// The sequence counts' largest flag value (2^31 − 1 sequences).
inline constexpr long k_max_batch = std::numeric_limits<int>::max();

// The knobs of Megatron-Core's own mechanisms (MoE, the pipeline split, its overlaps, the gradient buffer,
// FP8 as Transformer Engine runs it) and dropout, in the order for_each_knob visits them after the others.
template <typename S, typename Visit>
void for_each_megatron_knob(S& s, Visit&& visit) {
  visit(ChoiceKnob{{"moe_dispatcher", "--moe-dispatcher", "MoE token dispatcher [alltoall]"},
                   k_moe_dispatcher_names},
        s.moe_dispatcher);
  visit(NumberKnob{{"moe_capacity_factor", "--moe-capacity-factor",
                    "MoE expert capacity factor (rows beyond capacity are dropped) [none: dropless]"},
                   true,
                   1e6,
                   true},
        s.moe_capacity_factor);
  visit(BooleanKnob{{"moe_pad_to_capacity", "--moe-pad-to-capacity",
                     "on|off: pad every expert's input to its capacity [off]"}},
        s.moe_pad_to_capacity);
  visit(
      BooleanKnob{
          {"moe_grouped_gemm", "--moe-grouped-gemm",
           "on|off: one grouped GEMM for the local experts (off: one GEMM per expert in sequence) [on]"}},
      s.moe_grouped_gemm);
  visit(CountKnob<int>{{"expert_tp", "--expert-tp", "Expert tensor parallelism [= tp]"}, 0}, s.expert_tp);
  visit(CountKnob<int>{{"first_stage_layers", "--first-stage-layers",
                        "Layers on the first pipeline rank (the others share the rest) [even split]"},
                       0},
        s.first_stage_layers);
  visit(CountKnob<int>{{"last_stage_layers", "--last-stage-layers",
                        "Layers on the last pipeline rank (the others share the rest) [even split]"},
                       0},
        s.last_stage_layers);
  visit(ToggleKnob{{"embedding_in_pipeline_split", "--embedding-in-pipeline-split",
                    "The embedding counts as one layer in the pipeline split"}},
        s.embedding_in_split);
  visit(ToggleKnob{{"loss_in_pipeline_split", "--loss-in-pipeline-split",
                    "The output layer and loss count as one layer in the pipeline split"}},
        s.loss_in_split);
  visit(SwitchKnob{{"p2p_overlap", "--p2p-overlap",
                    "Interleaved schedule's sends/receives overlapped with compute [off]"}},
        s.p2p_overlap);
  visit(SwitchKnob{{"param_gather_overlap", "--param-gather-overlap",
                    "ZeRO 1/2 parameter all-gathers overlapped with the next forward [off]"}},
        s.param_gather_overlap);
  visit(SwitchKnob{{"param_gather_with_optimizer", "--param-gather-with-optimizer",
                    "With --param-gather-overlap, chunk 0's all-gather starts in the optimizer step [off]"}},
        s.param_gather_with_optimizer);
  visit(DtypeKnob{{"grad_reduce_dtype", "--grad-reduce-dtype",
                   "bf16|fp16|fp32: gradient buffer and reduction dtype [the parameters']"}},
        s.grad_reduce_dtype);
  visit(ToggleKnob{{"bucket_mb_per_chunk", "", "(set by --bucket-mb chunk)"}}, s.bucket_per_chunk);
  visit(CountKnob<int>{{"vocab_divisible_by", "--vocab-divisible-by",
                        "Pad the vocabulary to a multiple of N·tp [no padding]"},
                       0},
        s.vocab_divisible_by);
  visit(
      CountKnob<int>{
          {"defer_embedding_wgrad", "--defer-embedding-wgrad",
           "Output-layer wgrad of the first N micro-batches computed in the pipeline flush (pp > 1) "
           "[0: off]"},
          0,
          0,
          1 << 20},
      s.defer_embedding_wgrad);
  visit(SwitchKnob{{"cross_entropy_fusion", "--cross-entropy-fusion",
                    "The vocabulary-parallel loss in Megatron's fused kernels [off]"}},
        s.cross_entropy_fusion);
  visit(
      SwitchKnob{{"tp_overlap_fp8_rs", "--tp-overlap-fp8-rs",
                  "With --tp-overlap te and FP8, the pipelined reduce-scatters move FP8 (TE fp8_buf) [off]"}},
      s.tp_overlap_fp8_rs);
  visit(BooleanKnob{{"fp8_params", "--fp8-params",
                     "FP8 primary weights with --precision fp8: true|false [false]"}},
        s.fp8_params);
  visit(BooleanKnob{{"fp8_wgrad", "--fp8-wgrad",
                     "Weight-gradient GEMMs in FP8 with --precision fp8: true|false [true]"}},
        s.fp8_wgrad);
  visit(BooleanKnob{{"fp8_attention", "--fp8-attention",
                     "Core attention in FP8 with --precision fp8: true|false [false]"}},
        s.fp8_attention);
  visit(NumberKnob{{"dropout", "--dropout", "Hidden and attention dropout probability [0]"}, true, 1.0},
        s.dropout);
}

// Calls visit(descriptor, field) for every knob of `s` (a Strategy or a const Strategy), in the order the
// flags' help and parse_strategy's errors follow.
template <typename S, typename Visit>
void for_each_knob(S& s, Visit&& visit) {
  visit(CountKnob<int>{{"gpus", "--gpus", "Total GPUs (nodes = ⌈N / GPUs per node⌉)"}}, s.gpus);
  visit(CountKnob<int>{{"tp", "--tp", "Tensor parallelism [1]"}}, s.tp);
  visit(CountKnob<int>{{"pp", "--pp", "Pipeline parallelism [1]"}}, s.pp);
  visit(CountKnob<int>{{"dp", "--dp", "Data parallelism [gpus/(tp·pp·cp)]"}, 0}, s.dp);
  visit(CountKnob<int>{{"cp", "--cp", "Context parallelism (communication: --cp-comm-type) [1]"}}, s.cp);
  visit(CountKnob<int>{{"ep", "--ep", "Expert parallelism [1]"}}, s.ep);
  visit(ToggleKnob{{"sp", "--sp", "Sequence parallelism with TP"}}, s.sp);
  visit(CountKnob<int>{{"vpp", "--vpp", "Virtual pipeline stages per rank (interleaved when > 1) [1]"}},
        s.vpp);
  visit(CountKnob<int>{{"zero", "--zero", "ZeRO stage 0-3 (3 = FSDP) [0]"}, 0, 0, 3}, s.zero);
  visit(CountKnob<int>{.name = {"dp_shard", "--dp-shard", "HSDP: ZeRO within groups of N DP ranks [dp]"},
                       .json_min = 0,
                       .omit_zero = true},
        s.dp_shard);
  visit(CountKnob<long>{{"micro_batch", "--micro-batch", "Sequences per micro-batch [1]"}, 1, 1, k_max_batch},
        s.micro_batch);
  visit(CountKnob<long>{{"global_batch", "--global-batch", "Sequences per iteration"}, 0, 1, k_max_batch},
        s.global_batch);
  visit(ChoiceKnob{{"recompute", "--recompute", "Activation recomputation [none]"}, k_recompute_names},
        s.recompute);
  visit(CountKnob<int>{.name = {"recompute_layers", "--recompute-layers",
                                "With --recompute full: only the first N layers of each model chunk "
                                "(Megatron's --recompute-method block) [0: every layer]"},
                       .json_min = 0,
                       .flag_min = 0,
                       .omit_zero = true},
        s.recompute_layers);
  visit(CountKnob<int>{.name = {"recompute_every", "--recompute-every",
                                "With --recompute full: only every k-th layer (torchtitan's "
                                "selective_ac_option = \"k\") [0: every layer]"},
                       .json_min = 0,
                       .flag_min = 0,
                       .omit_zero = true},
        s.recompute_every);
  visit(
      SwitchKnob{{"recompute_early_stop", "--recompute-early-stop",
                  "With --recompute full under a PyTorch stack: torch.utils.checkpoint's early stop "
                  "(non-reentrant, PyTorch >= 2.1's default), the recompute ending at the layer's last "
                  "saved activation, so its last linear layer is not rerun [off: the whole forward again]"}},
      s.recompute_early_stop);
  visit(ChoiceKnob{{"schedule", "--schedule", "Pipeline schedule [1f1b]"}, k_schedule_names}, s.schedule);
  visit(MethodKnob{{"tp_overlap", "--tp-overlap",
                    "none|slice:K (K 2..4096)|flash|te (Transformer Engine userbuffers) [none]"}},
        s.tp_overlap);
  visit(SwitchKnob{{"dp_overlap", "--dp-overlap", "DP gradient buckets during the backward [on]"}},
        s.dp_overlap);
  visit(BucketKnob{{"bucket_mb", "--bucket-mb",
                    "DP gradient bucket, MB, or chunk (one bucket per model chunk) [25]"}},
        s.bucket_mb);
  visit(ChoiceKnob{{"precision", "--precision", "Training precision [bf16]"}, k_precision_names},
        s.precision);
  visit(ChoiceKnob{{"attention", "--attention", "Attention kernel [flash]"}, k_attention_names}, s.attention);
  visit(ChoiceKnob{{"stack", "--stack",
                    "Software stack, for its host cost per op and its elementwise kernels: megatron-core "
                    "(fused, host keeps ahead), megatron-deepspeed (eager Megatron-LM/DeepSpeed 2021-2023), "
                    "pytorch-eager (torchtitan without compile, HF models under FSDP/DeepSpeed: unfused "
                    "RMSNorm, RoPE, SwiGLU) or pytorch-compile (torch.compile: fused) [megatron-core]"},
                   k_stack_names},
        s.stack);
  visit(ChoiceKnob{{"pp_tp_split", "--pp-tp-split",
                    "a pipeline transfer split over the stage's TP ranks, all-gathered after "
                    "the receive (Megatron-DeepSpeed's scatter-gather) [stack: on for megatron-deepspeed]"},
                   k_pipeline_split_names},
        s.pp_tp_split);
  visit(ChoiceKnob{{"zero2", "--zero2",
                    "what zero 2 is: DeepSpeed's (whole parameters on every rank, the "
                    "updated shards all-gathered after the optimizer step) or FSDP's SHARD_GRAD_OP / "
                    "fully_shard(reshard_after_forward=False) (each layer gathered before every forward) "
                    "[auto: fsdp under --framework torch-fsdp, else deepspeed]"},
                   k_zero2_names},
        s.zero2);
  visit(
      ChoiceKnob{{"sharding", "--sharding",
                  "the library that shards zero 3 and FSDP's zero 2, for each gradient's way into its "
                  "reduce-scatter: FullyShardedDataParallel (flat gradient cast and pre-divided), "
                  "fully_shard (one copy into the reduce-scatter input) or DeepSpeed's ZeRO-3 (bucket copy, "
                  "cast, concatenation, pre-divide) [auto: fsdp2 under --framework torch-fsdp, deepspeed "
                  "under deepspeed, else fsdp1]"},
                 k_sharding_library_names},
      s.sharding);
  visit(ChoiceKnob{{"cp_comm_type", "--cp-comm-type",
                    "CP attention: a2a (Ulysses), p2p (K/V ring), allgather (K/V all-gather) [a2a]"},
                   k_cp_comm_type_names},
        s.cp_comm);
  for_each_megatron_knob(s, visit);
}

}  // namespace lagom::model
