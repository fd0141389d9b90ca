#include "plan/formulas.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace lagom::plan {

namespace {

constexpr double k_inf = std::numeric_limits<double>::infinity();

// Φ(x) = ½·erfc(−x/√2), accurate in both tails.
double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::numbers::sqrt2);
}

}  // namespace

double young_interval_s(double checkpoint_s, double mtbf_s) {
  return std::sqrt(2.0 * checkpoint_s * mtbf_s);
}

double daly_interval_s(double checkpoint_s, double mtbf_s) {
  if (checkpoint_s >= 2.0 * mtbf_s) return mtbf_s;
  const double ratio = checkpoint_s / (2.0 * mtbf_s);
  return std::sqrt(2.0 * checkpoint_s * mtbf_s) * (1.0 + std::sqrt(ratio) / 3.0 + ratio / 9.0) - checkpoint_s;
}

Goodput goodput(double interval_s, double checkpoint_s, double restart_s, double mtbf_s) {
  Goodput g;
  g.interval_s = interval_s;
  if (!std::isfinite(mtbf_s)) {
    g.useful = interval_s / (interval_s + checkpoint_s);
    g.checkpoint = 1.0 - g.useful;
    return g;
  }
  // expm1 keeps (e^x − 1) exact for the small x of a rare failure; an overflow means no progress at all.
  const double segments = std::expm1((interval_s + checkpoint_s) / mtbf_s);
  const double wall_per_useful = mtbf_s * std::exp(restart_s / mtbf_s) * segments / interval_s;
  g.restart = -std::expm1(-restart_s / mtbf_s);
  g.useful = std::isfinite(wall_per_useful) && wall_per_useful > 0 ? 1.0 / wall_per_useful : 0.0;
  g.checkpoint = g.useful * checkpoint_s / interval_s;
  g.lost = std::max(0.0, 1.0 - g.useful - g.checkpoint - g.restart);
  return g;
}

double job_mtbf_s(double failures_per_gpu_hour, long gpus) {
  const double per_hour = failures_per_gpu_hour * static_cast<double>(gpus);
  return per_hour > 0 ? 3600.0 / per_hour : k_inf;
}

Goodput goodput_at_daly_interval(double checkpoint_s, double restart_s, double mtbf_s) {
  if (!std::isfinite(mtbf_s)) {
    Goodput g;
    g.interval_s = k_inf;
    return g;
  }
  return goodput(daly_interval_s(checkpoint_s, mtbf_s), checkpoint_s, restart_s, mtbf_s);
}

double inverse_normal_cdf(double p) {
  if (p <= 0) return -k_inf;
  if (p >= 1) return k_inf;
  // Φ is increasing; |Φ⁻¹(p)| < 40 for every double p in (0, 1) (Φ(−40) underflows to 0).
  double lo = -40, hi = 40;
  while (hi - lo > 1e-12) {
    const double mid = 0.5 * (lo + hi);
    (normal_cdf(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double expected_max_std_normal(long n) {
  if (n <= 1) return 0.0;
  // Simpson's rule on [−12, 12]: beyond it φ(x) < 1e-31, and for n up to 2^20 the mass of the max sits
  // below x = 6. Φ(x)^{n−1} = exp((n−1)·log Φ(x)) stays finite where Φ(x)^{n−1} underflows to 0.
  constexpr int k_intervals = 24000;  // even; step 0.001
  constexpr double lo = -12.0, hi = 12.0;
  const double h = (hi - lo) / k_intervals;
  const double m = static_cast<double>(n);
  auto f = [&](double x) {
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
    return x * m * pdf * std::exp((m - 1.0) * std::log(normal_cdf(x)));
  };
  double sum = f(lo) + f(hi);
  for (int i = 1; i < k_intervals; ++i) sum += (i % 2 == 1 ? 4.0 : 2.0) * f(lo + i * h);
  return sum * h / 3.0;
}

double quantile_max_std_normal(long n, double q) {
  return inverse_normal_cdf(std::pow(q, 1.0 / static_cast<double>(std::max(1L, n))));
}

StepTimes straggler_step(double step_s, double cv, long ranks) {
  StepTimes t;
  t.mean_s = step_s * (1.0 + cv * expected_max_std_normal(ranks));
  t.p50_s = step_s * (1.0 + cv * quantile_max_std_normal(ranks, 0.50));
  t.p99_s = step_s * (1.0 + cv * quantile_max_std_normal(ranks, 0.99));
  return t;
}

double gpu_power_w(double idle_w, double full_w, double busy) {
  return idle_w + (full_w - idle_w) * std::clamp(busy, 0.0, 1.0);
}

RunEnergy run_energy(const PowerSpec& power, long gpus, long nodes, double stepping_s, double waiting_s,
                     double busy) {
  RunEnergy e;
  const double n = static_cast<double>(gpus);
  e.gpu_j =
      n * (gpu_power_w(power.gpu_idle_w, power.gpu_full_w, busy) * stepping_s + power.gpu_idle_w * waiting_s);
  e.node_j = static_cast<double>(nodes) * power.node_overhead_w * (stepping_s + waiting_s);
  e.facility_j = (e.gpu_j + e.node_j) * power.pue;
  return e;
}

double gpu_hours(long gpus, double wall_s) {
  return static_cast<double>(gpus) * wall_s / 3600.0;
}

double run_cost(long gpus, double wall_s, double price_per_gpu_hour) {
  return gpu_hours(gpus, wall_s) * price_per_gpu_hour;
}

}  // namespace lagom::plan
