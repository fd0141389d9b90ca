// The validated regimes and the intervals predictions carry (model/accuracy.h): the conformal ranks by hand,
// the pooling of small regimes, the lookup's exact, nearest and missing cases, and the shipped table.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "model/accuracy.h"

using namespace lagom::model;

namespace {

RegimeKey h100_key(bool fp8 = false, bool multi_node = true) {
  RegimeKey k;
  k.sm_arch = 90;
  k.stack = Stack::megatron_core;
  k.fp8 = fp8;
  k.multi_node = multi_node;
  return k;
}

// `count` runs of `key`, `models` models in turn, measured ÷ predicted = e^(r) with r spread evenly over
// [-spread, +spread] (sorted: the i-th smallest is -spread + 2·spread·i/(count-1)).
void add_runs(std::vector<ResidualRun>& runs, const RegimeKey& key, int count, int models, double spread,
              const std::string& file = "a.csv", int gpus = 64) {
  for (int i = 0; i < count; ++i) {
    const double r = count == 1 ? 0.0 : -spread + 2 * spread * i / (count - 1);
    runs.push_back({key, "model-" + std::to_string(i % models), file, gpus, 1.0, std::exp(r)});
  }
}

}  // namespace

TEST_CASE("the conformal bounds are the order statistics a 90% interval needs, by hand",
          "[model][accuracy]") {
  std::vector<double> r;
  for (int i = 1; i <= 18; ++i) r.push_back(i);
  CHECK_FALSE(conformal_bounds(r).has_value());  // 18 runs: ⌈19·19/20⌉ = 19 > 18
  r.push_back(19);
  auto b = conformal_bounds(r);  // 19 runs: ranks ⌊20/20⌋ = 1 and ⌈380/20⌉ = 19, the extremes
  REQUIRE(b);
  CHECK(b->first == 1);
  CHECK(b->second == 19);
  for (int i = 20; i <= 39; ++i) r.push_back(i);
  b = conformal_bounds(r);  // 39 runs: ranks ⌊40/20⌋ = 2 and ⌈760/20⌉ = 38
  REQUIRE(b);
  CHECK(b->first == 2);
  CHECK(b->second == 38);
  std::vector<double> reversed(r.rbegin(), r.rend());
  CHECK(conformal_bounds(reversed) == b);  // any order
}

TEST_CASE("a regime with too few runs is pooled with its neighbours in scale, then precision",
          "[model][accuracy]") {
  std::vector<ResidualRun> runs;
  add_runs(runs, h100_key(false, true), 25, 5, 0.10);  // BF16, multi-node: enough on its own
  add_runs(runs, h100_key(true, true), 7, 2, 0.20);    // FP8, multi-node: 7, then 7 over both scales
  const std::vector<Regime> regimes = compute_regimes(runs);
  REQUIRE(regimes.size() == 2);
  // Ordered by name: the pooled "... dense" before "... dense 16-bit multi-node".
  CHECK(regime_name(regimes[0]) == "sm90 megatron-core model-parallel dense");
  CHECK(regimes[0].runs == 32);
  CHECK_FALSE(regimes[0].fp8.has_value());
  CHECK_FALSE(regimes[0].multi_node.has_value());
  CHECK(regime_name(regimes[1]) == "sm90 megatron-core model-parallel dense 16-bit multi-node");
  CHECK(regimes[1].runs == 25);
  CHECK(regimes[1].models == 5);
  // 25 runs: ranks ⌊26/20⌋ = 1 and ⌈494/20⌉ = 25, the extreme scores: about ±0.10 (each run less the
  // median of the other models' runs, within a step of 0.2/24 of the median of all, 0).
  REQUIRE(regimes[1].low_ratio);
  CHECK(std::log(*regimes[1].low_ratio) == Approx(-0.10).margin(0.2 / 24));
  CHECK(std::log(*regimes[1].high_ratio) == Approx(0.10).margin(0.2 / 24));
  CHECK(regimes[1].bias_pct == Approx(0).margin(0.2));  // symmetric in log: a small positive mean

  // An FP8 scenario lands in the pooled regime; a BF16 one in its own.
  CHECK(interval_for(h100_key(true, true), 64, regimes).regime == &regimes[0]);
  CHECK(interval_for(h100_key(false, true), 64, regimes).regime == &regimes[1]);
}

