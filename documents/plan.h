// The JSON document of `lagom plan --json` (docs/plan.md "JSON"): kind "plan" (stamped, documents/kind.h),
// every input and assumption the plan used beside its rows and its choice; its writer and its reader (what
// `lagom report` draws).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "documents/setup.h"
#include "plan/plan.h"

namespace lagom::documents {

[[nodiscard]] nlohmann::json plan_json(const plan::PlanResult& plan);

// One row (also what `lagom simulate --tokens` adds to its document under "run").
[[nodiscard]] nlohmann::json plan_row_json(const plan::PlanRow& row);

// The parts of a row's wall time (`goodput`; docs/plan.md "Failures and checkpoints"): fractions that sum
// to 1. `lost` is what is left of 1 after the others, so rounding may leave it a hair below 0.
struct PlanGoodputView {
  double useful = 0, checkpoint = 0, restart = 0, lost = 0;
};
// What the goodput was computed from (`failures`), in seconds; none where there are no failures.
struct PlanFailuresView {
  std::optional<double> mtbf_s;                  // the job's mean time between interruptions
  double checkpoint_write_s = 0, restart_s = 0;  // δ and R (R includes reading the checkpoint back)
  std::optional<double> checkpoint_interval_s;   // Daly's τ
};
// A row whose best strategy was simulated (`strategy`, `step`, `failures`, `goodput` present).
struct PlanSimulatedView {
  StrategyView strategy;
  double step_mean_s = 0;  // the synchronous step with the slowest rank, mean
  double iterations = 0;
  PlanFailuresView failures;
  PlanGoodputView goodput;
};
// One rows[] entry: one cluster at one GPU count.
struct PlanRowView {
  std::string cluster, gpu;
  int gpus = 1, nodes = 1;
  bool feasible = false;
  std::string why;                             // an infeasible row's reason
  std::optional<PlanSimulatedView> simulated;  // always set on a feasible row
  // Feasible rows only: the whole run, failures, checkpoints and restarts included.
  double wall_s = 0, gpu_hours = 0;
  std::optional<double> price_per_gpu_hour, cost_usd;  // none without a price
};
// The choice among the rows (`selection`), every index checked to be a feasible row.
struct PlanSelectionView {
  bool by_dollars = false;  // cost_unit "usd", else "gpu_hours"
  std::optional<std::size_t> cheapest, fastest, cheapest_in_deadline, fastest_in_budget, chosen, closest;
  std::vector<std::size_t> pareto;  // time against cost over every cluster, fastest first
  std::string why;
};
// A plan document as read back.
struct PlanView {
  std::string model;
  double tokens = 0;
  std::int64_t global_batch = 1;
  std::optional<double> deadline_s, budget_usd;
  std::vector<PlanRowView> rows;  // in the document's order: clusters as given, GPU counts ascending
  PlanSelectionView selection;
  std::int64_t strategies_evaluated = 0, strategies_simulated = 0;
};
// Every field read is checked by the one field reader: invalid_input "<source>: <path>: <why>" (e.g.
// "plan.json: rows[1].goodput.lost: required", "plan.json: selection.chosen: 7 is not a feasible row");
// fields it does not read are left alone.
Result<PlanView> read_plan(const nlohmann::json& document, const std::string& source);

}  // namespace lagom::documents
