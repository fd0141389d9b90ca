// explore's pruning against exhaustive simulation, on spaces small enough to simulate every candidate.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "core/progress.h"
#include "core/units.h"
#include "model/cost_model.h"
#include "model/presets.h"
#include "search/explore.h"
#include "simulator/model_costs.h"

using namespace lagom;

namespace {

struct Space {
  model::WorkloadSpec workload;
  model::ClusterSpec cluster;
  search::ExploreOptions options;
};

Space make_space(const std::string& workload, const std::string& cluster, int gpus, long global_batch) {
  Space space;
  space.workload = model::workload_preset(workload).value();
  space.cluster = model::cluster_preset(cluster).value();
  space.cluster.nodes = (gpus + space.cluster.gpus_per_node - 1) / space.cluster.gpus_per_node;
  space.options.base.gpus = gpus;
  space.options.base.global_batch = global_batch;
  space.options.top = 40;  // deep enough that pruning 1% too eagerly changes the list (checked by hand)
  space.options.threads = 2;
  return space;
}

// llama3-8b under pure FSDP (tp, pp, cp 1; ZeRO-3) on one dgx-a100 node at `micro_batch`: the space of the
// recompute tests below (at 2 it does not fit without recompute, at 1 it does).
Space llama8b_fsdp(long micro_batch) {
  Space space = make_space("llama3-8b", "dgx-a100", 8, 16);
  space.options.pinned.tp = 1, space.options.pinned.pp = 1, space.options.pinned.cp = 1;
  space.options.pinned.zero = 3, space.options.pinned.micro_batch = micro_batch;
  return space;
}

// gpt2 on one dgx-a100 node (NVSwitch only, gradient buckets during the backward); olmoe (MoE: ep and
// expert-dp groups) on two dgx-h100 nodes (InfiniBand, buckets after the backward). Pins keep each space
// near 500 candidates so the sanitizer build stays fast; every other dimension varies.
std::vector<Space> spaces() {
  std::vector<Space> out;
  out.push_back(make_space("gpt2", "dgx-a100", 8, 16));
  out.back().options.pinned.recompute = model::Recompute::none;
  out.back().options.pinned.micro_batch = 2;
  out.push_back(make_space("olmoe-1b-7b", "dgx-h100", 16, 16));
  out.back().options.base.dp_overlap = false;
  out.back().options.pinned.recompute = model::Recompute::selective;
  out.back().options.pinned.micro_batch = 1;
  out.back().options.pinned.cp = 1;
  out.back().options.pinned.tp_overlap = model::OverlapMethod{};
  return out;
}

}  // namespace

