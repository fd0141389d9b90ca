// How far the model's predictions have been from measured runs, per validated regime, and the interval a
// prediction carries because of it (docs/model.md "How sure a prediction is").
//
// A regime is the part of the scenario space one set of measured runs covers: the GPU architecture, the
// software stack, how the model is split (Megatron-style tensor/pipeline/context parallelism, or data
// parallelism with sharded parameters, FSDP style), dense or mixture-of-experts, 16-bit or FP8 GEMMs, one
// node or several. `lagom validate` computes each regime's residuals ln(measured / predicted) from the runs
// files and the conformal 90% bounds on them; the table this Lagom ships (model/accuracy.json, written by
// scripts/update-accuracy.sh from the runs files in tests/data/validate/) is what simulate, explore, tune
// and plan read. A scenario in no validated regime gets no interval, and says which dimension no
// measured run covers: a figure from outside the data is not given a precision it has not earned.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/enum_table.h"
#include "model/specs.h"

namespace lagom::model {

// How a strategy splits the model over GPUs. sharded_dp: no tensor, pipeline, context or expert
// parallelism and ZeRO 2 or 3 (PyTorch FSDP, DeepSpeed ZeRO-2/3); model_parallel: everything else
// (Megatron's tp/pp/cp/ep, with or without the distributed optimizer).
enum class Sharding { model_parallel, sharded_dp };
inline constexpr auto k_sharding_names = enum_table<Sharding>(
    {{Sharding::model_parallel, "model-parallel"}, {Sharding::sharded_dp, "sharded-dp"}});
constexpr const auto& enum_names(Sharding) {
  return k_sharding_names;
}

// The dimensions of a scenario that the model's error is known to depend on.
struct RegimeKey {
  int sm_arch = 0;  // the GPU's compute capability × 10 (80 A100, 90 H100)
  Stack stack = Stack::megatron_core;
  Sharding sharding = Sharding::model_parallel;
  bool moe = false;         // a mixture-of-experts workload
  bool fp8 = false;         // --precision fp8
  bool multi_node = false;  // more than one node
  // Multi-node only: how the cluster's network differs from every validated multi-node run's (InfiniBand,
  // adaptive routing, GPUDirect RDMA, a non-blocking fabric), e.g. "roce, ECMP routing"; "" when it does
  // not. interval_for names it among the dimensions that differ.
  std::string network;
};
RegimeKey regime_of(const ClusterSpec& cluster, const Strategy& strategy, const WorkloadSpec& workload);

// A validated regime: a RegimeKey whose three optional dimensions may be pooled (unset: the regime holds
// runs of both values, because one value alone had too few runs for a 90% interval).
struct Regime {
  int sm_arch = 0;
  Stack stack = Stack::megatron_core;
  Sharding sharding = Sharding::model_parallel;
  std::optional<bool> moe, fp8, multi_node;
  int runs = 0, models = 0;  // measured runs, distinct models among them
  int min_gpus = 0, max_gpus = 0;
  std::string data;  // the runs files, "dgxc-h100.csv" or "vtrain-single.csv, vtrain-multi.csv"
  // The 90% bounds on measured ÷ predicted (conformal: order statistics of the residuals); none when the
  // regime has too few runs (fewer than 19) to bound a 90% interval.
  std::optional<double> low_ratio, high_ratio;
  double bias_pct = 0, mape_pct = 0;  // of the predictions against the runs (negative bias: too fast)
  // The share of runs inside the bounds computed without their own model's runs (leave one model out);
  // none when no model could be left out with enough runs remaining.
  std::optional<double> held_out_coverage;
  int held_out_runs = 0;  // the runs that share counts
};
// "sm90 megatron-core model-parallel dense bf16 multi-node"; pooled dimensions are left out.
std::string regime_name(const Regime& regime);
std::string regime_name(const RegimeKey& key);

// The level of every interval Lagom states.
inline constexpr double k_interval_level = 0.9;

// The conformal bounds (lower, upper) of level k_interval_level on `residuals` (any order): the
// ⌊(n+1)·0.05⌋-th and ⌈(n+1)·0.95⌉-th smallest; none when n is too small for them (n < 19).
std::optional<std::pair<double, double>> conformal_bounds(std::vector<double> residuals);

// One measured run as the regime computation sees it.
struct ResidualRun {
  RegimeKey key;
  std::string model;  // leave-one-model-out groups by it
  std::string file;   // the runs file's name
  int gpus = 0;
  double predicted_s = 0, measured_s = 0;
};
// The regimes of `runs`: the runs grouped by their full key; a group with fewer than 19 runs is pooled with
// the runs that differ from it only in scale, then also in precision, then also in dense/MoE, until it has
// enough (or nothing is left to pool, and the regime states no bounds). Every run lies in exactly one
// most specific regime; pooled regimes hold every run of their coarser key. Ordered by name.
std::vector<Regime> compute_regimes(const std::vector<ResidualRun>& runs);

// The share of `runs` whose measurement lies inside the bounds its regime would have had without that
// run's model (leave one model out), over the runs whose regime keeps enough runs: (covered, counted).
std::pair<int, int> held_out_coverage(const std::vector<ResidualRun>& runs);

// The table this Lagom ships: model/accuracy.json, made C++ data at configure time (model/CMakeLists.txt);
// documents/accuracy.h reads and writes its JSON form.
const std::vector<Regime>& shipped_regimes();

// The interval a prediction carries.
struct PredictionInterval {
  const Regime* regime =
      nullptr;  // none: the scenario is in no validated regime (`why` says what is missing)
  std::vector<std::string> differs;  // dimensions of the nearest regime that differ from the scenario's
  std::string extrapolated;          // "" or why the scenario lies outside the regime's GPU counts
  std::string why;                   // no regime, or a regime with too few runs to bound
  std::optional<double> low_ratio, high_ratio;  // the regime's bounds on measured ÷ predicted
  // The interval of a predicted duration (seconds, hours, days): [value·low, value·high]; none without
  // bounds.
  [[nodiscard]] std::optional<std::pair<double, double>> of(double predicted) const;
  // One line for people: "90%: 1.18–1.31 s (43 runs, dgxc-h100.csv: sm90 megatron-core ...)" without the
  // value.
  [[nodiscard]] std::string source() const;
};
PredictionInterval interval_for(const RegimeKey& key, int gpus, const std::vector<Regime>& regimes);
PredictionInterval interval_for(const RegimeKey& key, int gpus);  // the shipped table

}  // namespace lagom::model
