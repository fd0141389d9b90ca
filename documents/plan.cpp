#include "documents/plan.h"

#include <cmath>

#include "documents/interval.h"
#include "documents/kind.h"

namespace lagom::documents {

using plan::PlanOptions;
using plan::PlanResult;
using plan::PlanRow;
using plan::Selection;

namespace {

// JSON has no infinity: an unbounded figure (no failures: no interruption, no checkpoint interval) is null.
nlohmann::json finite(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
}
template <typename T>
nlohmann::json optional(const std::optional<T>& x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}
nlohmann::json index(const std::optional<std::size_t>& i) {
  return i ? nlohmann::json(*i) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json plan_row_json(const PlanRow& row) {
  nlohmann::json j = {{"cluster", row.cluster_name},
                      {"gpu", row.gpu_name},
                      {"gpus", row.gpus},
                      {"nodes", row.nodes},
                      {"feasible", row.feasible()}};
  if (!row.feasible()) j["why"] = row.infeasible;
  if (row.iteration_s <= 0) return j;
  const model::OperationsSpec& o = row.operations;
  j["strategy"] = model::to_json(row.strategy);
  j["step"] = {
      {"simulated_s", row.iteration_s}, {"mean_s", row.step.mean_s}, {"p50_s", row.step.p50_s},
      {"p99_s", row.step.p99_s},        {"ranks", row.gpus},         {"step_time_cv", o.step_time_cv}};
  j["tokens_per_iteration"] = row.tokens_per_iteration;
  j["iterations"] = row.iterations;
  j["failures"] = {{"failures_per_gpu_hour", o.failures_per_gpu_hour},
                   {"mtbf_s", finite(row.mtbf_s)},
                   {"checkpoint_bytes", row.checkpoint_bytes},
                   {"checkpoint_GBps_per_node", o.checkpoint_GBps_per_node},
                   {"checkpoint_write_s", row.checkpoint_write_s},
                   {"restart_s", row.restart_s},
                   {"checkpoint_interval_s", finite(row.goodput.interval_s)}};
  j["goodput"] = {{"useful", row.goodput.useful},
                  {"checkpoint", row.goodput.checkpoint},
                  {"restart", row.goodput.restart},
                  {"lost", row.goodput.lost}};
  j["busy"] = {{"compute", row.busy.compute}, {"links", row.busy.links}, {"any", row.busy.any}};
  j["power"] = {{"gpu_idle_w", optional(row.power.gpu_idle_w)},
                {"gpu_full_w", optional(row.power.gpu_full_w)},
                {"node_overhead_w", optional(row.power.node_overhead_w)},
                {"pue", o.pue},
                {"source", row.power.source},
                {"gpu_w", optional(row.gpu_power_w)}};
  if (!row.feasible()) return j;
  j["useful_s"] = row.useful_s;
  j["wall_s"] = row.wall_s;
  j["gpu_hours"] = row.gpu_hours;
  std::vector<std::pair<std::string, double>> figures = {{"wall_s", row.wall_s},
                                                         {"gpu_hours", row.gpu_hours}};
  if (row.cost_usd) figures.emplace_back("cost_usd", *row.cost_usd);
  j["interval"] = interval_json(row.interval, figures);
  j["price_per_gpu_hour"] = optional(row.price_per_gpu_hour);
  j["cost_usd"] = optional(row.cost_usd);
  if (row.energy) {
    j["energy"] = {{"gpu_j", row.energy->gpu_j},
                   {"node_j", row.energy->node_j},
                   {"facility_j", row.energy->facility_j},
                   {"mwh", row.energy->facility_j / 3.6e9},
                   {"per_iteration_j", optional(row.energy_per_iteration_j)},
                   {"joules_per_token", optional(row.joules_per_token)}};
  } else {
    j["energy"] = nullptr;
  }
  return j;
}

nlohmann::json plan_json(const PlanResult& plan) {
  const PlanOptions& o = plan.options;
  const model::Strategy& base = o.explore.base;
  nlohmann::json rows = nlohmann::json::array();
  for (const PlanRow& row : plan.rows) rows.push_back(plan_row_json(row));
  const Selection& s = plan.selection;
  return stamp(Kind::plan,
               {{"model", {{"name", plan.workload_name}, {"seq", plan.seq}, {"parameters", plan.parameters}}},
                {"inputs",
                 {{"tokens", o.tokens},
                  {"global_batch", base.global_batch},
                  {"deadline_s", optional(o.deadline_s)},
                  {"budget_usd", optional(o.budget_usd)},
                  {"framework", std::string(search::framework_profile(o.explore.framework).name)},
                  {"precision", std::string(model::to_string(base.precision))}}},
                {"rows", rows},
                {"selection",
                 {{"cost_unit", s.by_dollars ? "usd" : "gpu_hours"},
                  {"cheapest", index(s.cheapest)},
                  {"fastest", index(s.fastest)},
                  {"cheapest_in_deadline", index(s.cheapest_in_deadline)},
                  {"fastest_in_budget", index(s.fastest_in_budget)},
                  {"chosen", index(s.chosen)},
                  {"pareto", s.pareto},
                  {"closest", index(s.closest)},
                  {"why", s.why}}},
                {"strategies_evaluated", plan.strategies_evaluated},
                {"strategies_simulated", plan.strategies_simulated},
                {"elapsed_s", plan.elapsed_s}});
}

}  // namespace lagom::documents