TEST_CASE("explore's top K is the top K of simulating every candidate, and its bounds never exceed simulate",
          "[simulator]") {
  for (const Space& space : spaces()) {
    INFO(space.workload.name << " on " << space.options.base.gpus << " GPUs of " << space.cluster.name);
    const model::CostModel cost_model(space.cluster);
    const auto prices = std::make_shared<const simulator::SharedPrices>(cost_model);
    const std::vector<model::Strategy> candidates =
        search::explore_candidates(space.workload, space.cluster, space.options);
    // Large enough to exercise the pruning (olmoe: 320, its MoE candidates with tp > 1 need sp).
    REQUIRE(candidates.size() > 300);
    // Exhaustive: every candidate that fits, simulated; ranked by (time, enumeration order) as explore ranks.
    std::vector<std::pair<double, std::size_t>> all;
    std::size_t checked = 0;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const model::Strategy& s = candidates[i];
      if (!(units::bytes_to_gib(cost_model.memory_per_gpu(space.workload, s).total_bytes()) <=
            space.cluster.gpu.memory_budget_gib())) {
        continue;
      }
      const simulator::ModelCosts costs(cost_model, space.workload, s, prices);
      const auto result = simulator::simulate(space.workload, space.cluster, s, costs);
      REQUIRE(result.ok());
      const auto bound_us = simulator::iteration_lower_bound_us(space.workload, space.cluster, s, costs);
      const auto path_us = simulator::iteration_critical_path_us(space.workload, space.cluster, s, costs);
      REQUIRE(bound_us.ok());
      REQUIRE(path_us.ok());
      const double time_us = result->iteration_time_s * 1e6;
      // Both are proven lower bounds (simulator.h).
      if (!(*bound_us <= time_us && *path_us <= time_us)) {
        FAIL_CHECK("candidate " << i << ": bound " << *bound_us << " µs, critical path " << *path_us
                                << " µs, simulated " << time_us << " µs");
      }
      all.emplace_back(result->iteration_time_s, i);
      ++checked;
    }
    REQUIRE(checked > 300);
    std::sort(all.begin(), all.end());
    all.resize(static_cast<std::size_t>(space.options.top));

    const auto explored =
        search::explore(space.workload, space.cluster, cost_model, space.options, null_progress());
    REQUIRE(explored.ok());
    CHECK(explored->evaluated == candidates.size());
    CHECK(explored->out_of_memory == candidates.size() - checked);
    CHECK(explored->simulated + explored->pruned == explored->evaluated);
    CHECK(explored->simulated < checked / 4);  // the bounds do prune (44 of 484 and 61 of 499 simulated)
    REQUIRE(explored->results.size() == all.size());
    for (std::size_t k = 0; k < all.size(); ++k) {
      CHECK(explored->results[k].strategy == candidates[all[k].second]);
      CHECK(explored->results[k].result.iteration_time_s == all[k].first);
    }
  }
}

TEST_CASE("shared prices leave every simulated number unchanged", "[simulator]") {
  Space space = spaces().back();
  const model::CostModel cost_model(space.cluster);
  const auto prices = std::make_shared<const simulator::SharedPrices>(cost_model);
  const std::vector<model::Strategy> candidates =
      search::explore_candidates(space.workload, space.cluster, space.options);
  // Every 97th candidate, all pricing through one SharedPrices, against a ModelCosts with its own.
  for (std::size_t i = 0; i < candidates.size(); i += 97) {
    const simulator::ModelCosts shared(cost_model, space.workload, candidates[i], prices);
    const simulator::ModelCosts own(cost_model, space.workload, candidates[i]);
    const auto a = simulator::simulate(space.workload, space.cluster, candidates[i], shared);
    const auto b = simulator::simulate(space.workload, space.cluster, candidates[i], own);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(a->iteration_time_s == b->iteration_time_s);
    CHECK(a->breakdown.exposed_comm_s == b->breakdown.exposed_comm_s);
    REQUIRE(a->op_classes.size() == b->op_classes.size());
    for (std::size_t k = 0; k < a->op_classes.size(); ++k) {
      CHECK(a->op_classes[k].key == b->op_classes[k].key);
      CHECK(a->op_classes[k].time_us == b->op_classes[k].time_us);
    }
  }
}

TEST_CASE("a tied embedding split over pipeline stages sums its gradient between the first and last stage",
          "[simulator]") {
  auto emb_classes = [](const std::string& preset, int pp, int zero) {
    const model::WorkloadSpec w = model::workload_preset(preset).value();
    model::ClusterSpec cluster = model::cluster_preset("dgx-a100").value();
    cluster.nodes = 2;
    model::Strategy s;
    s.gpus = 16, s.tp = 2, s.pp = pp, s.global_batch = 32, s.zero = zero;
    s = model::resolve_strategy(s, w, cluster).value();
    const model::CostModel cost_model(cluster);
    const simulator::ModelCosts costs(cost_model, w, s);
    const auto result = simulator::simulate(w, cluster, s, costs);
    REQUIRE(result.ok());
    std::vector<simulator::OpClass> out;
    for (const auto& c : result->op_classes) {
      if (c.key.group == model::Group::embedding) out.push_back(c);
    }
    return out;
  };
  // gpt2 (tied), pp 2: one all-reduce per stage pair of vocab·hidden/tp bf16 gradients, 2 ranks.
  const auto gpt2 = emb_classes("gpt2", 2, 0);
  REQUIRE(gpt2.size() == 1);
  CHECK(gpt2[0].key.collective == model::Collective::allreduce);
  CHECK(gpt2[0].key.bytes == 50257L * 768 / 2 * 2);
  CHECK(gpt2[0].shape.ranks == 2);
  CHECK(gpt2[0].count == 1);
  CHECK(simulator::op_class_name(gpt2[0].key) == "emb.allreduce.38597376");
  // None with one stage, with an untied output layer, or under ZeRO-3 (sharded gradients).
  CHECK(emb_classes("gpt2", 1, 0).empty());
  CHECK(emb_classes("llama2-7b", 2, 0).empty());
  CHECK(emb_classes("gpt2", 2, 3).empty());
}

