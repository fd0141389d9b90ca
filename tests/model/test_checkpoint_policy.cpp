// Checkpoint policies as data (model/checkpoint_policy.h): for one llama3-8b layer, each policy's saved
// bytes and recomputed FLOPs, derived by hand from the layer's shapes; torchtitan's every-k-th layer.
#include <string>

#include <catch2/catch.hpp>

#include "model/checkpoint_policy.h"
#include "model/cost_model.h"
#include "model/presets.h"

using namespace lagom;
using model::Recompute;

namespace {

// llama3-8b (32 layers, hidden 4096, 32 heads and 8 KV heads of 128, SwiGLU FFN 14336, sequence 8192) on
// one DGX H100 node: tp 8 with SP, one micro-batch of one sequence, flash attention, no dropout.
struct Layer {
  model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  model::ClusterSpec c = model::cluster_preset("dgx-h100").value();
  model::CostModel cost{c};

  [[nodiscard]] model::Strategy strategy(Recompute r, int every = 0) const {
    model::Strategy s;
    s.gpus = 8, s.tp = 8, s.sp = true, s.global_batch = 1, s.recompute = r, s.recompute_every = every;
    return model::resolve_strategy(s, w, c).value();
  }
  [[nodiscard]] double saved_bytes(Recompute r) const {
    return cost.activation_bytes_per_layer(w, strategy(r), 0);
  }
  // FLOPs of the ops the backward reruns for one layer, GEMMs and the attention apart.
  [[nodiscard]] std::pair<double, double> recomputed_flops(Recompute r) const {
    double gemm = 0, attention = 0;
    for (const model::Step& step : cost.layer_steps(w, strategy(r), model::Phase::recompute, 0)) {
      if (step.is_comm) continue;
      if (step.compute.kind == model::OpKind::attention) attention += step.compute.flops;
      if (step.compute.kind == model::OpKind::gemm) gemm += step.compute.flops;
    }
    return {gemm, attention};
  }
  [[nodiscard]] double attention_flops() const {
    for (const model::Step& step : cost.layer_steps(w, strategy(Recompute::none), model::Phase::forward, 0)) {
      if (!step.is_comm && step.compute.kind == model::OpKind::attention) return step.compute.flops;
    }
    return 0;
  }
};

// Per GPU, T = 8192 tokens: 2·T·width bytes for a 16-bit tensor of `width` columns.
constexpr double T = 8192;
constexpr double bytes16(double width) {
  return 2.0 * T * width;
}
// 2·T·n·k FLOPs of a GEMM of T rows.
constexpr double gemm_flops(double n, double k) {
  return 2.0 * T * n * k;
}

}  // namespace

TEST_CASE("each checkpoint policy's saved bytes for one layer, by hand", "[model][recompute]") {
  const Layer layer;
  // The layer's input, sequence-parallel: 2·T·4096/8. q and the context 2·T·4096/8 (the context with its
  // fp32 log-sum-exp, 4 B for each of the 32/8 local heads and token), k and v 2·T·1024/8 each; the output
  // projection's and FC2's local products are hidden wide before their reduce-scatter, 2·T·4096; the
  // reduce-scatters' outputs 2·T·4096/8 each (two per layer); the SwiGLU gate and up 2·T·14336/8 each.
  const double input = bytes16(512), q = bytes16(512), kv = bytes16(128);
  const double context = bytes16(512) + 4.0 * T * 4, product = bytes16(4096), reduced = bytes16(512);
  const double gate = bytes16(1792);
  CHECK(input == 8388608.0);
  CHECK(layer.saved_bytes(Recompute::full) == Approx(input));
  // torchtitan's op policy: wq, wv, w1, w2 (the odd matmuls), SDPA and both reduce-scatters.
  CHECK(layer.saved_bytes(Recompute::op) == Approx(input + q + kv + context + 2 * reduced + gate + product));
  CHECK(layer.saved_bytes(Recompute::op) == Approx(140640256.0));
  // MaxText's presets.
  CHECK(layer.saved_bytes(Recompute::minimal) == Approx(input + q + 2 * kv + product + 2 * gate + product));
  CHECK(layer.saved_bytes(Recompute::minimal_with_context) ==
        Approx(input + q + 2 * kv + context + product + 2 * gate + product));
  CHECK(layer.saved_bytes(Recompute::save_dot_except_mlpwi) ==
        Approx(input + q + 2 * kv + product + product));
  CHECK(layer.saved_bytes(Recompute::save_dot_except_mlp) == Approx(input + q + 2 * kv + product));
  CHECK(layer.saved_bytes(Recompute::save_qkv_proj) == Approx(input + q + 2 * kv));
  CHECK(layer.saved_bytes(Recompute::save_out_proj) == Approx(input + product));
  // Without TP the op policy keeps 63,616 B per token against autograd's 139,264 (Korthikanti's count for
  // this layer without dropout): under half.
  model::Strategy one;
  one.gpus = 1, one.global_batch = 1, one.recompute = Recompute::op;
  one = model::resolve_strategy(one, layer.w, layer.c).value();
  CHECK(layer.cost.activation_bytes_per_layer(layer.w, one, 0) ==
        Approx(T * (2 * 4096 + 2 * 4096 + 2 * 1024 + 2 * 4096 + 4 * 32 + 2 * 14336 + 2 * 4096)));
  one.recompute = Recompute::none;
  CHECK(layer.cost.activation_bytes_per_layer(layer.w, one, 0) == Approx(T * 139264));
}

