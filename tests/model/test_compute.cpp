#include <cmath>

#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/presets.h"

using namespace lagom::model;

namespace {

Strategy strategy_for(const WorkloadSpec& w, const ClusterSpec& c, int gpus, int tp, int cp, long batch,
                      Recompute recompute = Recompute::none, bool sp = false) {
  Strategy s;
  s.gpus = gpus;
  s.tp = tp;
  s.cp = cp;
  s.sp = sp;
  s.global_batch = batch * (gpus / (tp * cp));
  s.micro_batch = batch;
  s.recompute = recompute;
  return resolve_strategy(s, w, c).value();
}

struct Flops {
  double model = 0;
  double hardware = 0;
};

// Sums the per-op decomposition of one micro-batch on one GPU (pp = 1: every layer, embedding and head).
Flops sum_ops(const CostModel& m, const WorkloadSpec& w, const Strategy& s) {
  Flops f;
  auto add = [&](const std::vector<Step>& steps) {
    for (const Step& step : steps) {
      if (step.is_comm) continue;
      f.model += step.compute.model_flops;
      f.hardware += step.compute.flops;
    }
  };
  for (Phase phase : {Phase::forward, Phase::backward, Phase::recompute}) {
    for (int l = 0; l < w.layers; ++l) add(m.layer_steps(w, s, phase, l));
    add(m.embedding_steps(w, s, phase));
    add(m.head_steps(w, s, phase));
  }
  return f;
}

// Megatron (Narayanan et al. SC'21): 72·B·s·l·h²·(1 + s/6h + V/12lh); 96·…·(1 + s/6h + V/16lh) with full
// recompute.
double megatron(const WorkloadSpec& w, double batch, bool full_recompute) {
  const double s = w.seq, l = w.layers, h = w.hidden, v = w.vocab;
  if (full_recompute) return 96.0 * batch * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  return 72.0 * batch * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
}

}  // namespace

TEST_CASE("model FLOPs summed over ops equal Megatron's closed forms for GPT-style presets", "[model]") {
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  for (const char* name : {"gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "bert-base", "bert-large", "phi-2",
                           "mpt-7b", "gpt3-175b"}) {
    INFO(name);
    const WorkloadSpec w = workload_preset(name).value();
    const int tp = w.heads % 4 == 0 ? 4 : 1;
    for (int gpus_tp : {1, tp}) {
      const Strategy s = strategy_for(w, cluster, gpus_tp, gpus_tp, 1, 2);
      const Flops f = sum_ops(model, w, s);
      const double formula = megatron(w, 2, false);
      CHECK(std::abs(f.model * gpus_tp - formula) / formula < 1e-9);
      CHECK(std::abs(CostModel::model_flops_per_iteration(w, 2) - formula) / formula < 1e-9);
      const Strategy full = strategy_for(w, cluster, gpus_tp, gpus_tp, 1, 2, Recompute::full);
      const Flops r = sum_ops(model, w, full);
      // Hardware FLOPs with full recompute: the 96· form, whose attention part 16·B·s²·h per layer becomes
      // 18·B·s²·h (flash attention's backward recomputes the scores: 2.5× the forward, not 2×), times
      // (n + 1)/2n with n = s/128 for a causal kernel (it skips the blocks above the diagonal).
      const double attention = 2.0 * w.seq * w.seq * static_cast<double>(w.hidden) * w.layers;  // B·s²·h·l
      const double n = std::ceil(w.seq / 128.0);
      const double causal = w.causal ? (n + 1) / (2 * n) : 1.0;
      const double expected = megatron(w, 2, true) - 16 * attention + 18 * causal * attention;
      CHECK(std::abs(r.hardware * gpus_tp - expected) / expected < 1e-9);
      CHECK(std::abs(r.model - f.model) / f.model < 1e-12);  // recompute adds no model FLOPs
    }
  }
}

TEST_CASE("gpt3-175b model FLOPs per sequence are pinned", "[model]") {
  // 72·s·l·h²·(1 + s/6h + V/12lh) = 72·2048·96·12288² + 12·2048²·96·12288 + 6·2048·12288·50257
  //   = 2137450604396544 + 59373627899904 + 7588552900608 = 2204412785197056 FLOPs.
  // Full recompute: 96·2048·96·12288² + 16·2048²·96·12288 + 6·2048·12288·50257 = 2936687529295872.
  const WorkloadSpec w = workload_preset("gpt3-175b").value();
  CHECK(CostModel::model_flops_per_iteration(w, 1) == Approx(2204412785197056.0).epsilon(1e-12));
  const ClusterSpec cluster = cluster_preset("dgx-a100").value();
  const CostModel model(cluster);
  const Strategy s = strategy_for(w, cluster, 8, 8, 1, 1, Recompute::full);
  const Flops f = sum_ops(model, w, s);
  CHECK(f.model * 8 == Approx(2204412785197056.0).epsilon(1e-12));
  // Hardware: the attention part 16·s²·l·h = 79164837199872 of the full-recompute form becomes
  // 18 · 17/32 · s²·l·h = 9.5625 · 4947802324992 = 47313359732736 (causal, 16 blocks of 128 per side):
  // 2936687529295872 − 79164837199872 + 47313359732736 = 2904836051828736.
  CHECK(f.hardware * 8 == Approx(2904836051828736.0).epsilon(1e-12));
}

