// Hybrid sharding under the framework profiles: torch-fsdp runs it (zero 2 and 3) and explore searches it
// there; Megatron-LM and DeepSpeed refuse it, saying why.
#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "core/progress.h"
#include "model/cost_model.h"
#include "model/presets.h"
#include "search/explore.h"
#include "search/framework.h"
#include "simulator/model_costs.h"

using namespace lagom;
using search::Framework;
using search::framework_profile;

namespace {

model::Strategy resolved(model::Strategy s, const std::string& workload = "llama3-8b") {
  return model::resolve_strategy(s, model::workload_preset(workload).value(),
                                 model::cluster_preset("dgx-h100").value())
      .value();
}

}  // namespace

TEST_CASE("torch-fsdp runs hybrid sharding with zero 2 and 3; Megatron-LM and DeepSpeed refuse it",
          "[search]") {
  model::Strategy s;
  s.gpus = 16, s.zero = 3, s.dp_shard = 4, s.global_batch = 64;
  const model::Strategy hsdp = resolved(s);
  CHECK(search::check_strategy(framework_profile(Framework::torch_fsdp), hsdp).ok());
  CHECK(search::check_strategy(framework_profile(Framework::any), hsdp).ok());
  const auto megatron = search::check_strategy(framework_profile(Framework::megatron_lm), hsdp);
  REQUIRE(!megatron.ok());
  CHECK(megatron.error().message ==
        "--framework megatron-lm: dp-shard 4 (hybrid sharding) is not available (Megatron-Core's partial "
        "distributed optimizer, its optimizer instances, is not modelled)");
  const auto deepspeed = search::check_strategy(framework_profile(Framework::deepspeed), hsdp);
  REQUIRE(!deepspeed.ok());
  CHECK(deepspeed.error().message ==
        "--framework deepspeed: dp-shard 4 (hybrid sharding) is not available (DeepSpeed's hierarchical "
        "partitioning (hpZ, MiCS) is not modelled)");
  s.zero = 1;
  const auto zero1 = search::check_strategy(framework_profile(Framework::torch_fsdp), resolved(s));
  REQUIRE(!zero1.ok());
  CHECK(
      zero1.error().message ==
      "--framework torch-fsdp: zero 1 is not available (torch's ZeRO-1, DDP + ZeroRedundancyOptimizer, "
      "all-reduces gradients and broadcasts each rank's shard: not modelled; torch-fsdp runs zero 0, 2, 3)");
}

TEST_CASE("explore --framework torch-fsdp returns HSDP candidates; its bounds stay below simulate",
          "[search]") {
  // llama3-8b on 32 GPUs of dgx-h100 (4 nodes), pure data parallelism with ZeRO: zero 0 over the whole
  // group (torch's ZeRO-1 is refused), zero 2 and 3 also with shard groups of 2, 4, 8 and 16 DP ranks
  // (0 = all 32).
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  model::ClusterSpec cluster = model::cluster_preset("dgx-h100").value();
  cluster.nodes = 4;
  search::ExploreOptions options;
  options.base.gpus = 32;
  options.base.global_batch = 64;
  options.framework = Framework::torch_fsdp;
  options.top = 40;
  options.threads = 2;
  auto& pins = options.pinned;
  pins.tp = 1, pins.pp = 1, pins.cp = 1, pins.micro_batch = 1, pins.recompute = model::Recompute::full;
  const std::vector<model::Strategy> candidates = search::explore_candidates(w, cluster, options);
  std::set<std::pair<int, int>> seen;
  for (const auto& s : candidates) seen.insert({s.zero, s.dp_shard});
  CHECK(seen ==
        std::set<std::pair<int, int>>{
            {0, 0}, {2, 0}, {2, 2}, {2, 4}, {2, 8}, {2, 16}, {3, 0}, {3, 2}, {3, 4}, {3, 8}, {3, 16}});
  const model::CostModel cost_model(cluster);
  const auto prices = std::make_shared<const simulator::SharedPrices>(cost_model);
  for (const auto& s : candidates) {
    const simulator::ModelCosts costs(cost_model, w, s, prices);
    const auto result = simulator::simulate(w, cluster, s, costs);
    REQUIRE(result.ok());
    const auto bound_us = simulator::iteration_lower_bound_us(w, cluster, s, costs);
    REQUIRE(bound_us.ok());
    INFO("zero " << s.zero << " dp_shard " << s.dp_shard);
    CHECK(*bound_us <= result->iteration_time_s * 1e6);
  }
  const auto explored = search::explore(w, cluster, cost_model, options, null_progress());
  REQUIRE(explored.ok());
  const bool hybrid = std::any_of(explored->results.begin(), explored->results.end(),
                                  [](const auto& e) { return e.strategy.hybrid_shard(); });
  CHECK(hybrid);
  // Under megatron-lm the same space has no shard group but the whole one.
  options.framework = Framework::megatron_lm;
  for (const auto& s : search::explore_candidates(w, cluster, options)) CHECK(s.dp_shard == 0);
}