namespace {

// What explore reports through the progress seam.
class RecordingProgress final : public Progress {
 public:
  struct Phase {
    std::string name;
    long total = 0;
    std::vector<std::pair<long, std::string>> steps;
  };
  std::vector<Phase> phases;
  void begin(const std::string& phase, long total) override { phases.push_back({phase, total, {}}); }
  void step(long done, const std::string& detail) override { phases.back().steps.emplace_back(done, detail); }
  void end() override {}
  void warn(const std::string&) override {}
};

}  // namespace

TEST_CASE(
    "explore's progress counts every candidate of each phase up to its total, and how many were simulated",
    "[simulator]") {
  const Space space = spaces().front();
  const model::CostModel cost_model(space.cluster);
  RecordingProgress progress;
  const auto explored = search::explore(space.workload, space.cluster, cost_model, space.options, progress);
  REQUIRE(explored.ok());
  REQUIRE(progress.phases.size() == 2);
  const auto& bounds = progress.phases[0];
  const auto& simulate = progress.phases[1];
  CHECK(bounds.total == static_cast<long>(explored->evaluated));
  CHECK(simulate.total == static_cast<long>(explored->evaluated - explored->out_of_memory));
  for (const auto* phase : {&bounds, &simulate}) {
    INFO(phase->name);
    REQUIRE(!phase->steps.empty());
    CHECK(phase->steps.back().first == phase->total);  // the last step is the denominator, not an index
    for (std::size_t k = 1; k < phase->steps.size(); ++k)
      CHECK(phase->steps[k].first > phase->steps[k - 1].first);
  }
  CHECK(simulate.steps.back().second == std::to_string(explored->simulated) + " simulated");
}

TEST_CASE("explore refuses a cost model whose software stack is not the base strategy's", "[search]") {
  Space space = make_space("gpt2", "dgx-a100", 8, 16);
  space.options.base.stack = model::Stack::megatron_deepspeed;
  const model::CostModel core(space.cluster);  // megatron-core
  const auto refused = search::explore(space.workload, space.cluster, core, space.options, null_progress());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("stack megatron-deepspeed is not the cost model's megatron-core") !=
        std::string::npos);
  const model::CostModel eager(space.cluster, std::nullopt, model::Stack::megatron_deepspeed);
  CHECK(search::explore(space.workload, space.cluster, eager, space.options, null_progress()).ok());
}

