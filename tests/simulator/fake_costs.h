// A tiny deterministic cost model for the simulator's identities: every layer costs `forward_us` forward
// and 2× backward, split over the five Megatron segments; a collective costs latency_us + bytes / bw;
// optimizer 1 µs per million parameters; no embedding or output layer parameters unless set. Numbers are
// chosen so the expected times are easy to write down.
#pragma once

#include "model/specs.h"
#include "simulator/costs.h"

namespace lagom::test {

struct FakeCosts final : simulator::IterationCosts {
  double forward_us = 100;  // one layer's forward, split 20/20/20/20/20
  double head_us = 0;       // embedding and logits forward (backward 2×)
  double params_per_layer = 1e6;
  double linear_per_layer = 0;    // of params_per_layer, the linear weights (FP8 with --fp8-params)
  double latency_us = 0;          // per collective
  double bytes_per_us = 1e4;      // 10 GB/s
  double compute_slowdown = 1.0;  // what every collective does to compute beside it
  double comm_slowdown = 1.0;
  std::int64_t pp_bytes = 0;
  double optimizer_us_per_mparam = 1.0;
  int tp = 1;
  bool sp = false;
  model::Recompute recompute = model::Recompute::none;
  std::int64_t tp_bytes = 100000;  // per TP collective
  double embedding_param_count =
      0;                          // on the first stage (a tied copy sums its gradient with the last stage's)
  double logits_param_count = 0;  // on the last stage

  std::vector<model::Step> pass_steps(double scale, bool forward) const {
    using model::Step;
    std::vector<Step> steps;
    auto compute = [&](const char* name, std::int64_t m) {  // a weight GEMM of m×1024×1024 (m 0: none)
      Step s;
      s.compute.name = name;
      s.compute.time_us = forward_us * 0.2 * scale;
      s.compute.gemm = {m, 1024, 1024, 1};
      steps.push_back(s);
    };
    auto comm = [&](model::Collective c) {
      if (tp < 2) return;
      Step s;
      s.is_comm = true;
      s.comm.name = "tp";
      s.comm.collective = c;
      s.comm.group = model::Group::tp;
      s.comm.bytes = static_cast<double>(tp_bytes);
      steps.push_back(s);
    };
    const auto out = sp ? model::Collective::reducescatter : model::Collective::allreduce;
    if (forward) {
      if (sp) comm(model::Collective::allgather);
      compute("qkv", 2048);
      compute("attention", 0);
      compute("proj", 2048);
      comm(out);
      if (sp) comm(model::Collective::allgather);
      compute("fc1", 2048);
      compute("fc2", 2048);
      comm(out);
    } else {
      if (sp) comm(model::Collective::allgather);
      compute("fc2 bwd", 2048);
      compute("fc1 bwd", 2048);
      comm(out);
      if (sp) comm(model::Collective::allgather);
      compute("proj bwd", 2048);
      compute("attention bwd", 0);
      compute("qkv bwd", 2048);
      comm(out);
    }
    return steps;
  }
  std::vector<model::Step> layer_steps(int, model::Phase phase) const override {
    switch (phase) {
      case model::Phase::forward:
        return pass_steps(1.0, true);
      case model::Phase::backward:
        return pass_steps(2.0, false);
      case model::Phase::recompute:
        return recompute == model::Recompute::full ? pass_steps(1.0, true) : std::vector<model::Step>{};
    }
    return {};
  }
  // head_us forward; backward 2 × head_us, the output layer's as its dgrad and its wgrad (head_us each:
  // what defer-embedding-wgrad moves).
  std::vector<model::Step> head(model::Phase phase, const std::string& name) const {
    if (head_us <= 0 || phase == model::Phase::recompute) return {};
    model::Step s;
    s.compute.name = name;
    s.compute.time_us = head_us * (phase == model::Phase::backward ? 2.0 : 1.0);
    if (phase != model::Phase::backward || name != "logits") return {s};
    model::Step dgrad = s, wgrad = s;
    dgrad.compute.name = name + ".dgrad";
    wgrad.compute.name = name + ".wgrad";
    dgrad.compute.time_us = wgrad.compute.time_us = head_us;
    return {dgrad, wgrad};
  }
  std::vector<model::Step> embedding_steps(model::Phase phase) const override {
    return head(phase, "embedding");
  }
  std::vector<model::Step> logits_steps(model::Phase phase) const override { return head(phase, "logits"); }
  simulator::LayerParams layer_params(int) const override { return {params_per_layer, 0, linear_per_layer}; }
  double embedding_params() const override { return embedding_param_count; }
  double logits_params() const override { return logits_param_count; }
  std::int64_t pp_message_bytes() const override { return pp_bytes; }
  double optimizer_us(double params) const override { return optimizer_us_per_mparam * params / 1e6; }
  simulator::CollectivePrice collective(const simulator::CollectiveCall& call,
                                        const std::optional<model::CollConfig>& knobs) const override {
    if (call.bytes <= 0) return {};
    double bw = bytes_per_us;
    if (knobs && knobs->channels > 0) bw *= knobs->channels / 8.0;
    return {latency_us + static_cast<double>(call.bytes) / bw, latency_us, compute_slowdown, comm_slowdown};
  }
  simulator::MemoryGib memory() const override { return {1, 1, 1, 1, 4}; }
  double memory_capacity_gib() const override { return 80; }
  simulator::IterationFlops flops() const override { return {1e15, 1e15}; }
  double peak_tflops() const override { return 312; }
};

// A workload of `layers` layers that every strategy below divides.
inline model::WorkloadSpec fake_workload(int layers) {
  model::WorkloadSpec w;
  w.name = "fake";
  w.layers = layers;
  w.hidden = 1024;
  w.heads = 16;
  w.kv_heads = 16;
  w.ffn_hidden = 4096;
  w.vocab = 1000;
  w.seq = 2048;
  return w;
}

inline model::ClusterSpec fake_cluster() {
  model::ClusterSpec c;
  c.name = "fake";
  c.gpus_per_node = 8;
  c.gpu.name = "fake";
  c.gpu.bf16_tflops = 312;
  c.gpu.memory_gib = 80;
  return c;
}

// A resolved strategy without going through model::resolve_strategy (only the fields the simulator reads).
inline model::Strategy fake_strategy(int pp, int vpp, int dp, long micro_batches) {
  model::Strategy s;
  s.pp = pp;
  s.vpp = vpp;
  s.dp = dp;
  s.gpus = pp * dp;
  s.micro_batch = 1;
  s.global_batch = micro_batches * dp;
  s.schedule = vpp > 1 ? model::Schedule::interleaved : model::Schedule::one_f_one_b;
  return s;
}

}  // namespace lagom::test
