// What one pass of a layer is made of, as the cost model lists it and the simulator runs it: compute ops
// and the collectives between them, in Megatron's issue order, for one micro-batch on one GPU
// (CostModel::layer_steps makes them; simulator::IterationCosts hands them to the simulator).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/collectives.h"
#include "model/groups.h"

namespace lagom::model {

// The pass a step belongs to: recompute is what the backward reruns first (nothing without recomputation;
// selective: the attention core; full: the whole forward with its collectives).
enum class Phase { forward, backward, recompute };
inline constexpr auto k_phase_names = enum_table<Phase>(
    {{Phase::forward, "forward"}, {Phase::backward, "backward"}, {Phase::recompute, "recompute"}});
constexpr const auto& enum_names(Phase) {
  return k_phase_names;
}

enum class OpKind { gemm, attention, elementwise, norm, embedding, loss, optimizer };
inline constexpr auto k_op_kind_names = enum_table<OpKind>({{OpKind::gemm, "gemm"},
                                                            {OpKind::attention, "attention"},
                                                            {OpKind::elementwise, "elementwise"},
                                                            {OpKind::norm, "norm"},
                                                            {OpKind::embedding, "embedding"},
                                                            {OpKind::loss, "loss"},
                                                            {OpKind::optimizer, "optimizer"}});
constexpr const auto& enum_names(OpKind) {
  return k_op_kind_names;
}

// A (batched) GEMM C[m×n] = A[m×k]·B[k×n], `batch` independent problems (e.g. heads, experts).
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  [[nodiscard]] double flops() const { return 2.0 * m * n * k * batch; }
  [[nodiscard]] bool empty() const { return m == 0; }
};

// One kernel on one GPU for one micro-batch.
struct ComputeOp {
  std::string name;  // e.g. "qkv", "attention", "mlp.fc1.dgrad"
  OpKind kind = OpKind::gemm;
  Phase phase = Phase::forward;
  double flops = 0;        // arithmetic executed (hardware FLOPs; matmuls only, elementwise ops 0)
  double model_flops = 0;  // FLOPs counted as model FLOPs (docs/model.md#flops-convention; 0 for recompute)
  double bytes = 0;        // HBM traffic, bytes
  GemmShape gemm;          // the GEMM shape when kind is gemm or attention (per GPU)
  double time_us = 0;      // isolated time (no concurrent collective)
  // Runs on the FP8 tensor cores when the strategy's precision is fp8 (Transformer Engine's FP8 linear
  // GEMMs); every other op of an FP8 run computes in BF16 (docs/model.md "FP8").
  bool fp8 = false;
  bool flash = false;   // a fused (flash) attention kernel: priced at the GPU's attention fraction
  bool flash2 = false;  // ... and it is FlashAttention-2's kernel (Attention::flash2)
  bool flash1 = false;  // ... or FlashAttention-1's (Attention::flash1)
  // Kernels the host launches for this op, one after another: an op standing for a run of small framework
  // kernels (the MoE router's bookkeeping) takes at least launches × the cluster's kernel_launch_us;
  // backward_launches is what its backward launches (autograd's nodes for those kernels).
  int launches = 1;
  int backward_launches = 1;
  // HBM bytes of this op's backward; < 0: twice `bytes` (read the saved input and the incoming gradient,
  // write the gradient), the rule for a fused memory-bound op. An unfused chain's backward is counted from
  // autograd's nodes for its kernels (model/elementwise.h ElementwiseChain).
  double backward_bytes = -1;
  // One weight GEMM (kind gemm, not batched, non-empty): what TP overlap decomposes with its collective
  // (model/overlap_plan.h).
  [[nodiscard]] bool is_weight_gemm() const { return kind == OpKind::gemm && gemm.batch == 1 && gemm.m > 0; }
};

// A collective between compute ops, for one micro-batch.
struct CommOp {
  std::string name;  // e.g. "attn.allreduce", "moe.dispatch"
  Collective collective = Collective::allreduce;
  Group group = Group::tp;
  double bytes = 0;  // nccl-tests' size (docs/cli.md#units: per-rank buffer, total for AG/RS)
  Phase phase = Phase::forward;
};

// One step of a layer, in issue order: a compute op or a collective (exactly one is meaningful).
struct Step {
  bool is_comm = false;
  ComputeOp compute;
  CommOp comm;
};

}  // namespace lagom::model
