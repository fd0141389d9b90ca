#include "plan/plan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "simulator/model_costs.h"

namespace lagom::plan {

namespace {

// Explore's own phases would redraw a bar per point; the plan draws one bar over its points and passes
// explore's warnings on.
class WarningsOnly final : public Progress {
 public:
  explicit WarningsOnly(Progress& outer) : m_outer(outer) {}
  void begin(const std::string&, long) override {}
  void step(long, const std::string&) override {}
  void end() override {}
  void warn(const std::string& message) override { m_outer.warn(message); }

 private:
  Progress& m_outer;
};

// The checkpoint: every parameter's weights and optimizer state once (what a sharded checkpoint writes over
// all ranks). The memory model's figures for the whole model on one GPU (no parallelism, no sharding), so
// they follow its bytes per parameter (precision, master weights, Adam moments: model/cost_memory.cpp).
double checkpoint_bytes(const model::WorkloadSpec& workload, const model::Strategy& strategy,
                        const model::CostModel& cost_model) {
  model::Strategy whole = strategy;
  whole.gpus = 1, whole.tp = 1, whole.pp = 1, whole.dp = 1, whole.cp = 1, whole.ep = 1, whole.vpp = 1;
  whole.expert_tp = 1, whole.zero = 0, whole.sp = false;
  whole.first_stage_layers = 0, whole.last_stage_layers = 0;
  whole.schedule = model::Schedule::one_f_one_b;
  const model::MemoryBreakdown m = cost_model.memory_per_gpu(workload, whole);
  return m.weights_bytes + m.optimizer_bytes;
}

std::string duration_text(double s) {
  if (!std::isfinite(s)) return "never";
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.1f} min", s / 60);
  if (s < 172800) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} days", s / 86400);
}

Status check_options(const std::vector<PlanPoint>& points, const PlanOptions& options) {
  auto bad = [](const std::string& message) { return make_error(ErrorCode::invalid_input, message); };
  if (!(options.tokens > 0) || options.tokens > k_max_tokens) {
    return bad(fmt::format("tokens: {:g} is not within (0, {:g}]", options.tokens, k_max_tokens));
  }
  if (options.deadline_s && !(*options.deadline_s > 0 && std::isfinite(*options.deadline_s)))
    return bad("deadline: must be a positive duration");
  if (options.budget_usd && !(*options.budget_usd > 0 && std::isfinite(*options.budget_usd)))
    return bad("budget: must be a positive number of dollars");
  if (points.empty()) return bad("plan: no cluster and GPU count to plan for");
  if (options.explore.base.global_batch < 1) return bad("global-batch: required");
  for (const PlanPoint& p : points) {
    if (options.budget_usd && !p.cluster.operations.price_per_gpu_hour) {
      return bad(
          fmt::format("budget: cluster {} has no price per GPU-hour (--price or the cluster file's "
                      "operations.price_per_gpu_hour)",
                      p.cluster_name));
    }
  }
  return search::check_framework_pins(options.explore);
}

// What every row says of its point, feasible or not.
PlanRow row_of(std::string cluster_name, const model::ClusterSpec& cluster, int gpus) {
  PlanRow row;
  row.cluster_name = std::move(cluster_name);
  row.gpu_name = cluster.gpu.name;
  row.has_nccl = cluster.has_nccl;
  row.nccl_version = cluster.nccl_version;
  row.gpus = gpus;
  row.nodes = (gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
  row.operations = cluster.operations;
  return row;
}

// One point: explore's best strategy, simulated again with its timeline, and the run built on it.
Result<PlanRow> plan_point(const model::WorkloadSpec& workload, const PlanPoint& point,
                           const PlanOptions& options, Progress& warnings, PlanResult& totals) {
  PlanRow row = row_of(point.cluster_name, point.cluster, point.gpus);
  const model::CostModel cost_model(point.cluster, point.calibration, options.explore.base.stack);
  search::ExploreOptions explore = options.explore;
  explore.base.gpus = point.gpus;
  explore.top = 1;
  Result<search::ExploreResult> explored =
      search::explore(workload, point.cluster, cost_model, explore, warnings);
  if (!explored.ok()) return explored.error();
  if (explored->evaluated == 0) {
    // No strategy divides this count: a row that says so.
    row.infeasible = fmt::format(
        "no valid strategy for {} GPUs (tp·pp·cp·dp = GPUs with tp dividing the heads, pp the layers, cp the "
        "sequence and dp the global batch of {})",
        point.gpus, explore.base.global_batch);
    return row;
  }
  totals.strategies_evaluated += explored->evaluated;
  totals.strategies_simulated += explored->simulated;
  if (explored->results.empty()) {
    row.infeasible = fmt::format("no strategy fits in memory ({} evaluated)", explored->evaluated);
    return row;
  }
  const model::Strategy& best = explored->results.front().strategy;
  const simulator::ModelCosts costs(cost_model, workload, best);
  simulator::SimulateOptions with_timeline;
  with_timeline.timeline = true;
  LAGOM_TRY(simulator::SimulationResult result,
            simulator::simulate(workload, point.cluster, best, costs, {}, with_timeline));
  RunInputs inputs;
  inputs.tokens = options.tokens;
  inputs.workload = &workload;
  inputs.cluster = &point.cluster;
  inputs.cost_model = &cost_model;
  inputs.strategy = best;
  inputs.timeline_result = &result;
  LAGOM_TRY(PlanRow run, plan_run(inputs));
  run.cluster_name = point.cluster_name;
  return run;
}

}  // namespace

