#include "documents/plan.h"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/json_fields.h"
#include "documents/interval.h"
#include "documents/kind.h"
#include "documents/nccl.h"

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
                      {"nccl", nccl_json(row.has_nccl, row.nccl_version)},
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

// ---- the reader ------------------------------------------------------------------------------------

namespace {

constexpr auto k_most = std::numeric_limits<std::int64_t>::max();

Result<PlanFailuresView> read_failures(const FieldReader& r) {
  PlanFailuresView f;
  // null where there are no failures (plan_row_json's finite(): JSON has no infinity)
  LAGOM_TRY(f.mtbf_s, r.optional_number("mtbf_s", false));
  LAGOM_TRY(f.checkpoint_interval_s, r.optional_number("checkpoint_interval_s", false));
  LAGOM_TRY(f.checkpoint_write_s, r.number("checkpoint_write_s", std::nullopt, true));
  LAGOM_TRY(f.restart_s, r.number("restart_s", std::nullopt, true));
  return f;
}

Result<PlanGoodputView> read_goodput(const FieldReader& r) {
  PlanGoodputView g;
  // Fractions of the wall time. `lost` is 1 less the others (plan/formulas.cpp), so it is read as any
  // finite number: a rounding a hair below 0 is not an error.
  LAGOM_TRY(g.useful, r.number("useful", std::nullopt, true, 1.0));
  LAGOM_TRY(g.checkpoint, r.number("checkpoint", std::nullopt, true, 1.0));
  LAGOM_TRY(g.restart, r.number("restart", std::nullopt, true, 1.0));
  LAGOM_TRY(g.lost, r.finite("lost", std::nullopt));
  return g;
}

Result<PlanSimulatedView> read_simulated(const FieldReader& row) {
  PlanSimulatedView s;
  LAGOM_TRY(const FieldReader strategy, row.object("strategy"));
  LAGOM_TRY(s.strategy, read_strategy_view(strategy));
  LAGOM_TRY(const FieldReader step, row.object("step"));
  LAGOM_TRY(s.step_mean_s, step.number("mean_s", std::nullopt));
  LAGOM_TRY(s.iterations, row.number("iterations", std::nullopt));
  LAGOM_TRY(const FieldReader failures, row.object("failures"));
  LAGOM_TRY(s.failures, read_failures(failures));
  LAGOM_TRY(const FieldReader goodput, row.object("goodput"));
  LAGOM_TRY(s.goodput, read_goodput(goodput));
  return s;
}

Result<PlanRowView> read_row(const FieldReader& r) {
  PlanRowView row;
  LAGOM_TRY(row.cluster, r.string("cluster", std::nullopt));
  LAGOM_TRY(row.gpu, r.string("gpu", std::nullopt));
  LAGOM_TRY(row.gpus, r.integer("gpus", std::nullopt));
  LAGOM_TRY(row.nodes, r.integer("nodes", std::nullopt));
  LAGOM_TRY(row.feasible, r.boolean("feasible", std::nullopt));
  // plan_row_json: a row where no strategy runs says why, and has the simulated parts only when a
  // strategy was simulated before the run was found impossible; a feasible row has them all.
  if (!row.feasible) {
    LAGOM_TRY(row.why, r.string("why", std::nullopt));
    if (!r.has("step")) return row;
  }
  LAGOM_TRY(row.simulated, read_simulated(r));
  if (!row.feasible) return row;
  LAGOM_TRY(row.wall_s, r.number("wall_s", std::nullopt));
  LAGOM_TRY(row.gpu_hours, r.number("gpu_hours", std::nullopt));
  LAGOM_TRY(row.price_per_gpu_hour, r.optional_number("price_per_gpu_hour"));
  LAGOM_TRY(row.cost_usd, r.optional_number("cost_usd"));
  return row;
}

// A row index of the selection: in range and a row where a strategy runs (the choice is made among those).
Result<std::size_t> read_index(const FieldReader& r, const std::string& field, const nlohmann::json& value,
                               const std::vector<PlanRowView>& rows) {
  if (!value.is_number_integer() || value.get<std::int64_t>() < 0) {
    return r.error(field, "must be a row index (an integer >= 0)");
  }
  const auto i = value.get<std::uint64_t>();
  if (i >= rows.size() || !rows[i].feasible) {
    return r.error(field, fmt::format("{} is not a feasible row (rows: {})", i, rows.size()));
  }
  return static_cast<std::size_t>(i);
}

Result<PlanSelectionView> read_selection(const FieldReader& r, const std::vector<PlanRowView>& rows) {
  PlanSelectionView s;
  LAGOM_TRY(const std::string unit, r.string("cost_unit", std::nullopt));
  if (unit != "usd" && unit != "gpu_hours") {
    return r.error("cost_unit", fmt::format("'{}' is not one of usd|gpu_hours", unit));
  }
  s.by_dollars = unit == "usd";
  for (auto [field, index] : {std::pair{"cheapest", &s.cheapest}, std::pair{"fastest", &s.fastest},
                              std::pair{"cheapest_in_deadline", &s.cheapest_in_deadline},
                              std::pair{"fastest_in_budget", &s.fastest_in_budget},
                              std::pair{"chosen", &s.chosen}, std::pair{"closest", &s.closest}}) {
    if (!r.has(field)) continue;  // null: no such row (no deadline, nothing meets the constraints)
    LAGOM_TRY(*index, read_index(r, field, r.at(field), rows));
  }
  LAGOM_TRY(const nlohmann::json* pareto, r.array("pareto"));
  for (std::size_t k = 0; k < pareto->size(); ++k) {
    LAGOM_TRY(const std::size_t i, read_index(r, fmt::format("pareto[{}]", k), (*pareto)[k], rows));
    s.pareto.push_back(i);
  }
  LAGOM_TRY(s.why, r.string("why", std::nullopt));
  return s;
}

}  // namespace