TEST_CASE("each checkpoint policy's recomputed FLOPs for one layer, by hand", "[model][recompute]") {
  const Layer layer;
  // Per GPU (tp 8): QKV 2·T·768·4096 (q 512 columns, k and v 128 each), the projection 2·T·4096·512, the
  // SwiGLU FC1 2·T·3584·4096 (gate and up 1792 each), FC2 2·T·4096·1792; the attention as the forward's.
  const double qkv = gemm_flops(768, 4096), proj = gemm_flops(4096, 512), fc1 = gemm_flops(3584, 4096);
  const double fc2 = gemm_flops(4096, 1792), attention = layer.attention_flops();
  REQUIRE(attention > 0);
  using Flops = std::pair<double, double>;
  const auto check = [&](Recompute r, Flops expected) {
    INFO(model::to_string(r));
    const Flops got = layer.recomputed_flops(r);
    CHECK(got.first == Approx(expected.first));
    CHECK(got.second == Approx(expected.second));
  };
  check(Recompute::none, {0, 0});
  check(Recompute::selective, {0, attention});  // Megatron: the core attention
  check(Recompute::full, {qkv + proj + fc1 + fc2, attention});
  // torchtitan's op policy reruns wk (128 of QKV's 768 columns), wo and w3 (the up half of FC1).
  check(Recompute::op, {qkv / 6 + proj + fc1 / 2, 0});
  check(Recompute::minimal, {0, attention});
  check(Recompute::minimal_with_context, {0, 0});
  check(Recompute::save_dot_except_mlpwi, {fc1, attention});
  check(Recompute::save_dot_except_mlp, {fc1 + fc2, attention});
  check(Recompute::save_qkv_proj, {proj + fc1 + fc2, attention});
  check(Recompute::save_out_proj, {qkv + fc1 + fc2, attention});
}

TEST_CASE("a checkpointed layer's backward holds its recomputed activations once, less what it saved",
          "[model][recompute]") {
  const Layer layer;
  // pp 1, one micro-batch: 32 layers keep what their policy saves; the backward reruns one layer, whose
  // other activations are live once. Against full recompute (the input saved, the whole layer live once)
  // the op policy holds 32 · (op − input) more and (op − input) less: 31 · (op − input).
  const auto activations = [&](Recompute r, int every = 0) {
    return layer.cost.memory_per_gpu(layer.w, layer.strategy(r, every)).activations_bytes;
  };
  const double input = layer.saved_bytes(Recompute::full), op = layer.saved_bytes(Recompute::op);
  CHECK(activations(Recompute::op) - activations(Recompute::full) == Approx(31 * (op - input)));
}

TEST_CASE("torchtitan's every k-th layer: the k-th, 2k-th, ... layer recomputes, the rest keep all",
          "[model][recompute]") {
  const Layer layer;
  const model::Strategy every4 = layer.strategy(Recompute::full, 4);
  CHECK_FALSE(every4.recomputes_layer(0));
  CHECK_FALSE(every4.recomputes_layer(2));
  CHECK(every4.recomputes_layer(3));
  CHECK(every4.recomputes_layer(7));
  CHECK(model::recompute_text(every4) == "full (every 4 layers)");
  // 8 of 32 layers save their input only, 24 keep everything: against every layer recomputed,
  // 24 · (kept − input) more.
  const auto activations = [&](int every) {
    return layer.cost.memory_per_gpu(layer.w, layer.strategy(Recompute::full, every)).activations_bytes;
  };
  const double kept = layer.saved_bytes(Recompute::none), input = layer.saved_bytes(Recompute::full);
  CHECK(activations(4) - activations(0) == Approx(24 * (kept - input)));
  // It needs full recompute and is not Megatron's block method at once.
  model::Strategy bad = every4;
  bad.recompute = Recompute::op;
  CHECK_FALSE(model::resolve_strategy(bad, layer.w, layer.c).ok());
  bad = every4;
  bad.recompute_layers = 2;
  CHECK_FALSE(model::resolve_strategy(bad, layer.w, layer.c).ok());
  bad = every4;
  bad.recompute_every = -1;
  CHECK_FALSE(model::resolve_strategy(bad, layer.w, layer.c).ok());
}
