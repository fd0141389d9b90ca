#pragma once
// Checkpoint policies as data (docs/model.md "Checkpoint policies"): which of a layer's tensors a policy
// that checkpoints whole layers (Strategy::checkpoints_layers) keeps from the forward, and what share of
// each forward op the backward reruns. A checkpointed layer keeps its input and the outputs its policy
// saves; the recompute reruns every other op of the layer's forward (torch.utils.checkpoint with a
// selective policy returns a saved op's output instead of rerunning it and reruns the rest,
// torch/utils/checkpoint.py _CachingTorchDispatchMode; torchtitan runs it without early stop,
// ActivationCheckpoint.early_stop = False; JAX's remat saves the named values and recomputes the rest).
#include <string_view>

#include "model/specs.h"
#include "model/steps.h"

namespace lagom::model {

// The tensors a policy can name, as the frameworks name them: torchtitan's Llama (wq, wk, wv, wo, w1, w3,
// w2: pytorch/torchtitan@e347b1e5 torchtitan/models/llama3/model/model.py:251, 304, 343) and MaxText's
// checkpoint names (query_proj, key_proj, value_proj, context, out_proj, mlpwi_0, mlpwi_1 / mlpwi, mlpwo:
// AI-Hypercomputer/maxtext@e591f30c src/maxtext/layers/decoders.py:326-344, attentions.py:1323, 1366,
// attention_op.py:2407-2408).
enum class LayerTensor {
  q,          // the query projection's output (wq, query_proj)
  k,          // the key projection's output (wk, key_proj)
  v,          // the value projection's output (wv, value_proj)
  context,    // the attention kernel's output and its log-sum-exp (SDPA, context)
  out_proj,   // the output projection's output, before its TP reduction (wo, out_proj)
  tp_output,  // the TP reduce-scatters' outputs under SP (_c10d_functional.reduce_scatter_tensor)
  mlp_gate,   // FC1's output: the gate half of a gated MLP, the whole FC1 otherwise (w1, mlpwi_0 / mlpwi)
  mlp_up,     // the up half of a gated MLP's FC1 (w3, mlpwi_1)
  mlp_out,    // FC2's output, before its TP reduction (w2, mlpwo)
};

// Whether `policy` (a checkpointing one) saves `tensor` of a layer whose MLP is gated or not. torchtitan's
// op policy saves every matmul output except every second one in the layer's order (wq, wk, wv, wo, w1,
// w3, w2: q, v, the gate and FC2 for a gated MLP; q, v and FC1 for a plain one), SDPA's output and the
// reduce-scatters (torchtitan/distributed/activation_checkpoint.py:106-125, the save list in
// torchtitan/models/llama3/infra/parallelize.py:36-51). MaxText: minimal saves every projection, minimal_
// with_context also the attention's output, save_dot_except_mlpwi every projection but FC1,
// save_dot_except_mlp the attention's projections, save_qkv_proj q, k and v, save_out_proj the output
// projection (decoders.py:346-433). full saves nothing; none and selective are not layer checkpoints.
bool policy_saves(Recompute policy, LayerTensor tensor, bool gated_mlp);

// The bytes one checkpointed layer keeps from its forward until its backward, per GPU for one micro-batch
// (the layer's input and the outputs its policy saves, in 16 bits; docs/model.md "Checkpoint policies").
double checkpointed_layer_bytes(const WorkloadSpec& workload, const Strategy& strategy, int layer);

// The share (0-1) of a forward step of a checkpointed layer that the recompute reruns, by the step's name
// and kind (model/cost_compute.cpp LayerBuilder): a projection GEMM whose output the policy saves is not
// rerun (a fused QKV or gate/up GEMM in the share of its outputs that are not saved, by width); the
// attention kernel and its CP steps and exchanges not when the context is saved; a TP reduce-scatter not
// when its output is; norms, activations, residuals, routers and every other collective always.
double recompute_share(Recompute policy, const Step& forward_step, const WorkloadSpec& workload);

}  // namespace lagom::model