Result<PlanRow> plan_run(const RunInputs& in) {
  const model::WorkloadSpec& w = *in.workload;
  const model::ClusterSpec& c = *in.cluster;
  const model::Strategy& s = in.strategy;
  const simulator::SimulationResult& r = *in.timeline_result;
  const model::OperationsSpec& o = c.operations;
  PlanRow row = row_of(c.name, c, s.gpus);
  row.strategy = s;
  row.iteration_s = r.iteration_time_s;
  row.interval = model::interval_for(model::regime_of(c, s, w), s.gpus);
  row.step = straggler_step(r.iteration_time_s, o.step_time_cv, s.gpus);
  row.tokens_per_iteration = static_cast<double>(s.global_batch) * static_cast<double>(w.seq);
  row.iterations = std::ceil(in.tokens / row.tokens_per_iteration);
  row.checkpoint_bytes = checkpoint_bytes(w, s, *in.cost_model);
  const double write_Bps = row.nodes * o.checkpoint_GBps_per_node * 1e9;
  row.checkpoint_write_s = row.checkpoint_bytes / write_Bps;
  // A restart reads the checkpoint back; at the write bandwidth, for want of a separate read figure.
  row.restart_s = o.restart_s + row.checkpoint_write_s;
  row.mtbf_s = job_mtbf_s(o.failures_per_gpu_hour, s.gpus);
  row.goodput = goodput_at_daly_interval(row.checkpoint_write_s, row.restart_s, row.mtbf_s);
  row.useful_s = row.iterations * row.step.mean_s;
  row.busy = busy_fractions(r.timeline, r.iteration_time_s, s.pp);
  row.power = power_figures(c);
  if (!(row.goodput.useful > 0)) {
    row.infeasible = fmt::format(
        "an interruption every {} against {} to restart and {} per checkpoint: the run makes no progress",
        duration_text(row.mtbf_s), duration_text(row.restart_s), duration_text(row.checkpoint_write_s));
    return row;
  }
  row.wall_s = row.useful_s / row.goodput.useful;
  row.gpu_hours = gpu_hours(s.gpus, row.wall_s);
  row.price_per_gpu_hour = o.price_per_gpu_hour;
  if (o.price_per_gpu_hour) row.cost_usd = run_cost(s.gpus, row.wall_s, *o.price_per_gpu_hour);
  const PowerFigures& p = row.power;
  if (p.gpu_idle_w && p.gpu_full_w && *p.gpu_idle_w > *p.gpu_full_w) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("cluster {}: gpu_idle_w {:g} W exceeds gpu_full_w {:g} W", c.name,
                                  *p.gpu_idle_w, *p.gpu_full_w));
  }
  if (p.gpu_idle_w && p.gpu_full_w && p.node_overhead_w) {
    const PowerSpec power{*p.gpu_idle_w, *p.gpu_full_w, *p.node_overhead_w, o.pue};
    row.gpu_power_w = gpu_power_w(power.gpu_idle_w, power.gpu_full_w, row.busy.any);
    const Goodput& g = row.goodput;
    row.energy = run_energy(power, s.gpus, row.nodes, row.wall_s * (g.useful + g.lost),
                            row.wall_s * (g.checkpoint + g.restart), row.busy.any);
    row.joules_per_token = row.energy->facility_j / in.tokens;
    row.energy_per_iteration_j =
        run_energy(power, s.gpus, row.nodes, row.step.mean_s, 0, row.busy.any).facility_j;
  }
  return row;
}

