// The entry points of simulator.h: plan the iteration (stage_plan.h), emit its task graph (graph.h), run it
// (engine.h) and summarize it; or bound it (lower_bound.h).
#include "simulator/simulator.h"

#include <memory>

#include "simulator/graph.h"
#include "simulator/lower_bound.h"
#include "simulator/op_classes.h"
#include "simulator/stage_plan.h"
#include "simulator/trace.h"

namespace lagom::simulator {

namespace {

// One iteration's plan and graph, for one call of an entry point.
class Iteration {
 public:
  Iteration(const model::WorkloadSpec& workload, const model::ClusterSpec& cluster,
            const model::Strategy& strategy, const IterationCosts& costs, const CommAssignment& assignment,
            const SimulateOptions& options)
      : m_workload(workload),
        m_strategy(strategy),
        m_costs(costs),
        m_assignment(assignment),
        m_options(options),
        m_classes(costs, strategy, cluster, assignment) {}

  // Plans the iteration and emits its task graph.
  Status build() {
    LAGOM_TRY(m_plan,
              plan_iteration(m_workload, m_strategy, m_costs, m_assignment, m_classes, m_options.timeline));
    emit_graph(m_plan, m_strategy, m_assignment, m_options.timeline, m_classes, m_graph);
    return {};
  }
  // After build(): the engine's critical path (every task alone), microseconds.
  [[nodiscard]] double critical_path_us() const { return m_graph.engine.critical_path_us(); }
  // After build(): runs the graph.
  Result<SimulationResult> run();

 private:
  const model::WorkloadSpec& m_workload;
  const model::Strategy& m_strategy;
  const IterationCosts& m_costs;
  const CommAssignment& m_assignment;
  const SimulateOptions& m_options;
  OpClassTable m_classes;
  IterationPlan m_plan;
  Graph m_graph;
};

Result<SimulationResult> Iteration::run() {
  LAGOM_TRY_STATUS(m_graph.engine.run());
  const Engine& engine = m_graph.engine;
  const int p = m_strategy.pp;
  SimulationResult result;
  const double t_us = engine.makespan_us();
  result.iteration_time_s = t_us * 1e-6;
  for (int s = 0; s < p; ++s) {
    const StageTotals& totals = engine.totals(s);
    Breakdown b{totals.compute_us * 1e-6, totals.exposed_comm_us * 1e-6, totals.bubble_us * 1e-6,
                totals.optimizer_us * 1e-6};
    result.stages.push_back(b);
    result.breakdown.compute_s += b.compute_s / p;
    result.breakdown.exposed_comm_s += b.exposed_comm_s / p;
    result.breakdown.pipeline_bubble_s += b.pipeline_bubble_s / p;
    result.breakdown.optimizer_s += b.optimizer_s / p;
  }
  if (t_us > 0) {
    const IterationFlops flops = m_costs.flops();
    result.tokens_per_s = static_cast<double>(m_strategy.global_batch) * static_cast<double>(m_workload.seq) /
                          result.iteration_time_s;
    result.model_tflops_per_gpu = flops.model_flops / result.iteration_time_s / m_strategy.gpus / 1e12;
    result.hardware_tflops_per_gpu = flops.hardware_flops / result.iteration_time_s / m_strategy.gpus / 1e12;
    const double peak = m_costs.peak_tflops();
    result.mfu = peak > 0 ? result.model_tflops_per_gpu / peak : 0;
    result.hfu = peak > 0 ? result.hardware_tflops_per_gpu / peak : 0;
  }
  result.memory = m_costs.memory();
  result.memory_budget_gib = m_costs.memory_capacity_gib();
  result.fits_in_memory = result.memory.total <= result.memory_budget_gib;
  result.op_classes = m_classes.classes();
  result.tasks = engine.task_count();
  if (m_options.timeline) result.timeline = record_timeline(m_graph, m_classes);
  return result;
}

}  // namespace

Result<SimulationResult> simulate(const model::WorkloadSpec& workload, const model::ClusterSpec& cluster,
                                  const model::Strategy& strategy, const IterationCosts& costs,
                                  const CommAssignment& assignment, const SimulateOptions& options) {
  Iteration iteration(workload, cluster, strategy, costs, assignment, options);
  LAGOM_TRY_STATUS(iteration.build());
  return iteration.run();
}

Result<std::vector<OpClass>> op_classes(const model::WorkloadSpec& workload,
                                        const model::ClusterSpec& cluster, const model::Strategy& strategy,
                                        const IterationCosts& costs, const CommAssignment& assignment) {
  LAGOM_TRY(SimulationResult result, simulate(workload, cluster, strategy, costs, assignment));
  return std::move(result.op_classes);
}

Result<double> iteration_lower_bound_us(const model::WorkloadSpec& workload,
                                        const model::ClusterSpec& cluster, const model::Strategy& strategy,
                                        const IterationCosts& costs) {
  LAGOM_TRY(const LowerBound bound, iteration_lower_bound(workload, cluster, strategy, costs));
  return bound.us;
}

Result<double> iteration_critical_path_us(const model::WorkloadSpec& workload,
                                          const model::ClusterSpec& cluster, const model::Strategy& strategy,
                                          const IterationCosts& costs) {
  const CommAssignment defaults;
  const SimulateOptions options;
  Iteration iteration(workload, cluster, strategy, costs, defaults, options);
  LAGOM_TRY_STATUS(iteration.build());
  return iteration.critical_path_us() * (1 - k_rounding_margin);
}

Result<std::optional<SimulationResult>> simulate_unless_slower(const model::WorkloadSpec& workload,
                                                               const model::ClusterSpec& cluster,
                                                               const model::Strategy& strategy,
                                                               const IterationCosts& costs, double limit_us) {
  const CommAssignment defaults;
  const SimulateOptions options;
  Iteration iteration(workload, cluster, strategy, costs, defaults, options);
  LAGOM_TRY_STATUS(iteration.build());
  if (iteration.critical_path_us() * (1 - k_rounding_margin) > limit_us)
    return std::optional<SimulationResult>{};
  LAGOM_TRY(SimulationResult result, iteration.run());
  return std::optional<SimulationResult>(std::move(result));
}

}  // namespace lagom::simulator