TEST_CASE("a scenario outside every validated regime gets no interval and says what is missing",
          "[model][accuracy]") {
  std::vector<ResidualRun> runs;
  add_runs(runs, h100_key(), 30, 3, 0.05);
  const std::vector<Regime> regimes = compute_regimes(runs);

  RegimeKey b200 = h100_key();
  b200.sm_arch = 100;
  auto none = interval_for(b200, 64, regimes);
  CHECK(none.regime == nullptr);
  CHECK_FALSE(none.of(1.0).has_value());
  CHECK(none.why.find("no validated runs on sm100 GPUs") != std::string::npos);

  RegimeKey eager = h100_key();
  eager.stack = Stack::megatron_deepspeed;
  CHECK(interval_for(eager, 64, regimes).why.find("megatron-deepspeed stack on sm90") != std::string::npos);

  RegimeKey fsdp = h100_key();
  fsdp.sharding = Sharding::sharded_dp;
  CHECK(interval_for(fsdp, 64, regimes).why.find("sharded-dp") != std::string::npos);

  // Same GPU, stack and sharding but one node and FP8: the nearest regime, saying what differs.
  const auto near = interval_for(h100_key(true, false), 8, regimes);
  REQUIRE(near.regime == &regimes[0]);
  CHECK(near.differs == std::vector<std::string>{"precision", "node count"});
  CHECK(near.extrapolated.find("8 GPUs, outside its runs' 64–64") != std::string::npos);
  const auto range = near.of(2.0);
  REQUIRE(range);
  // 30 runs, ranks 1 and 30: the extreme scores, about ±0.05 (within a step of 0.1/29).
  CHECK(std::log(range->first / 2.0) == Approx(-0.05).margin(0.1 / 29));
  CHECK(std::log(range->second / 2.0) == Approx(0.05).margin(0.1 / 29));
}

TEST_CASE("leave-one-model-out coverage counts each run against bounds that never saw its model",
          "[model][accuracy]") {
  // Four models of 10 runs each: A, B and C predicted exactly (residual 0), D 35% slow (ln 1.35 = 0.3).
  std::vector<ResidualRun> runs;
  for (const char* model : {"A", "B", "C", "D"}) {
    for (int i = 0; i < 10; ++i) {
      runs.push_back({h100_key(), model, "a.csv", 64, 1.0, std::string(model) == "D" ? std::exp(0.3) : 1.0});
    }
  }
  // D held out: A, B and C agree exactly (every score 0), so their bounds are [0, 0] and D's runs fall
  // outside. A held out: the median of B, C, D is 0; B's and C's runs are scored against the median of the
  // other two models (0.15): -0.15; D's against B and C's (0): 0.3. 30 scores, ranks 1 and 30: [-0.15, 0.3],
  // which holds A's 0. Likewise for B and C: 30 of 40.
  const auto [covered, counted] = held_out_coverage(runs);
  CHECK(counted == 40);
  CHECK(covered == 30);
  const std::vector<Regime> regimes = compute_regimes(runs);
  REQUIRE(regimes.size() == 1);
  CHECK(regimes[0].held_out_runs == 40);
  CHECK(*regimes[0].held_out_coverage == Approx(0.75));
  // All four: the median 0; every model scored against the others' median (0); 40 scores, ranks 2 and 39 of
  // 30 zeros and 10 × 0.3: [0, 0.3].
  REQUIRE(regimes[0].low_ratio);
  CHECK(*regimes[0].low_ratio == Approx(1.0));
  CHECK(*regimes[0].high_ratio == Approx(std::exp(0.3)));
  runs.push_back({h100_key(), "E", "b.csv", 64, 1.0, 1.0});
  CHECK(compute_regimes(runs)[0].data == "a.csv, b.csv");
}

TEST_CASE("the shipped table covers the generations and stacks of the runs Lagom ships",
          "[model][accuracy]") {
  const std::vector<Regime>& shipped = shipped_regimes();
  RegimeKey a100 = h100_key();
  a100.sm_arch = 80;
  a100.stack = Stack::megatron_deepspeed;
  RegimeKey fsdp_a100;  // llm-foundry's FSDP runs: eager PyTorch
  fsdp_a100.sm_arch = 80;
  fsdp_a100.stack = Stack::pytorch_eager;
  fsdp_a100.sharding = Sharding::sharded_dp;
  fsdp_a100.multi_node = true;
  RegimeKey fsdp_h100 = fsdp_a100;
  fsdp_h100.sm_arch = 90;
  for (const RegimeKey& key : {h100_key(), h100_key(true), a100, fsdp_a100, fsdp_h100}) {
    INFO(regime_name(key));
    const PredictionInterval interval = interval_for(key, 64, shipped);
    REQUIRE(interval.regime != nullptr);
    CHECK(interval.differs.empty());
    REQUIRE(interval.low_ratio);
    CHECK(*interval.low_ratio < 1.0);
    CHECK(*interval.high_ratio > 1.0);
  }
}
