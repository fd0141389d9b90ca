#include "model/checkpoint_policy.h"

#include <algorithm>
#include <initializer_list>

namespace lagom::model {

namespace {

bool among(LayerTensor tensor, std::initializer_list<LayerTensor> saved) {
  for (const LayerTensor t : saved) {
    if (t == tensor) return true;
  }
  return false;
}

// torchtitan's op policy counts aten.mm calls; the routed experts run grouped_mm, which its save list does
// not name (torchtitan/models/llama3/infra/parallelize.py:36-51), so they are recomputed.
bool saves_expert_output(Recompute policy, LayerTensor tensor, bool gated_mlp) {
  return policy != Recompute::op && policy_saves(policy, tensor, gated_mlp);
}

double unsaved(bool saved) {
  return saved ? 0.0 : 1.0;
}

// The share of an MLP GEMM named `name` (…fc1 or …fc2) the recompute reruns.
double mlp_gemm_share(Recompute policy, std::string_view name, bool gated, bool routed) {
  const auto saves = [&](LayerTensor t) {
    return routed ? saves_expert_output(policy, t, gated) : policy_saves(policy, t, gated);
  };
  if (name.ends_with("fc2")) return unsaved(saves(LayerTensor::mlp_out));
  if (!gated) return unsaved(saves(LayerTensor::mlp_gate));
  return (unsaved(saves(LayerTensor::mlp_gate)) + unsaved(saves(LayerTensor::mlp_up))) / 2.0;
}

double gemm_share(Recompute policy, std::string_view name, const WorkloadSpec& w, bool gated) {
  const auto saves = [&](LayerTensor t) { return policy_saves(policy, t, gated); };
  if (name.ends_with(".qkv")) {
    // By width: q is hidden wide, k and v kv_heads · head_dim each (LayerBuilder::attention_block).
    const double h = static_cast<double>(w.hidden);
    const double kvd = static_cast<double>(w.kv_heads) * static_cast<double>(w.head_dim());
    return (h * unsaved(saves(LayerTensor::q)) + kvd * unsaved(saves(LayerTensor::k)) +
            kvd * unsaved(saves(LayerTensor::v))) /
           (h + 2.0 * kvd);
  }
  if (name.ends_with(".q")) return unsaved(saves(LayerTensor::q));
  if (name.ends_with(".kv")) return (unsaved(saves(LayerTensor::k)) + unsaved(saves(LayerTensor::v))) / 2.0;
  if (name.ends_with(".proj")) return unsaved(saves(LayerTensor::out_proj));
  if (name.ends_with("fc1") || name.ends_with("fc2")) {
    const bool routed = name.starts_with("moe.") && !name.starts_with("moe.shared.");
    return mlp_gemm_share(policy, name, gated, routed);
  }
  return 1.0;  // the MoE router: torchtitan forces its recompute, MaxText names no router output
}

}  // namespace

bool policy_saves(Recompute policy, LayerTensor tensor, bool gated_mlp) {
  using enum LayerTensor;
  switch (policy) {
    case Recompute::none:
    case Recompute::selective:
    case Recompute::full:
      return false;
    case Recompute::op:
      // Odd matmuls of wq, wk, wv, wo, w1, (w3,) w2: the gate and FC2 when gated, FC1 alone otherwise.
      return among(tensor, {q, v, context, tp_output, mlp_gate}) || (gated_mlp && tensor == mlp_out);
    case Recompute::minimal:
      return among(tensor, {q, k, v, out_proj, mlp_gate, mlp_up, mlp_out});
    case Recompute::minimal_with_context:
      return among(tensor, {q, k, v, context, out_proj, mlp_gate, mlp_up, mlp_out});
    case Recompute::save_dot_except_mlpwi:
      return among(tensor, {q, k, v, out_proj, mlp_out});
    case Recompute::save_dot_except_mlp:
      return among(tensor, {q, k, v, out_proj});
    case Recompute::save_qkv_proj:
      return among(tensor, {q, k, v});
    case Recompute::save_out_proj:
      return tensor == out_proj;
  }
  return false;
}

double recompute_share(Recompute policy, const Step& step, const WorkloadSpec& w) {
  const bool gated = is_gated(w.ffn_type);
  if (step.is_comm) {
    // CP's exchanges belong to the attention (torch's context parallel runs them inside SDPA's dispatch).
    if (step.comm.group == Group::cp) return unsaved(policy_saves(policy, LayerTensor::context, gated));
    // A TP region's reduce-scatter under SP (attn., mlp., moe.shared.reducescatter).
    const bool tp_exit = step.comm.group == Group::tp && step.comm.collective == Collective::reducescatter;
    return tp_exit && policy_saves(policy, LayerTensor::tp_output, gated) ? 0.0 : 1.0;
  }
  const ComputeOp& op = step.compute;
  std::string_view name = op.name;
  const bool attention_step =
      op.kind == OpKind::attention || name.ends_with(".softmax") || name.ends_with(".cp_correction");
  if (attention_step) return unsaved(policy_saves(policy, LayerTensor::context, gated));
  if (name.ends_with(".cast")) {
    // An FP8 input cast reruns when any of its GEMM does.
    name.remove_suffix(std::string_view(".cast").size());
    return gemm_share(policy, name, w, gated) > 0 ? 1.0 : 0.0;
  }
  if (op.kind == OpKind::gemm) return gemm_share(policy, name, w, gated);
  return 1.0;  // norms, activations, residuals, permutations
}

double checkpointed_layer_bytes(const WorkloadSpec& w, const Strategy& s, int layer) {
  using enum LayerTensor;
  const double tokens = static_cast<double>(w.seq) / s.cp * static_cast<double>(s.micro_batch);
  const double h = static_cast<double>(w.hidden);
  const double kvd = static_cast<double>(w.kv_heads) * static_cast<double>(w.head_dim());
  const double t = s.tp;
  const double sp_div = s.sp ? t : 1.0;
  const bool gated = is_gated(w.ffn_type);
  const auto saved = [&](LayerTensor tensor) { return policy_saves(s.recompute, tensor, gated) ? 1.0 : 0.0; };
  double bytes = 2.0 * tokens * h / sp_div;  // the layer's input
  // Attention: q, k, v and the context (with a fused kernel its fp32 log-sum-exp per head and token); the
  // output projection's local product is hidden wide before the TP reduction. A cross-attention layer has
  // a second attention.
  const double attentions = w.decoder_layers > 0 && layer >= w.encoder_layers ? 2.0 : 1.0;
  const double lse = is_fused(s.attention) ? 4.0 * tokens * w.heads / t : 0.0;
  bytes += attentions * (saved(q) * 2.0 * tokens * h / t + (saved(k) + saved(v)) * 2.0 * tokens * kvd / t +
                         saved(context) * (2.0 * tokens * h / t + lse) + saved(out_proj) * 2.0 * tokens * h);
  // TP regions left by a reduce-scatter under SP: each attention, and the dense MLP or the shared experts.
  if (s.tp > 1 && s.sp) {
    const bool moe = w.is_moe_layer(layer);
    const double regions = attentions + (!moe || w.moe->shared_experts > 0 ? 1.0 : 0.0);
    bytes += saved(tp_output) * regions * 2.0 * tokens * h / t;
  }
  // MLP: FC1's outputs (gate and up when gated) and FC2's, per row of its width.
  const auto mlp = [&](double rows, double width, double width_div, bool routed) {
    const auto keeps = [&](LayerTensor tensor) {
      return (routed ? saves_expert_output(s.recompute, tensor, gated)
                     : policy_saves(s.recompute, tensor, gated))
                 ? 1.0
                 : 0.0;
    };
    const double fc1 = keeps(mlp_gate) + (gated ? keeps(mlp_up) : 0.0);
    return 2.0 * rows * (fc1 * width / width_div + keeps(mlp_out) * h);
  };
  if (!w.is_moe_layer(layer)) {
    bytes += mlp(tokens, static_cast<double>(w.ffn_hidden), t, false);
  } else {
    const MoeSpec& moe = *w.moe;
    const double fe = static_cast<double>(moe.expert_ffn_hidden);
    // Routed rows: the rank's tokens' top_k copies (balanced routing over the EP ranks), gathered over
    // expert TP, each fe / expert_tp wide; shared experts: a dense TP MLP of their combined width.
    const double etp = std::max(1, s.expert_tp);
    bytes += mlp(tokens / sp_div * moe.top_k * etp, fe, etp, true);
    if (moe.shared_experts > 0) bytes += mlp(tokens, fe * moe.shared_experts, t, false);
  }
  return bytes;
}

}  // namespace lagom::model