Selection select_plans(const std::vector<PlanRow>& rows, std::optional<double> deadline_s,
                       std::optional<double> budget_usd) {
  Selection out;
  std::vector<std::size_t> feasible;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].feasible()) feasible.push_back(i);
  }
  out.by_dollars = !feasible.empty() && std::all_of(feasible.begin(), feasible.end(), [&](std::size_t i) {
    return rows[i].cost_usd.has_value();
  });
  auto cost = [&](std::size_t i) { return out.by_dollars ? *rows[i].cost_usd : rows[i].gpu_hours; };
  // Ties: the earlier row (the order of the points), so the choice is a function of the rows.
  auto better = [](std::optional<std::size_t>& best, std::size_t i, auto&& key) {
    if (!best || key(i) < key(*best)) best = i;
  };
  auto wall = [&](std::size_t i) { return rows[i].wall_s; };
  auto meets_deadline = [&](std::size_t i) { return !deadline_s || rows[i].wall_s <= *deadline_s; };
  auto meets_budget = [&](std::size_t i) { return !budget_usd || cost(i) <= *budget_usd; };
  for (const std::size_t i : feasible) {
    better(out.cheapest, i, cost);
    better(out.fastest, i, wall);
    if (deadline_s && meets_deadline(i)) better(out.cheapest_in_deadline, i, cost);
    if (budget_usd && meets_budget(i)) better(out.fastest_in_budget, i, wall);
    if (meets_deadline(i) && meets_budget(i)) better(out.chosen, i, cost);
  }
  // Pareto front: fastest first, each cheaper than every faster one.
  std::vector<std::size_t> by_time = feasible;
  std::stable_sort(by_time.begin(), by_time.end(),
                   [&](std::size_t a, std::size_t b) { return wall(a) < wall(b); });
  double cheapest_so_far = std::numeric_limits<double>::infinity();
  for (const std::size_t i : by_time) {
    if (cost(i) < cheapest_so_far) out.pareto.push_back(i), cheapest_so_far = cost(i);
  }
  if ((!deadline_s && !budget_usd) || out.chosen) return out;
  if (feasible.empty()) {
    out.why = "no cluster and GPU count runs the model (each row says why)";
    return out;
  }
  auto miss = [&](std::size_t i) {
    double m = 0;
    if (deadline_s) m = std::max(m, wall(i) / *deadline_s);
    if (budget_usd) m = std::max(m, cost(i) / *budget_usd);
    return m;
  };
  for (const std::size_t i : feasible) better(out.closest, i, miss);
  const PlanRow& c = rows[*out.closest];
  std::vector<std::string> parts;
  if (deadline_s && c.wall_s > *deadline_s) {
    parts.push_back(fmt::format("takes {:.1f} days against a deadline of {:.1f} ({:+.0f} %)",
                                c.wall_s / 86400, *deadline_s / 86400, 100 * (c.wall_s / *deadline_s - 1)));
  }
  if (budget_usd && cost(*out.closest) > *budget_usd) {
    parts.push_back(fmt::format("costs ${:.0f} against a budget of ${:.0f} ({:+.0f} %)", cost(*out.closest),
                                *budget_usd, 100 * (cost(*out.closest) / *budget_usd - 1)));
  }
  std::string joined;
  for (const auto& part : parts) joined += (joined.empty() ? "" : " and ") + part;
  out.why = fmt::format("nothing meets {}; the closest, {} GPUs of {}, {}",
                        deadline_s && budget_usd ? "both the deadline and the budget"
                        : deadline_s             ? "the deadline"
                                                 : "the budget",
                        c.gpus, c.cluster_name, joined);
  return out;
}

Result<PlanResult> make_plan(const model::WorkloadSpec& workload, const std::vector<PlanPoint>& points,
                             const PlanOptions& options, Progress& progress) {
  const auto started = std::chrono::steady_clock::now();
  LAGOM_TRY_STATUS(check_options(points, options));
  PlanResult out;
  out.workload_name = workload.name;
  out.seq = workload.seq;
  out.parameters = workload.parameters();
  out.options = options;
  WarningsOnly warnings(progress);
  progress.begin("plan: the best strategy and its run, per cluster and GPU count",
                 static_cast<long>(points.size()));
  for (std::size_t i = 0; i < points.size(); ++i) {
    auto row = plan_point(workload, points[i], options, warnings, out);
    if (!row.ok()) {
      progress.end();
      return row.error().with_context(fmt::format("{} on {} GPUs", points[i].cluster_name, points[i].gpus));
    }
    out.rows.push_back(std::move(row).value());
    progress.step(static_cast<long>(i + 1),
                  fmt::format("{} × {} GPUs", points[i].cluster_name, points[i].gpus));
  }
  progress.end();
  out.selection = select_plans(out.rows, options.deadline_s, options.budget_usd);
  out.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace lagom::plan
