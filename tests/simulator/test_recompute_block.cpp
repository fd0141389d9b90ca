// Full recompute of the first N layers of each model chunk (Megatron-Core's --recompute-method block,
// Strategy::recompute_layers): what the layers past N save and what the recomputed ones rerun, by hand.
#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/presets.h"
#include "simulator/model_costs.h"
#include "simulator/simulator.h"

using namespace lagom;
using model::Recompute;

namespace {

// llama3-8b (32 layers, hidden 4096, 8 KV heads of 128, SwiGLU FFN 14336, sequence 8192) on one DGX A100
// node: tp 8 with SP, one micro-batch of one sequence, no dropout, flash attention.
model::Strategy llama_tp8(Recompute recompute, int recompute_layers) {
  model::Strategy s;
  s.gpus = 8;
  s.tp = 8;
  s.sp = true;
  s.global_batch = 1;
  s.recompute = recompute;
  s.recompute_layers = recompute_layers;
  return s;
}

}  // namespace

TEST_CASE("the block method keeps every activation of the layers past the first N of a chunk",
          "[simulator][recompute]") {
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  const model::ClusterSpec c = model::cluster_preset("dgx-a100").value();
  const model::CostModel cost(c);
  const auto memory = [&](Recompute r, int n) {
    return cost.memory_per_gpu(w, model::resolve_strategy(llama_tp8(r, n), w, c).value()).activations_bytes;
  };
  // One layer without recompute, per GPU (tp 8, SP): norms' inputs 4sbh and the QKV and FC1 inputs 4sbh
  // (replicated, split by SP), Q 2sbh, K and V 4sb·1024, the projection input 2sbh, the SwiGLU FC1 output
  // and FC2 input 6sb·14336: sb·(8·4096 + 4·4096 + 4·1024 + 6·14336)/8 = sb·17,408 B, with sb = 8192:
  // 142,606,336 B. With full recompute a layer saves its input only: 2sbh/8 = 8,388,608 B.
  const double kept_layer = 8192.0 * 17408.0, recomputed_layer = 2.0 * 8192 * 4096 / 8;
  const model::Strategy none = model::resolve_strategy(llama_tp8(Recompute::none, 0), w, c).value();
  const model::Strategy full = model::resolve_strategy(llama_tp8(Recompute::full, 0), w, c).value();
  CHECK(cost.activation_bytes_per_layer(w, none, 0) == Approx(kept_layer));
  CHECK(cost.activation_bytes_per_layer(w, full, 0) == Approx(recomputed_layer));
  // pp 1: one chunk of 32 layers, one micro-batch in flight. N = 8: 8 layers save their input, 24 keep
  // everything; against every layer recomputed that is 24 · (142,606,336 − 8,388,608) B more.
  const double all = memory(Recompute::full, 0);
  CHECK(memory(Recompute::full, 8) - all == Approx(24 * (kept_layer - recomputed_layer)));
  CHECK(memory(Recompute::full, 31) - all == Approx(kept_layer - recomputed_layer));
  // N at or past the chunk's 32 layers recomputes them all.
  CHECK(memory(Recompute::full, 32) == Approx(all));
  CHECK(memory(Recompute::full, 100) == Approx(all));
}

TEST_CASE("the block method reruns the forward of the first N layers of each chunk only",
          "[simulator][recompute]") {
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  const model::ClusterSpec c = model::cluster_preset("dgx-a100").value();
  const model::CostModel cost(c);
  const auto hardware_flops = [&](Recompute r, int n) {
    const model::Strategy s = model::resolve_strategy(llama_tp8(r, n), w, c).value();
    return simulator::ModelCosts(cost, w, s).flops().hardware_flops;
  };
  // The recompute adds one forward per recomputed layer: of the 32 layers' forwards that full recompute
  // adds, N = 8 adds a quarter.
  const double none = hardware_flops(Recompute::none, 0), all = hardware_flops(Recompute::full, 0);
  REQUIRE(all > none);
  CHECK(hardware_flops(Recompute::full, 8) - none == Approx((all - none) * 8 / 32));
  // With pp 2 and vpp 2 every chunk holds 8 layers: N = 2 recomputes 2 of each chunk's 8, a quarter again.
  model::Strategy s = llama_tp8(Recompute::full, 2);
  s.gpus = 16, s.pp = 2, s.vpp = 2, s.global_batch = 4;
  const model::Strategy block = model::resolve_strategy(s, w, c).value();
  s.recompute_layers = 0;
  const model::Strategy every = model::resolve_strategy(s, w, c).value();
  s.recompute = Recompute::none;
  const model::Strategy kept = model::resolve_strategy(s, w, c).value();
  const double f_block = simulator::ModelCosts(cost, w, block).flops().hardware_flops;
  const double f_every = simulator::ModelCosts(cost, w, every).flops().hardware_flops;
  const double f_kept = simulator::ModelCosts(cost, w, kept).flops().hardware_flops;
  CHECK(f_block - f_kept == Approx((f_every - f_kept) / 4));
  // And the simulated iteration lies between the two.
  const auto iteration_s = [&](const model::Strategy& t) {
    const simulator::ModelCosts costs(cost, w, t);
    return simulator::simulate(w, c, t, costs).value().iteration_time_s;
  };
  const double t_block = iteration_s(block);
  CHECK(t_block < iteration_s(every));
  CHECK(t_block > iteration_s(kept));
}

TEST_CASE("recompute-layers needs full recompute", "[simulator][recompute]") {
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  const model::ClusterSpec c = model::cluster_preset("dgx-a100").value();
  for (const Recompute r : {Recompute::none, Recompute::selective}) {
    const auto refused = model::resolve_strategy(llama_tp8(r, 4), w, c);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.find("recompute-layers=4 needs recompute full") != std::string::npos);
  }
}
