// What a collective in flight does to the compute stream beside it (ModelCosts::collective): the factors of
// CostModel::interference over a layer's whole mix of kernels, each weighted by its time alone.
#include <algorithm>

#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/presets.h"
#include "simulator/model_costs.h"

using namespace lagom;

namespace {

model::Strategy fsdp8(model::Stack stack) {
  model::Strategy s;
  s.gpus = 8;
  s.dp = 8;
  s.zero = 3;
  s.micro_batch = 2;
  s.global_batch = 16;
  s.stack = stack;
  return s;
}

}  // namespace

TEST_CASE("a collective in flight slows the layer's whole mix of kernels, not its largest GEMM alone",
          "[simulator]") {
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  const model::ClusterSpec c = model::cluster_preset("dgx-h100").value();
  const model::CostModel cost(c);
  const simulator::CollectiveCall call{model::Collective::allgather, model::CommGroup{8, 1}, 436 << 20, 0};
  auto slowdowns = [&](model::Stack stack) {
    const model::Strategy s = model::resolve_strategy(fsdp8(stack), w, c).value();
    const simulator::ModelCosts costs(cost, w, s);
    const simulator::CollectivePrice price = costs.collective(call, std::nullopt);
    // By hand: the forward of a layer, each op's factor weighted by its time alone.
    const auto bytes = static_cast<double>(call.bytes);
    const model::CollectiveCost alone = cost.collective_cost(
        call.collective, bytes, call.group, cost.nccl_default(call.collective, bytes, call.group));
    double weight = 0, mixed = 0, longest = 1, longest_us = 0;  // longest: the longest op's factor
    for (const model::Step& step : cost.layer_steps(w, s, model::Phase::forward, 0)) {
      if (step.is_comm || step.compute.time_us <= 0) continue;
      const double f =
          std::max(1.0, cost.interference(step.compute, s.precision, alone, call.collective).compute_factor);
      weight += step.compute.time_us;
      mixed += step.compute.time_us * f;
      if (step.compute.time_us > longest_us) longest_us = step.compute.time_us, longest = f;
    }
    CHECK(price.compute_slowdown == Approx(mixed / weight).epsilon(1e-9));
    return std::pair{price.compute_slowdown, longest};
  };
  const auto [eager, eager_longest] = slowdowns(model::Stack::pytorch_eager);
  const auto [fused, fused_longest] = slowdowns(model::Stack::megatron_core);
  // The all-gather moves HBM bytes as it goes: the memory-bound kernels lose more than a GEMM or the
  // attention loses to the SMs its CTAs hold, so the mix is slowed more than its longest op alone (the
  // price before session 22, a compute-bound kernel) ...
  REQUIRE(eager_longest > 1.0);
  CHECK(eager > eager_longest);
  CHECK(fused > fused_longest);
  // ... and more under eager PyTorch, whose unfused norms, RoPE and SwiGLU are more memory-bound time.
  CHECK(eager > fused);
}