TEST_CASE("explore recomputes the fewest layers per chunk that fit (Megatron's block method)", "[search]") {
  // llama3-8b under FSDP on one dgx-a100 node, micro-batch 2: 18 B of state per parameter sharded 8 ways
  // (about 17 GiB) and, without recompute, 32 layers of 2 · 8192 · 139,264 B (about 68 GiB): it does not fit
  // in 80 GiB; with every layer recomputed it does, with room for most layers to keep their activations.
  Space space = llama8b_fsdp(2);
  space.options.pinned.recompute = model::Recompute::full;
  space.options.top = 1;
  const model::CostModel cost_model(space.cluster);
  const auto explored =
      search::explore(space.workload, space.cluster, cost_model, space.options, null_progress());
  REQUIRE(explored.ok());
  REQUIRE(explored->results.size() == 1);
  const model::Strategy& best = explored->results[0].strategy;
  const auto gib = [&](int n) {
    model::Strategy s = best;
    s.recompute_layers = n;
    return units::bytes_to_gib(cost_model.memory_per_gpu(space.workload, s).total_bytes());
  };
  const double budget = space.cluster.gpu.memory_budget_gib();
  INFO("recompute_layers " << best.recompute_layers << ": " << gib(best.recompute_layers) << " GiB of "
                           << budget);
  REQUIRE(best.recompute_layers > 1);  // and N - 1 > 0, which is not "every layer"
  REQUIRE(best.recompute_layers < 32);
  CHECK(gib(best.recompute_layers) <= budget);
  CHECK(gib(best.recompute_layers - 1) > budget);
  // torch-fsdp has no block method but torchtitan's every k-th layer: the largest k that fits.
  space.options.framework = search::Framework::torch_fsdp;
  const auto torch =
      search::explore(space.workload, space.cluster, cost_model, space.options, null_progress());
  REQUIRE(torch.ok());
  REQUIRE(torch->results.size() == 1);
  const model::Strategy& titan = torch->results[0].strategy;
  CHECK(titan.recompute_layers == 0);
  const auto every_gib = [&](int k) {
    model::Strategy s = titan;
    s.recompute_every = k;
    return units::bytes_to_gib(cost_model.memory_per_gpu(space.workload, s).total_bytes());
  };
  INFO("recompute_every " << titan.recompute_every << ": " << every_gib(titan.recompute_every) << " GiB");
  REQUIRE(titan.recompute_every >= 2);
  CHECK(every_gib(titan.recompute_every) <= budget);
  CHECK(every_gib(titan.recompute_every + 1) > budget);
}

TEST_CASE("explore under torch-fsdp returns checkpoint-policy candidates: per op and every k-th layer",
          "[search]") {
  // The same llama3-8b at micro-batch 2 that does not fit without recompute: torch-fsdp's candidates
  // recompute by torchtitan's policies, per op or every k-th layer, and both are among the results.
  Space space = llama8b_fsdp(2);
  space.options.framework = search::Framework::torch_fsdp;
  space.options.top = 10;
  const model::CostModel cost_model(space.cluster);
  const auto explored =
      search::explore(space.workload, space.cluster, cost_model, space.options, null_progress());
  REQUIRE(explored.ok());
  bool per_op = false, every_k = false;
  for (const auto& e : explored->results) {
    INFO(model::recompute_text(e.strategy));
    CHECK(e.strategy.recompute != model::Recompute::none);  // 68 GiB of activations alone
    per_op = per_op || e.strategy.recompute == model::Recompute::op;
    every_k = every_k || e.strategy.recompute_every >= 2;
  }
  CHECK(per_op);
  CHECK(every_k);
}

TEST_CASE("explore recomputes no layer it need not: one when --recompute full is pinned, none otherwise",
          "[search]") {
  // At micro-batch 1 llama3-8b fits without recompute (about 17 + 34 GiB of 74). Pinned to full recompute,
  // the fewest layers that fit is 1; unpinned, the candidate without recompute is there and wins, and the
  // full-recompute candidates stay as enumerated (every layer).
  Space space = llama8b_fsdp(1);
  space.options.pinned.recompute = model::Recompute::full;
  space.options.top = 1;
  const model::CostModel cost_model(space.cluster);
  const auto pinned =
      search::explore(space.workload, space.cluster, cost_model, space.options, null_progress());
  REQUIRE(pinned.ok());
  REQUIRE(pinned->results.size() == 1);
  CHECK(pinned->results[0].strategy.recompute_layers == 1);
  space.options.pinned.recompute.reset();
  space.options.top = 40;
  const auto free =
      search::explore(space.workload, space.cluster, cost_model, space.options, null_progress());
  REQUIRE(free.ok());
  REQUIRE_FALSE(free->results.empty());
  CHECK(free->results[0].strategy.recompute == model::Recompute::none);
  for (const auto& e : free->results) CHECK(e.strategy.recompute_layers == 0);
}