TEST_CASE("llama3-8b model FLOPs per sequence count GQA and SwiGLU", "[model]") {
  // Per token and layer, forward: QKV 2h(h + 2·kv·d) = 2·4096·(4096 + 2·8·128) = 50331648;
  // scores + values 4·s·h = 4·8192·4096 = 134217728; projection 2h² = 33554432;
  // SwiGLU 3 matrices 2·3·h·f = 6·4096·14336 = 352321536. Sum 570425344, × 32 layers = 18253611008;
  // logits 2·h·V = 2·4096·128256 = 1050673152; total 19304284160 per token forward;
  // × 3 (forward + backward) × 8192 tokens = 474422087516160 FLOPs per sequence.
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  CHECK(CostModel::model_flops_per_iteration(w, 1) == Approx(474422087516160.0).epsilon(1e-12));
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  const Strategy s = strategy_for(w, cluster, 8, 8, 1, 1, Recompute::none, true);
  CHECK(sum_ops(model, w, s).model * 8 == Approx(474422087516160.0).epsilon(1e-12));
  const Strategy cp = strategy_for(w, cluster, 8, 4, 2, 1);
  CHECK(sum_ops(model, w, cp).model * 8 == Approx(474422087516160.0).epsilon(1e-12));
}

TEST_CASE("MoE layers count the top-k experts, shared experts and the router", "[model]") {
  const WorkloadSpec w = workload_preset("mixtral-8x7b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  Strategy s;
  s.gpus = 8;
  s.ep = 8;
  s.global_batch = 8;
  s = resolve_strategy(s, w, cluster).value();
  CHECK(sum_ops(model, w, s).model * 8 == Approx(CostModel::model_flops_per_iteration(w, 8)).epsilon(1e-9));
  int dispatch = 0;
  for (const Step& step : model.layer_steps(w, s, Phase::forward, 3)) {
    if (step.is_comm && step.comm.collective == Collective::alltoall && step.comm.group == Group::ep) {
      ++dispatch;
      // tokens 4096 × top-2 × hidden 4096 × 2 bytes
      CHECK(step.comm.bytes == 4096.0 * 2 * 4096 * 2);
    }
  }
  CHECK(dispatch == 2);
}

TEST_CASE("a TP layer has two all-reduces forward, or all-gathers and reduce-scatters with SP", "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec cluster = cluster_preset("dgx-a100").value();
  const CostModel model(cluster);
  auto count = [&](const Strategy& s, Phase phase, Collective c) {
    int n = 0;
    for (const Step& step : model.layer_steps(w, s, phase, 0)) n += step.is_comm && step.comm.collective == c;
    return n;
  };
  const Strategy plain = strategy_for(w, cluster, 8, 8, 1, 1);
  CHECK(count(plain, Phase::forward, Collective::allreduce) == 2);
  CHECK(count(plain, Phase::backward, Collective::allreduce) == 2);
  const Strategy sp = strategy_for(w, cluster, 8, 8, 1, 1, Recompute::none, true);
  CHECK(count(sp, Phase::forward, Collective::allgather) == 2);
  CHECK(count(sp, Phase::forward, Collective::reducescatter) == 2);
  CHECK(count(sp, Phase::backward, Collective::reducescatter) == 2);
  CHECK(count(sp, Phase::backward, Collective::allgather) == 4);  // adjoint of RS + re-gather for wgrad
}

TEST_CASE("a large bf16 GEMM on an H100 runs at the documented sustained fraction of peak", "[model]") {
  const CostModel model(cluster_preset("dgx-h100").value());
  const GemmShape shape{8192, 8192, 8192, 1};
  // 64×64 = 4096 tiles of k 8192 on 132 SMs: the even share 4096·8192/132 = 254,200.2 k-steps per SM;
  // data-parallel 32 waves × (8192 + 64) = 264,192, split 254,200.2 + 33·64 + 4·64 = 256,568.2: the split
  // schedule, 0.99077; × 0.592 sustained.
  const double eff = 0.592 * (4096.0 * 8192 / 132) / (4096.0 * 8192 / 132 + 33 * 64 + 256);
  CHECK(eff == Approx(0.592 * 0.99077).epsilon(1e-5));
  CHECK(model.gemm_efficiency(shape, Precision::bf16) == Approx(eff));
  // The 3 µs launch is hidden behind a GEMM this long (op time = max(GPU time, launch)).
  const double expected_us = shape.flops() / (989e12 * eff) * 1e6;
  CHECK(model.gemm_time_us(shape, Precision::bf16) == Approx(expected_us));
}

TEST_CASE("a deep GEMM of one partial wave splits its k loop over the SMs", "[model]") {
  const CostModel model(cluster_preset("dgx-h100").value());
  // TP 8's ring-exchange chunk of a Llama 3.1 405B QKV: 512 × 2304 × 16384, 4·18 = 72 tiles on 132 SMs.
  // Data-parallel: one wave of 16384 + 64 k-steps for an even share of 72·16384/132 = 8,936.7 (0.543);
  // split: 8,936.7 + 2·64 + 4·64 = 9,320.7 (0.95880).
  CHECK(gemm_schedule_efficiency(72, 16384, 132) == Approx(0.95880).epsilon(1e-5));
  CHECK(model.gemm_efficiency({512, 2304, 16384, 1}, Precision::bf16) ==
        Approx(0.592 * 0.95880).epsilon(1e-5));
  // Whole waves of a shallow GEMM run data-parallel: 264 tiles of k 256, 2 waves × (256 + 64) = 640 against
  // the split's 512 + 3·64 + 256 = 960: 512/640 = 0.8.
  CHECK(gemm_schedule_efficiency(264, 256, 132) == Approx(0.8));
  // SMs held by a collective: the same 72 tiles on 116 SMs split again (72·16384/116 = 10,169.4 of
  // 10,553.4), the interference's ratio.
  CHECK(gemm_schedule_efficiency(72, 16384, 116) == Approx(10169.38 / 10553.38).epsilon(1e-5));
}

TEST_CASE("a GemmFit replaces the default efficiency", "[model]") {
  Calibration cal;
  cal.gemms.push_back(GemmFit{"bf16", 200.0, 1e9, 0.0});
  const CostModel model(cluster_preset("dgx-a100").value(), cal);
  const GemmShape shape{4096, 4096, 4096, 1};
  const double achieved = 200.0 * shape.flops() / (shape.flops() + 1e9);
  CHECK(model.gemm_efficiency(shape, Precision::bf16) == Approx(achieved / 312.0));
}

namespace {

double bytes_of(const std::vector<Step>& steps, std::initializer_list<const char*> suffixes) {
  double total = 0;
  for (const Step& step : steps) {
    if (step.is_comm) continue;
    for (const char* suffix : suffixes) {
      if (step.compute.name.ends_with(suffix)) total += step.compute.bytes;
    }
  }
  return total;
}

const ComputeOp& op_named(const std::vector<Step>& steps, const std::string& name) {
  for (const Step& step : steps) {
    if (!step.is_comm && step.compute.name == name) return step.compute;
  }
  FAIL("no op " << name);
  return steps.front().compute;
}

double comm_bytes(const std::vector<Step>& steps, const std::string& name) {
  for (const Step& step : steps) {
    if (step.is_comm && step.comm.name == name) return step.comm.bytes;
  }
  FAIL("no collective " << name);
  return 0;
}

Strategy fp8_strategy(const WorkloadSpec& w, const ClusterSpec& c) {
  Strategy s;
  s.gpus = 1;
  s.global_batch = 1;
  s.precision = Precision::fp8;
  s.fp8_params = true;
  return resolve_strategy(s, w, c).value();
}

}  // namespace

TEST_CASE("an FP8 Llama 3.1 8B layer converts 64·h bytes per token as Transformer Engine 1.14 does",
          "[model]") {
  // tp 1, no SP, micro-batch 1, T = 8192 tokens (docs/validation-settings.md "Numbers to pin" 2).
  // Forward: the projection's input (T×4096) and FC2's (T×14336) cast with their transpose, 4 B each:
  // 4·(4096 + 14336) = 73728 B per token. QKV's and FC1's inputs come out of the norm in FP8 (no kernel).
  // Backward: output gradients cast + transposed, 4 B: projection and FC2 4096 each, FC1 28672, QKV 6144
  // → 4·43008 = 172032; the norm outputs' transposes for the QKV and FC1 wgrads, 2 B · 4096 each = 16384;
  // 188416 B per token. Total 262144 = 64·h.
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  const Strategy s = fp8_strategy(w, cluster);
  const double tokens = 8192;
  const auto forward = model.layer_steps(w, s, Phase::forward, 0);
  const auto backward = model.layer_steps(w, s, Phase::backward, 0);
  CHECK(bytes_of(forward, {".cast"}) == 73728.0 * tokens);
  CHECK(bytes_of(backward, {".grad_cast", ".transpose"}) == 188416.0 * tokens);
  CHECK(bytes_of(forward, {".cast"}) + bytes_of(backward, {".grad_cast", ".transpose"}) ==
        64.0 * 4096 * tokens);
  // The norms write FP8: read 2 B, write 1 B per element.
  CHECK(op_named(forward, "attn.norm").bytes == 3.0 * tokens * 4096);
  // BF16 runs have none of it.
  Strategy bf16 = s;
  bf16.precision = Precision::bf16;
  CHECK(bytes_of(model.layer_steps(w, bf16, Phase::forward, 0), {".cast"}) == 0);
  CHECK(bytes_of(model.layer_steps(w, bf16, Phase::backward, 0), {".grad_cast", ".transpose"}) == 0);
  // Without FP8 wgrad, nothing is transposed: casts read 2 B and write 1 B.
  Strategy no_wgrad = s;
  no_wgrad.fp8_wgrad = false;
  CHECK(bytes_of(model.layer_steps(w, no_wgrad, Phase::forward, 0), {".cast"}) ==
        3.0 * (4096 + 14336) * tokens);
  CHECK(bytes_of(model.layer_steps(w, no_wgrad, Phase::backward, 0), {".grad_cast", ".transpose"}) ==
        3.0 * (4096 + 4096 + 28672 + 6144) * tokens);
}

TEST_CASE("an FP8 run computes only the layers' linear GEMMs at the FP8 peak", "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  const Strategy fp8 = fp8_strategy(w, cluster);
  Strategy bf16 = fp8;
  bf16.precision = Precision::bf16;
  const auto f8 = model.layer_steps(w, fp8, Phase::forward, 0);
  const auto b16 = model.layer_steps(w, bf16, Phase::forward, 0);
  // QKV: 8192 × 6144 × 4096 at 1979 TFLOP/s × 0.533 × the schedule: 64·48 = 3072 tiles of k 4096 on 132
  // SMs, even share 95,325.1 k-steps per SM; data-parallel 24 waves × 4160 = 99,840, split 95,325.1 +
  // 25·64 + 4·64 = 97,181.1 → 0.98090.
  const ComputeOp& qkv = op_named(f8, "attn.qkv");
  CHECK(qkv.fp8);
  const double even = 3072.0 * 4096 / 132;
  const double eff = 0.533 * even / (even + 25 * 64 + 256);
  CHECK(eff == Approx(0.533 * 0.98090).epsilon(1e-5));
  CHECK(qkv.time_us == Approx(2.0 * 8192 * 6144 * 4096 / (1979e12 * eff) * 1e6));
  // Attention stays BF16 (the same time as in a BF16 run); so does the output layer.
  CHECK(op_named(f8, "attn.attention").time_us == Approx(op_named(b16, "attn.attention").time_us));
  CHECK_FALSE(op_named(f8, "attn.attention").fp8);
  const auto head8 = model.head_steps(w, fp8, Phase::forward);
  const auto head16 = model.head_steps(w, bf16, Phase::forward);
  CHECK(op_named(head8, "logits").time_us == Approx(op_named(head16, "logits").time_us));
  // With --fp8-attention the attention runs on the FP8 tensor cores: faster.
  Strategy fp8_attention = fp8;
  fp8_attention.fp8_attention = true;
  CHECK(op_named(model.layer_steps(w, fp8_attention, Phase::forward, 0), "attn.attention").time_us <
        op_named(f8, "attn.attention").time_us);
  // Without FP8 wgrad the weight-gradient GEMMs run in BF16.
  Strategy no_wgrad = fp8;
  no_wgrad.fp8_wgrad = false;
  const auto bwd = model.layer_steps(w, no_wgrad, Phase::backward, 0);
  CHECK(op_named(bwd, "attn.qkv.dgrad").fp8);
  CHECK_FALSE(op_named(bwd, "attn.qkv.wgrad").fp8);
}

TEST_CASE("causal flash attention executes the blocks on and below the diagonal at the attention fraction",
          "[model]") {
  // llama3-8b, one GPU, micro-batch 1: 32 heads × 8192² × 128, 4·… = 1099511627776·… full FLOPs;
  // n = 64 blocks per side, 65/128 of them computed.
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  Strategy s;
  s.gpus = 1;
  s.global_batch = 1;
  s = resolve_strategy(s, w, cluster).value();
  const ComputeOp fwd = op_named(model.layer_steps(w, s, Phase::forward, 0), "attn.attention");
  const double full = 4.0 * 32 * 8192.0 * 8192.0 * 128;
  CHECK(fwd.model_flops == full);
  CHECK(fwd.flops == full * 65.0 / 128.0);
  // Head dim 128: the forward fraction 0.66 of the BF16 peak as it stands.
  CHECK(fwd.time_us == Approx(fwd.flops / (989e12 * 0.66) * 1e6));
  const ComputeOp bwd = op_named(model.layer_steps(w, s, Phase::backward, 0), "attn.attention.bwd");
  CHECK(bwd.flops == 2.5 * fwd.flops);
  CHECK(bwd.time_us == Approx(bwd.flops / (989e12 * 0.50) * 1e6));
  // Head dim 64 on sm90: g(64)/g(128) = (256/(256 + 256)) / (512/(512 + 256)) = 0.75.
  WorkloadSpec narrow = w;
  narrow.heads = 64;
  narrow.kv_heads = 16;
  const ComputeOp n64 = op_named(model.layer_steps(narrow, s, Phase::forward, 0), "attn.attention");
  CHECK(n64.time_us == Approx(n64.flops / (989e12 * 0.66 * 0.75) * 1e6));
  // A bidirectional encoder computes the full matrix.
  WorkloadSpec bert = workload_preset("bert-base").value();
  CHECK_FALSE(bert.causal);
  Strategy sb;
  sb.gpus = 1;
  sb.global_batch = 1;
  sb = resolve_strategy(sb, bert, cluster).value();
  const ComputeOp b = op_named(model.layer_steps(bert, sb, Phase::forward, 0), "attn.attention");
  CHECK(b.flops == b.model_flops);
}

TEST_CASE("flash2 prices the attention at FlashAttention-2's H100 fractions, the GPU's own on A100",
          "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec h100 = cluster_preset("dgx-h100").value();
  Strategy s;
  s.gpus = 1;
  s.global_batch = 1;
  s.attention = Attention::flash2;
  s = resolve_strategy(s, w, h100).value();
  const CostModel model(h100);
  // The same op and FLOPs as flash (65/128 of the full matrix), at 0.35 forward and 0.30 backward.
  const ComputeOp fwd = op_named(model.layer_steps(w, s, Phase::forward, 0), "attn.attention");
  CHECK(fwd.flops == 4.0 * 32 * 8192.0 * 8192.0 * 128 * 65.0 / 128.0);
  CHECK(fwd.time_us == Approx(fwd.flops / (989e12 * 0.35) * 1e6));
  const ComputeOp bwd = op_named(model.layer_steps(w, s, Phase::backward, 0), "attn.attention.bwd");
  CHECK(bwd.time_us == Approx(bwd.flops / (989e12 * 0.30) * 1e6));
  // On sm80 FlashAttention-2 is the fastest kernel: flash2 = flash.
  const ClusterSpec a100 = cluster_preset("dgx-a100").value();
  Strategy sa = s;
  sa = resolve_strategy(sa, w, a100).value();
  Strategy fa = sa;
  fa.attention = Attention::flash;
  const CostModel on_a100(a100);
  CHECK(op_named(on_a100.layer_steps(w, sa, Phase::forward, 0), "attn.attention").time_us ==
        op_named(on_a100.layer_steps(w, fa, Phase::forward, 0), "attn.attention").time_us);
  // FlashAttention-2 has no FP8 kernel.
  Strategy fp8 = s;
  fp8.precision = Precision::fp8;
  fp8.fp8_attention = true;
  CHECK_FALSE(resolve_strategy(fp8, w, h100).ok());
}

TEST_CASE("flash1 prices the attention at 0.575 of FlashAttention-2's fraction on A100 and on H100",
          "[model]") {
  // llama3-8b (head dim 128, causal, seq 8192), one GPU: the same op and FLOPs as flash; FlashAttention-1
  // runs at 0.575 × FlashAttention-2: A100 0.3565 / 0.299, H100 (its sm80 kernels) 0.20125 / 0.1725 of
  // the peak.
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  for (const char* name : {"dgx-a100", "dgx-h100"}) {
    INFO(name);
    const ClusterSpec c = cluster_preset(name).value();
    const bool hopper = c.gpu.sm_arch >= 90;
    Strategy s;
    s.gpus = 1;
    s.global_batch = 1;
    s.attention = Attention::flash1;
    s = resolve_strategy(s, w, c).value();
    const CostModel model(c);
    const ComputeOp fwd = op_named(model.layer_steps(w, s, Phase::forward, 0), "attn.attention");
    CHECK(fwd.flash1);
    CHECK(fwd.flops == 4.0 * 32 * 8192.0 * 8192.0 * 128 * 65.0 / 128.0);
    const double peak = c.gpu.bf16_tflops * 1e12;
    CHECK(fwd.time_us == Approx(fwd.flops / (peak * (hopper ? 0.20125 : 0.3565)) * 1e6));
    const ComputeOp bwd = op_named(model.layer_steps(w, s, Phase::backward, 0), "attn.attention.bwd");
    CHECK(bwd.time_us == Approx(bwd.flops / (peak * (hopper ? 0.1725 : 0.299)) * 1e6));
    Strategy fa = s;
    fa.attention = Attention::flash;
    CHECK(op_named(model.layer_steps(w, fa, Phase::forward, 0), "attn.attention").time_us < fwd.time_us);
  }
}

TEST_CASE("in FP8 the TP all-gathers of the norm output and of the output gradient move 1 byte an element",
          "[model]") {
  // llama3-70b, tp 4 with SP, micro-batch 1, seq 8192: the TP tensor is 8192 tokens × 8192 hidden. TE
  // gathers the FP8 norm output (forward, and again for the FP8 wgrad) and the FP8-cast output gradient;
  // the reduce-scatters carry BF16 (the layer's output, the input's gradient).
  const WorkloadSpec w = workload_preset("llama3-70b").value();
  const ClusterSpec c = cluster_preset("dgx-h100").value();
  Strategy s;
  s.gpus = 4;
  s.tp = 4;
  s.sp = true;
  s.global_batch = 1;
  s.precision = Precision::fp8;
  s = resolve_strategy(s, w, c).value();
  const CostModel model(c);
  const auto fwd = model.layer_steps(w, s, Phase::forward, 0);
  const auto bwd = model.layer_steps(w, s, Phase::backward, 0);
  const double elements = 8192.0 * 8192.0;
  for (const std::string block : {"attn", "mlp"}) {
    CHECK(comm_bytes(fwd, block + ".allgather") == elements);
    CHECK(comm_bytes(fwd, block + ".reducescatter") == 2 * elements);
    CHECK(comm_bytes(bwd, block + ".reducescatter.bwd") == elements);  // all-gather of the FP8 gradient
    CHECK(comm_bytes(bwd, block + ".allgather.bwd") == 2 * elements);  // reduce-scatter of dX
  }
  CHECK(comm_bytes(bwd, "attn.qkv.wgrad_allgather") == elements);
  CHECK(comm_bytes(bwd, "mlp.fc1.wgrad_allgather") == elements);
  // BF16: 2 bytes everywhere.
  Strategy b = s;
  b.precision = Precision::bf16;
  const auto bf = model.layer_steps(w, b, Phase::backward, 0);
  CHECK(comm_bytes(model.layer_steps(w, b, Phase::forward, 0), "attn.allgather") == 2 * elements);
  CHECK(comm_bytes(bf, "attn.reducescatter.bwd") == 2 * elements);
  CHECK(comm_bytes(bf, "attn.qkv.wgrad_allgather") == 2 * elements);
}

TEST_CASE("dropout adds its masks' bytes; none without dropout", "[model]") {
  const WorkloadSpec w = workload_preset("gpt2").value();
  const ClusterSpec cluster = cluster_preset("dgx-a100").value();
  const CostModel model(cluster);
  Strategy s;
  s.gpus = 1;
  s.global_batch = 1;
  s.attention = Attention::standard;
  s = resolve_strategy(s, w, cluster).value();
  Strategy d = s;
  d.dropout = 0.1;
  const double tokens = 1024, h = 768, scores = 12.0 * 1024 * 1024;
  // bias-dropout-add: read 2·2 B, write 2 B (+ 1 B mask). GPT-2 is causal: Megatron's upper-triangular
  // softmax reads the first i + 1 scores of row i, (s + 1)/(2s) of the matrix, and writes it whole: 2 · 1025
  // / 2048 + 2 B; the attention dropout after it is a kernel of its own (read 2, write 2 and a 1 B mask).
  // Backward: the fused softmax's reads the gradient and the probabilities on the triangle and writes one
  // (2 · 2 · 1025 / 2048 + 2), the dropout's reads the gradient and the mask and writes one (5).
  const double triangle = 1025.0 / 2048.0;
  CHECK(op_named(model.layer_steps(w, s, Phase::forward, 0), "attn.residual").bytes == 6.0 * tokens * h);
  CHECK(op_named(model.layer_steps(w, d, Phase::forward, 0), "attn.residual").bytes == 7.0 * tokens * h);
  CHECK(op_named(model.layer_steps(w, s, Phase::forward, 0), "attn.softmax").bytes ==
        Approx((2.0 * triangle + 2.0) * scores));
  CHECK(op_named(model.layer_steps(w, d, Phase::forward, 0), "attn.softmax").bytes ==
        Approx((2.0 * triangle + 7.0) * scores));
  CHECK(op_named(model.layer_steps(w, s, Phase::backward, 0), "attn.softmax.bwd").bytes ==
        Approx((4.0 * triangle + 2.0) * scores));
  CHECK(op_named(model.layer_steps(w, d, Phase::backward, 0), "attn.softmax.bwd").bytes ==
        Approx((4.0 * triangle + 7.0) * scores));
  // Without a causal mask (BERT's encoder) the padding-mask kernel reads whole rows: read 2, write 2
  // forward (9 with the dropout), 6 backward (11).
  const WorkloadSpec bert = workload_preset("bert-base").value();
  REQUIRE_FALSE(bert.causal);
  Strategy e = resolve_strategy(s, bert, cluster).value();
  e.dropout = 0.1;
  const double bert_scores = 12.0 * 512 * 512;
  CHECK(op_named(model.layer_steps(bert, e, Phase::forward, 0), "attn.softmax").bytes == 9.0 * bert_scores);
  CHECK(op_named(model.layer_steps(bert, e, Phase::backward, 0), "attn.softmax.bwd").bytes ==
        11.0 * bert_scores);
  // Inductor fuses the dropout into the softmax: the probabilities are not read again (4 + 2 + 1), and the
  // fused backward reads the gradient, the mask and the probabilities (6 + 1).
  const CostModel compiled(cluster, std::nullopt, Stack::pytorch_compile);
  Strategy c = d;
  c.stack = Stack::pytorch_compile;
  CHECK(op_named(compiled.layer_steps(w, c, Phase::forward, 0), "attn.softmax").bytes == 7.0 * scores);
  CHECK(op_named(compiled.layer_steps(w, c, Phase::backward, 0), "attn.softmax.bwd").bytes == 7.0 * scores);
  CHECK_FALSE(resolve_strategy(
                  [&] {
                    Strategy bad = s;
                    bad.dropout = 1.0;
                    return bad;
                  }(),
                  w, cluster)
                  .ok());
}

TEST_CASE("the loss and the optimizer move the bytes Megatron's kernels move", "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  Strategy s;
  s.gpus = 8;
  s.tp = 8;
  s.global_batch = 1;
  s = resolve_strategy(s, w, cluster).value();
  // Cross-entropy over T × V/tp logits: 38 B forward, 14 B backward.
  const double logits = 8192.0 * 128256 / 8;
  CHECK(op_named(model.head_steps(w, s, Phase::forward), "loss").bytes == 38.0 * logits);
  CHECK(op_named(model.head_steps(w, s, Phase::backward), "loss.bwd").bytes == 14.0 * logits);
  // Adam with fp32 master weights, no ZeRO: 44 B per parameter of the GPU.
  CHECK(model.optimizer_op(w, s).bytes == Approx(44.0 * model.parameters_per_gpu(w, s)));
  // FP8 with FP8 primary weights: 43 B, plus the linear weights' transpose once per iteration (2 B).
  Strategy f = s;
  f.precision = Precision::fp8;
  f.fp8_params = true;
  const double all = model.parameters_per_gpu(w, f);
  const double linear = all - 128256.0 * 4096 / 8 * 2 - 4.0 * 4096 * 32;
  CHECK(model.optimizer_op(w, f).bytes == Approx(43.0 * all + 2.0 * linear));
}

TEST_CASE("eager Megatron-DeepSpeed pays each micro-batch's gradient accumulation after the first",
          "[model]") {
  // Its wgrad GEMMs return a 16-bit .grad that the micro-batches after the first add into the held one
  // (read 2 + 2, write 2 per parameter); Megatron-Core fuses the accumulation into the wgrad GEMM.
  const WorkloadSpec w = workload_preset("gpt2-medium").value();
  const ClusterSpec cluster = cluster_preset("dgx-a100").value();
  const CostModel model(cluster);
  Strategy s;
  s.gpus = 8;
  s.tp = 8;
  s.global_batch = 16;
  s.precision = Precision::fp16;
  s.stack = Stack::megatron_deepspeed;
  s = resolve_strategy(s, w, cluster).value();
  REQUIRE(s.micro_batches() == 16);
  const double params = model.parameters_per_gpu(w, s);
  CHECK(model.optimizer_op(w, s).bytes == Approx((44.0 + 15 * 6.0) * params));
  Strategy one = s;
  one.global_batch = 1;
  CHECK(model.optimizer_op(w, one).bytes == Approx(44.0 * params));
  Strategy core = s;
  core.stack = Stack::megatron_core;
  CHECK(model.optimizer_op(w, core).bytes == Approx(44.0 * params));
  // ZeRO 2 partitions the held gradient into DeepSpeed's buckets: not this accumulation (dp 1 here, so the
  // shard is all of the parameters).
  Strategy zero2 = s;
  zero2.zero = 2;
  CHECK(model.optimizer_op(w, zero2).bytes == Approx(44.0 * params));
}

TEST_CASE("FP8 conversions never separate a TP collective from the GEMM it overlaps", "[model]") {
  // With SP the forward all-gathers feed QKV and FC1 and the reduce-scatters follow the projection and FC2;
  // in the backward the output gradient's all-gather feeds the dgrad and the norm output's feeds the wgrad.
  // The casts go before the all-gathers (TE casts into the gather's buffer), the transposes after the dgrad.
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  Strategy s = strategy_for(w, cluster, 8, 8, 1, 1, Recompute::none, true);
  s.precision = Precision::fp8;
  for (Phase phase : {Phase::forward, Phase::backward}) {
    const auto steps = model.layer_steps(w, s, phase, 0);
    int gathers = 0, scatters = 0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Step& step = steps[i];
      if (!step.is_comm || step.comm.group != Group::tp) continue;
      if (step.comm.collective == Collective::allgather) {
        ++gathers;
        REQUIRE(i + 1 < steps.size());
        CHECK(steps[i + 1].compute.is_weight_gemm());
      }
      if (step.comm.collective == Collective::reducescatter) {
        ++scatters;
        REQUIRE(i > 0);
        CHECK(steps[i - 1].compute.is_weight_gemm());
      }
    }
    CHECK(gathers == (phase == Phase::forward ? 2 : 4));
    CHECK(scatters == 2);
  }
  // The projection's output gradient: 3 B on its 1/8 local rows before the gather, 2 B once gathered.
  const auto bwd = model.layer_steps(w, s, Phase::backward, 0);
  const double mn = 8192.0 * 4096;
  CHECK(op_named(bwd, "attn.proj.grad_cast").bytes == 3.0 * mn / 8);
  CHECK(op_named(bwd, "attn.proj.transpose").bytes == 2.0 * mn + 2.0 * 8192 * 512);
}

