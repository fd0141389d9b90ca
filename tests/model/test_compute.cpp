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
      // Hardware FLOPs with full recompute: the 96· form plus flash attention's backward score recompute
      // (one extra s×s matmul: 2·B·s²·h per layer).
      const double flash_extra = 2.0 * 2 * w.seq * w.seq * static_cast<double>(w.hidden) * w.layers;
      CHECK(std::abs(r.hardware * gpus_tp - (megatron(w, 2, true) + flash_extra)) / megatron(w, 2, true) <
            1e-9);
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
  const double flash_extra = 2.0 * 2048.0 * 2048.0 * 12288.0 * 96.0;
  CHECK(f.hardware * 8 == Approx(2936687529295872.0 + flash_extra).epsilon(1e-12));
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
  // 64×64 = 4096 tiles on 132 SMs: 32 waves, 4096 / (32·132) = 0.9697; k: 8192/8256; × 0.75 sustained.
  const double eff = 0.75 * (4096.0 / (32 * 132)) * (8192.0 / 8256.0);
  CHECK(model.gemm_efficiency(shape, Precision::bf16) == Approx(eff));
  // The 3 µs launch is hidden behind a GEMM this long (op time = max(GPU time, launch)).
  const double expected_us = shape.flops() / (989e12 * eff) * 1e6;
  CHECK(model.gemm_time_us(shape, Precision::bf16) == Approx(expected_us));
}

TEST_CASE("a GemmFit replaces the default efficiency", "[model]") {
  Calibration cal;
  cal.gemms.push_back(GemmFit{"bf16", 200.0, 1e9, 0.0});
  const CostModel model(cluster_preset("dgx-a100").value(), cal);
  const GemmShape shape{4096, 4096, 4096, 1};
  const double achieved = 200.0 * shape.flops() / (shape.flops() + 1e9);
  CHECK(model.gemm_efficiency(shape, Precision::bf16) == Approx(achieved / 312.0));
}
