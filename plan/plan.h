// Capacity planning for a whole training run (`lagom plan`, docs/plan.md): for each cluster and GPU count,
// the best strategy explore finds (search/explore.h), then the run around its iterations — time to train on
// a number of tokens with the slowest rank's step (stragglers), failures, checkpoints and restarts
// (goodput), GPU-hours and dollars, energy from the simulated busy time — and the choice among them: the
// cheapest plan that meets a deadline, the fastest within a budget, the Pareto front of time against cost,
// or, when nothing meets the constraints, the closest and why.
//
// Thread safety: make_plan runs explore (which runs its own threads) once per point, one point at a time.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/progress.h"
#include "model/accuracy.h"
#include "model/calibration.h"
#include "model/specs.h"
#include "plan/busy.h"
#include "plan/formulas.h"
#include "plan/power.h"
#include "plan/quantities.h"
#include "search/explore.h"

namespace lagom::plan {

// One cluster at one GPU count (the caller resolves the cluster for the count: nodes, profile fits).
struct PlanPoint {
  std::string cluster_name;  // as the user named it (a preset or a file)
  model::ClusterSpec cluster;
  std::optional<model::Calibration> calibration;
  int gpus = 0;
};

struct PlanOptions {
  double tokens = 0;                 // training tokens, (0, k_max_tokens]
  std::optional<double> deadline_s;  // wall-clock time the run must finish in, > 0
  std::optional<double> budget_usd;  // what it may cost, > 0 (needs a price for every cluster)
  search::ExploreOptions explore;    // base.global_batch set; base.gpus is each point's
};

// One cluster at one GPU count: its best strategy and the run built on it.
struct PlanRow {
  std::string cluster_name, gpu_name;
  // The cluster's NCCL: whose release's defaults priced its collectives (documents/nccl.h).
  bool has_nccl = true;
  std::string nccl_version;  // ClusterSpec::nccl_version ("": the default)
  int gpus = 0, nodes = 0;
  std::string infeasible;  // why no strategy runs here ("" when one does); the fields below are then unset
  model::Strategy strategy;
  double iteration_s = 0;           // simulated, one iteration, every rank at its mean
  StepTimes step;                   // the synchronous step with the slowest of `gpus` ranks
  double tokens_per_iteration = 0;  // global batch · sequence length
  double iterations = 0;            // ⌈tokens / tokens_per_iteration⌉
  double checkpoint_bytes = 0;      // weights and optimizer state of the whole model (memory model)
  double checkpoint_write_s = 0;    // δ: checkpoint_bytes over every node writing at its bandwidth
  double restart_s = 0;             // R: the spec's restart time plus reading the checkpoint back
  double mtbf_s = 0;                // M: the job's mean time between interruptions (+inf: none)
  Goodput goodput;                  // at Daly's interval
  double useful_s = 0;              // iterations · mean step
  double wall_s = 0;                // useful_s / goodput.useful
  double gpu_hours = 0;
  std::optional<double> price_per_gpu_hour, cost_usd;
  BusyFractions busy;                            // of the simulated iteration (its timeline)
  PowerFigures power;                            // the figures used, and their source
  std::optional<double> gpu_power_w;             // one GPU while stepping
  std::optional<RunEnergy> energy;               // unset when a power figure is unknown
  std::optional<double> energy_per_iteration_j;  // facility energy of one mean step (all GPUs and nodes, PUE)
  std::optional<double> joules_per_token;
  model::OperationsSpec operations;  // the cluster's failure, checkpoint, spread, price and PUE inputs
  // How sure the simulated iteration is (model/accuracy.h): wall_s and gpu_hours scale with it.
  model::PredictionInterval interval;
  [[nodiscard]] bool feasible() const { return infeasible.empty(); }
};

// The choice among rows (indices into the rows). Cost is in dollars when every feasible row has a price,
// else in GPU-hours (by_dollars false).
struct Selection {
  bool by_dollars = false;
  std::optional<std::size_t> cheapest, fastest;     // over every feasible row
  std::optional<std::size_t> cheapest_in_deadline;  // with a deadline
  std::optional<std::size_t> fastest_in_budget;     // with a budget
  std::optional<std::size_t> chosen;                // the cheapest that meets every constraint given
  std::vector<std::size_t> pareto;                  // time against cost, fastest first
  // When constraints are given and no row meets them all: the row that misses them by the least (the
  // smallest of max(wall / deadline, cost / budget)), and by how much.
  std::optional<std::size_t> closest;
  std::string why;
};

// Pure: depends only on the rows' wall_s, cost_usd, gpu_hours and feasibility.
[[nodiscard]] Selection select_plans(const std::vector<PlanRow>& rows, std::optional<double> deadline_s,
                                     std::optional<double> budget_usd);

struct PlanResult {
  std::string workload_name;
  long seq = 0;
  double parameters = 0;
  PlanOptions options;
  std::vector<PlanRow> rows;  // in the order of the points
  Selection selection;
  std::size_t strategies_evaluated = 0, strategies_simulated = 0;
  double elapsed_s = 0;
};

// The run built on one simulated strategy (every figure of the row but the search's): pure given its
// inputs, exposed for `lagom simulate --tokens`. `timeline_result` must carry the timeline.
struct RunInputs {
  double tokens = 0;
  const model::WorkloadSpec* workload = nullptr;
  const model::ClusterSpec* cluster = nullptr;
  const model::CostModel* cost_model = nullptr;
  model::Strategy strategy;  // resolved
  const simulator::SimulationResult* timeline_result = nullptr;
};
[[nodiscard]] Result<PlanRow> plan_run(const RunInputs& inputs);

// invalid_input for tokens outside (0, k_max_tokens], a deadline or budget that is not positive, a budget
// when a cluster has no price, no points; explore's errors for its options.
Result<PlanResult> make_plan(const model::WorkloadSpec& workload, const std::vector<PlanPoint>& points,
                             const PlanOptions& options, Progress& progress);

}  // namespace lagom::plan
