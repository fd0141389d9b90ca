// The run-level formulas of `lagom plan` (docs/plan.md derives each one and works an example by hand):
// checkpoint interval and goodput under failures (Young 1974, Daly 2006), the slowest of N ranks' step times
// (order statistics of a normal spread), GPU power interpolated by busy time, a run's energy and cost. Pure
// functions of numbers: no model, no simulator, so tests pin them to hand-derived values.
//
// Units are in the names: _s seconds, _w watts, _j joules, per_hour per hour of wall-clock time.
#pragma once

namespace lagom::plan {

// --- Failures and checkpoints -------------------------------------------------------------------------
// Symbols (Daly 2006, "A higher order estimate of the optimum checkpoint interval for restart dumps", Future
// Generation Computer Systems 22(3):303-312): M the job's mean time between interruptions, δ the time to
// write one checkpoint, R the time to restart (failures may strike during it), τ the compute time between
// two checkpoints. Interruptions are a Poisson process of rate 1/M over wall-clock time.

// Young's first-order optimum (Young 1974, "A first order approximation to the optimum checkpoint interval",
// CACM 17(9):530): τ = √(2·δ·M).
[[nodiscard]] double young_interval_s(double checkpoint_s, double mtbf_s);

// Daly's higher-order estimate of the optimum of the model below (Daly 2006): for δ < 2M,
//   τ = √(2δM)·[1 + ⅓·√(δ/(2M)) + ⅑·(δ/(2M))] − δ;  for δ >= 2M, τ = M.
// This is the interval `lagom plan` checkpoints at.
[[nodiscard]] double daly_interval_s(double checkpoint_s, double mtbf_s);

// Where the wall-clock time of a run goes, as fractions that sum to 1.
struct Goodput {
  double interval_s = 0;  // τ used
  double useful = 1;      // computing steps that are kept (the goodput)
  double checkpoint = 0;  // writing checkpoints that complete
  double restart = 0;     // restarting after interruptions
  double lost = 0;        // work (and checkpoint writes) done since the last checkpoint, lost at a failure
};

// Daly's expected wall-clock time for T_s of useful work (Daly 2006, failures during restart
// included): T_w = M·e^{R/M}·(e^{(τ+δ)/M} − 1)·T_s/τ, so
//   useful = τ / (M·e^{R/M}·(e^{(τ+δ)/M} − 1)),   checkpoint = useful·δ/τ (each kept interval writes one),
//   restart = 1 − e^{−R/M} (failures arrive at rate 1/M, each starts a restart attempt that lasts
//   M·(1 − e^{−R/M}) on average), lost = the rest (>= 0: docs/plan.md).
// mtbf_s = +inf (no failures): useful = τ/(τ+δ) with τ = interval_s. A run that cannot progress (the
// exponentials overflow) has useful 0.
[[nodiscard]] Goodput goodput(double interval_s, double checkpoint_s, double restart_s, double mtbf_s);

// The job's mean time between interruptions: 3600 / (failures per GPU-hour · GPUs); +inf for rate 0.
[[nodiscard]] double job_mtbf_s(double failures_per_gpu_hour, long gpus);

// Goodput at Daly's interval; with no failures (mtbf_s = +inf) no checkpoint is needed: useful = 1.
[[nodiscard]] Goodput goodput_at_daly_interval(double checkpoint_s, double restart_s, double mtbf_s);

// --- Stragglers ---------------------------------------------------------------------------------------
// Each of N ranks' step times is T·(1 + cv·Z_i), Z_i independent standard normals, and a synchronous step
// lasts as long as the slowest: T·(1 + cv·max_i Z_i). P(max Z <= x) = Φ(x)^N.

// Φ⁻¹(p) for p in (0, 1) (bisection on std::erfc to 1e-12).
[[nodiscard]] double inverse_normal_cdf(double p);
// E[max of n standard normals] = ∫ x·n·φ(x)·Φ(x)^{n−1} dx (Simpson's rule on [−12, 12], 1e-7 absolute):
// 0 for n = 1, 1/√π for n = 2, 3/(2√π) for n = 3.
[[nodiscard]] double expected_max_std_normal(long n);
// The q-quantile of the max of n standard normals: Φ⁻¹(q^{1/n}).
[[nodiscard]] double quantile_max_std_normal(long n, double q);

struct StepTimes {
  double mean_s = 0, p50_s = 0, p99_s = 0;
};
// The synchronous step of `ranks` ranks whose own step is step_s with spread cv (coefficient of variation).
[[nodiscard]] StepTimes straggler_step(double step_s, double cv, long ranks);

// --- Energy and cost ----------------------------------------------------------------------------------
// One GPU's power when it runs a task `busy` of the time (0..1) and idles the rest: linear between the idle
// and the full-load figures, P = idle + (full − idle)·busy.
[[nodiscard]] double gpu_power_w(double idle_w, double full_w, double busy);

struct PowerSpec {
  double gpu_idle_w = 0, gpu_full_w = 0;  // per GPU
  double node_overhead_w = 0;             // per node, beside the GPUs
  double pue = 1;                         // facility power over IT power (>= 1)
};

struct RunEnergy {
  double gpu_j = 0;       // the GPUs: stepping at their busy power, idle while checkpointing and restarting
  double node_j = 0;      // the nodes' other parts, all the time
  double facility_j = 0;  // (gpu + node)·PUE: what the run draws
};
// stepping_s: wall time spent running steps (kept and lost ones); waiting_s: writing checkpoints and
// restarting, when the GPUs idle. busy: the GPUs' busy fraction while stepping.
[[nodiscard]] RunEnergy run_energy(const PowerSpec& power, long gpus, long nodes, double stepping_s,
                                   double waiting_s, double busy);

// GPU-hours of `gpus` GPUs held for wall_s seconds, and their price.
[[nodiscard]] double gpu_hours(long gpus, double wall_s);
[[nodiscard]] double run_cost(long gpus, double wall_s, double price_per_gpu_hour);

}  // namespace lagom::plan