Result<PlanView> read_plan(const nlohmann::json& document, const std::string& source) {
  LAGOM_TRY_STATUS(require_object(document, source));
  // Later versions may add fields: the ones read are checked, the others left alone.
  const FieldReader top(document, source, "", UnknownFields::ignore);
  PlanView v;
  LAGOM_TRY(const FieldReader model, top.object("model"));
  LAGOM_TRY(v.model, model.string("name", std::nullopt));
  LAGOM_TRY(const FieldReader inputs, top.object("inputs"));
  LAGOM_TRY(v.tokens, inputs.number("tokens", std::nullopt));
  LAGOM_TRY(v.global_batch, inputs.integer("global_batch", std::nullopt, 1, k_most));
  LAGOM_TRY(v.deadline_s, inputs.optional_number("deadline_s", false));
  LAGOM_TRY(v.budget_usd, inputs.optional_number("budget_usd", false));
  LAGOM_TRY(const nlohmann::json* rows, top.array("rows"));
  for (std::size_t i = 0; i < rows->size(); ++i) {
    LAGOM_TRY(const FieldReader entry, top.element("rows", *rows, i));
    LAGOM_TRY(PlanRowView row, read_row(entry));
    v.rows.push_back(std::move(row));
  }
  LAGOM_TRY(const FieldReader selection, top.object("selection"));
  LAGOM_TRY(v.selection, read_selection(selection, v.rows));
  // Cost in dollars means every feasible row has one (select_plans), which a reader may then rely on.
  for (std::size_t i = 0; i < v.rows.size(); ++i) {
    if (v.selection.by_dollars && v.rows[i].feasible && !v.rows[i].cost_usd) {
      return make_error(
          ErrorCode::invalid_input,
          fmt::format("{}: rows[{}].cost_usd: required (selection.cost_unit is usd)", source, i));
    }
  }
  LAGOM_TRY(v.strategies_evaluated, top.integer("strategies_evaluated", std::nullopt, 0, k_most));
  LAGOM_TRY(v.strategies_simulated, top.integer("strategies_simulated", std::nullopt, 0, k_most));
  return v;
}

}  // namespace lagom::documents