TEST_CASE("standard attention's softmax runs Megatron's torch fallback where the fused kernel cannot",
          "[model]") {
  // 16 heads, seq 1024 (vTrain's shapes): at tp 8 a micro-batch of 1 gives 2 score matrices per rank, not a
  // multiple of the fused kernel's 4 rows per CTA; a micro-batch of 2 gives 4.
  WorkloadSpec w = workload_preset("gpt2").value();  // seq 1024, vocab 50257
  w.hidden = 1024;
  w.heads = w.kv_heads = 16;
  w.ffn_hidden = 4096;
  const ClusterSpec cluster = cluster_preset("dgx-a100").value();
  const CostModel eager(cluster, std::nullopt, Stack::megatron_deepspeed);
  const CostModel core(cluster);
  auto strategy = [&](int tp, long micro_batch, Precision precision, Stack stack,
                      const WorkloadSpec& workload) {
    Strategy s;
    s.gpus = tp;
    s.tp = tp;
    s.micro_batch = micro_batch;
    s.global_batch = micro_batch;
    s.attention = Attention::standard;
    s.precision = precision;
    s.stack = stack;
    return resolve_strategy(s, workload, cluster).value();
  };
  const double matrices = 2.0 * 1024 * 1024;  // b · heads per rank · seq² at tp 8, micro-batch 1
  const Strategy fallback = strategy(8, 1, Precision::fp16, Stack::megatron_deepspeed, w);
  const ComputeOp f = op_named(eager.layer_steps(w, fallback, Phase::forward, 0), "attn.softmax");
  const ComputeOp b = op_named(eager.layer_steps(w, fallback, Phase::backward, 0), "attn.softmax.bwd");
  // Cast, scale, mask, softmax, cast back: 5 kernels, each a dispatch; 2·2 + 28 B per score.
  CHECK(f.launches == 5);
  CHECK(b.launches == 5);
  CHECK(f.bytes == 32.0 * matrices);
  CHECK(f.time_us == Approx(5.0 * eager.op_launch_floor_us()));
  CHECK(b.time_us == Approx(5.0 * eager.op_launch_floor_us()));
  // Micro-batch 2: 4 matrices per rank, the fused (causal, upper-triangular) kernel: one launch, read 2 B
  // on the triangle, (s + 1)/(2s) of the matrix, and write 2 B.
  const Strategy fused = strategy(8, 2, Precision::fp16, Stack::megatron_deepspeed, w);
  const ComputeOp g = op_named(eager.layer_steps(w, fused, Phase::forward, 0), "attn.softmax");
  CHECK(g.launches == 1);
  CHECK(g.bytes == Approx((2.0 * 1025.0 / 2048.0 + 2.0) * 2.0 * matrices));
  CHECK(g.time_us == Approx(eager.op_launch_floor_us()));
  // Megatron-Core's defaults (no layer scaling, softmax in fp32): cast, mask, softmax, cast back.
  const Strategy core_fallback = strategy(8, 1, Precision::bf16, Stack::megatron_core, w);
  const ComputeOp c = op_named(core.layer_steps(w, core_fallback, Phase::forward, 0), "attn.softmax");
  CHECK(c.launches == 4);
  CHECK(c.bytes == 24.0 * matrices);
  // fp32 activations: the fused kernel needs 16-bit input; scale, mask and softmax, nothing to cast.
  const ComputeOp x = op_named(
      eager.layer_steps(w, strategy(1, 1, Precision::fp32, Stack::megatron_deepspeed, w), Phase::forward, 0),
      "attn.softmax");
  CHECK(x.launches == 3);
  CHECK(x.bytes == 24.0 * 16.0 * 1024 * 1024);
  // Beyond 4096 keys the fused kernel does not run either (16 matrices at tp 1: the count passes).
  WorkloadSpec long_seq = w;
  long_seq.seq = 8192;
  const Strategy s8k = strategy(1, 1, Precision::fp16, Stack::megatron_deepspeed, long_seq);
  CHECK(op_named(eager.layer_steps(long_seq, s8k, Phase::forward, 0), "attn.softmax").launches == 5);
  long_seq.seq = 4096;
  const Strategy s4k = strategy(1, 1, Precision::fp16, Stack::megatron_deepspeed, long_seq);
  CHECK(op_named(eager.layer_steps(long_seq, s4k, Phase::forward, 0), "attn.softmax").launches == 1);
}
