#include "cli/simulate_run.h"

#include <cmath>

#include <fmt/format.h>

#include "cli/app.h"
#include "plan/quantities.h"

namespace lagom::cli {

void add_simulate_run_flags(CLI::App& command, SimulateRunFlags& flags) {
  command.add_option("--tokens", flags.tokens,
                     "Training tokens (e.g. 15T): add the run's time, p99 step, goodput, cost and energy "
                     "(docs/plan.md)");
  command.add_option_function<double>(
      "--price", [&flags](const double& v) { flags.price = bounded("--price", v, 0.0, 1e6); },
      "Dollars per GPU-hour, with --tokens [the cluster file's operations.price_per_gpu_hour]");
}

bool wants_run(const SimulateRunFlags& flags) {
  return !flags.tokens.empty();
}

Result<std::optional<plan::PlanRow>> simulate_run(const SimulateRunFlags& flags,
                                                  const simulator::Scenario& scenario,
                                                  const simulator::SimulationResult& result) {
  if (!wants_run(flags)) {
    if (flags.price) return make_error(ErrorCode::invalid_input, "--price: needs --tokens");
    return std::optional<plan::PlanRow>();
  }
  const Result<double> tokens = plan::parse_tokens(flags.tokens);
  if (!tokens.ok()) return tokens.error().with_context("--tokens");
  model::ClusterSpec cluster = scenario.cluster;
  if (flags.price) cluster.operations.price_per_gpu_hour = *flags.price;
  plan::RunInputs in;
  in.tokens = *tokens;
  in.workload = &scenario.workload;
  in.cluster = &cluster;
  in.cost_model = scenario.model.get();
  in.strategy = scenario.strategy;
  in.timeline_result = &result;
  LAGOM_TRY(plan::PlanRow row, plan::plan_run(in));
  return std::optional<plan::PlanRow>(std::move(row));
}

void print_simulate_run(const plan::PlanRow& r) {
  fmt::print("# run of {:.4g} tokens (docs/plan.md): {:.0f} iterations of {:.0f} tokens\n",
             r.iterations * r.tokens_per_iteration, r.iterations, r.tokens_per_iteration);
  fmt::print("step_mean_s             {:.6f}  (slowest of {} GPUs, spread {:g})\n", r.step.mean_s, r.gpus,
             r.operations.step_time_cv);
  fmt::print("step_p50_s              {:.6f}\n", r.step.p50_s);
  fmt::print("step_p99_s              {:.6f}\n", r.step.p99_s);
  fmt::print("goodput_%               {:.2f}  (checkpoint {:.2f}, restart {:.2f}, lost {:.2f})\n",
             100 * r.goodput.useful, 100 * r.goodput.checkpoint, 100 * r.goodput.restart,
             100 * r.goodput.lost);
  if (!r.feasible()) {
    fmt::print("# {}\n", r.infeasible);
    return;
  }
  fmt::print("time_to_train_days      {:.2f}\n", r.wall_s / 86400);
  fmt::print("gpu_hours               {:.0f}\n", r.gpu_hours);
  if (r.cost_usd) fmt::print("cost_usd                {:.0f}\n", *r.cost_usd);
  if (r.energy) {
    fmt::print("energy_per_iteration_j  {:.0f}\n", *r.energy_per_iteration_j);
    fmt::print("energy_mwh              {:.1f}\n", r.energy->facility_j / 3.6e9);
    fmt::print("joules_per_token        {:.3f}\n", *r.joules_per_token);
  } else {
    fmt::print("# no energy: the GPU or node power is unknown (the cluster file's operations)\n");
  }
}

}  // namespace lagom::cli
