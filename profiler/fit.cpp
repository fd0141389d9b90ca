#include "profiler/fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/stats.h"
#include "model/collective_factors.h"

namespace lagom::profiler {

namespace {

// Physical bounds of a stored collective fit. Bus bandwidth: 10 TB/s, ten times the fastest GPU link
// shipping in 2026 (NVLink 5: 900 GB/s per direction per GPU); latency: one second per call.
constexpr double k_max_fitted_bus_bw_GBps = 10000;
constexpr double k_max_fitted_latency_us = 1e6;

double factor_of(const std::string& collective, int ranks) {
  const auto parsed = model::parse_collective(collective);
  return parsed ? model::busbw_factor(*parsed, std::max(ranks, 1)) : 1.0;
}

std::string series_name(const db::CommSample& s) {
  std::string name = s.collective + " ranks=" + std::to_string(s.ranks) + " nodes=" + std::to_string(s.nodes);
  if (!s.algo.empty()) name += " algo=" + s.algo;
  if (!s.proto.empty()) name += " proto=" + s.proto;
  if (s.channels > 0) name += " channels=" + std::to_string(s.channels);
  return name;
}

}  // namespace

Result<LineFit> fit_relative_line(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || std::set<double>(x.begin(), x.end()).size() < 2) {
    return make_error(ErrorCode::invalid_input, "needs at least 2 distinct sizes");
  }
  // Weighted least squares with w = 1/y²: minimises the sum of squared relative residuals.
  double sw = 0, swx = 0, swy = 0, swxx = 0, swxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(y[i] > 0) || !std::isfinite(y[i])) return make_error(ErrorCode::invalid_input, "non-positive time");
    const double w = 1.0 / (y[i] * y[i]);
    sw += w;
    swx += w * x[i];
    swy += w * y[i];
    swxx += w * x[i] * x[i];
    swxy += w * x[i] * y[i];
  }
  LineFit fit;
  const double det = sw * swxx - swx * swx;
  fit.slope = (sw * swxy - swx * swy) / det;
  fit.intercept = (swy - fit.slope * swx) / sw;
  // Standard error of the slope from the weighted residuals (n − 2 degrees of freedom).
  if (x.size() > 2 && fit.slope != 0) {
    double chi2 = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double r = fit.intercept + fit.slope * x[i] - y[i];
      chi2 += r * r / (y[i] * y[i]);
    }
    const double sigma2 = chi2 / static_cast<double>(x.size() - 2);
    fit.slope_rel_stderr = std::sqrt(sigma2 * sw / det) / std::fabs(fit.slope);
  }
  fit.intercept = std::max(fit.intercept, 0.0);
  std::vector<double> errors;
  for (std::size_t i = 0; i < x.size(); ++i) {
    errors.push_back(std::fabs(fit.intercept + fit.slope * x[i] - y[i]) / y[i]);
  }
  fit.rel_error = median(errors);
  return fit;
}

Result<db::CollectiveFitRecord> fit_collective_series(const std::vector<db::CommSample>& series) {
  if (series.empty()) return make_error(ErrorCode::invalid_input, "no samples");
  std::vector<double> x, y;
  db::CollectiveFitRecord fit;
  const db::CommSample& first = series.front();
  fit.collective = first.collective;
  fit.algo = first.algo;
  fit.proto = first.proto;
  fit.ranks = first.ranks;
  fit.nodes = first.nodes;
  fit.channels = first.channels;
  fit.min_bytes = first.bytes;
  fit.max_bytes = first.bytes;
  // Out-of-place and in-place calls can cost different amounts (MPI copies differently); the fit uses
  // the out-of-place samples, nccl-tests' first columns, and in-place ones only when there are no others.
  const bool any_out_of_place =
      std::any_of(series.begin(), series.end(), [](const auto& s) { return !s.in_place; });
  for (const auto& s : series) {
    if (s.wrong > 0 || !(s.time_us > 0)) continue;
    if (any_out_of_place && s.in_place) continue;
    x.push_back(static_cast<double>(s.bytes));
    y.push_back(s.time_us);
    fit.min_bytes = std::min(fit.min_bytes, s.bytes);
    fit.max_bytes = std::max(fit.max_bytes, s.bytes);
  }
  LAGOM_TRY(LineFit line, fit_relative_line(x, y));
  // One pass of outlier rejection: points off the first line by more than 3× its median relative error
  // (and by more than 10%) are dropped and the line refitted; rel_error stays over every point.
  std::vector<double> kept_x, kept_y;
  const double limit = std::max(3.0 * line.rel_error, 0.10);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::fabs(line.intercept + line.slope * x[i] - y[i]) / y[i] <= limit) {
      kept_x.push_back(x[i]);
      kept_y.push_back(y[i]);
    }
  }
  if (kept_x.size() < x.size()) {
    if (auto refit = fit_relative_line(kept_x, kept_y); refit.ok() && refit.value().slope > 0) {
      std::vector<double> errors;
      for (std::size_t i = 0; i < x.size(); ++i) {
        errors.push_back(std::fabs(refit.value().intercept + refit.value().slope * x[i] - y[i]) / y[i]);
      }
      line = refit.value();
      line.rel_error = median(errors);
    }
  }
  if (!(line.slope > 0)) return make_error(ErrorCode::invalid_input, "time does not grow with size");
  // slope is µs per byte of algbw: algbw_GBps = 1 / (slope · 1e3).
  const double algbw_GBps = 1.0 / (line.slope * 1e3);
  // A fit outside what hardware can do is never stored: the cost model would use it.
  const double bus_bw_GBps = algbw_GBps * factor_of(first.collective, first.ranks);
  if (!(bus_bw_GBps <= k_max_fitted_bus_bw_GBps) || !(line.intercept <= k_max_fitted_latency_us)) {
    return make_error(
        ErrorCode::invalid_input,
        fmt::format("the fit (busbw {:.4g} GB/s, latency {:.4g} µs) is outside physical bounds (busbw "
                    "<= {:g} GB/s, latency <= {:g} µs): the samples are no measurement of a link",
                    bus_bw_GBps, line.intercept, k_max_fitted_bus_bw_GBps, k_max_fitted_latency_us));
  }
  fit.latency_us = line.intercept;
  fit.bus_bw_GBps = bus_bw_GBps;
  fit.rel_error = line.rel_error;
  fit.samples = static_cast<int>(x.size());
  return fit;
}

namespace {

// The alpha-beta line of a fit: latency plus the bytes at the bus bandwidth's algorithm rate.
double alpha_beta_us(const std::string& collective, int ranks, double latency_us, double bus_bw_GBps,
                     std::int64_t bytes) {
  const double algbw_GBps = bus_bw_GBps / factor_of(collective, ranks);
  return latency_us + static_cast<double>(bytes) / (algbw_GBps * 1e3);
}

}  // namespace

double predict_time_us(const db::CollectiveFitRecord& fit, std::int64_t bytes) {
  return alpha_beta_us(fit.collective, fit.ranks, fit.latency_us, fit.bus_bw_GBps, bytes);
}

double predict_time_us(const model::CollectiveFit& fit, std::int64_t bytes) {
  return alpha_beta_us(fit.collective, fit.ranks, fit.latency_us, fit.bus_bw_GBps, bytes);
}

double predict_busbw_GBps(const db::CollectiveFitRecord& fit, std::int64_t bytes) {
  const double algbw_GBps = static_cast<double>(bytes) / (predict_time_us(fit, bytes) * 1e3);
  return algbw_GBps * factor_of(fit.collective, fit.ranks);
}

Result<db::GemmFitRecord> fit_gemm(const std::vector<db::ComputeSample>& samples) {
  std::vector<double> x, y;
  db::GemmFitRecord fit;
  for (const auto& s : samples) {
    if (s.kind != "gemm") continue;
    fit.precision = s.precision;
    x.push_back(2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k));
    y.push_back(s.time_us);
  }
  LAGOM_TRY(const LineFit line, fit_relative_line(x, y));
  if (!(line.slope > 0)) return make_error(ErrorCode::invalid_input, "time does not grow with FLOPs");
  // time_us = (flops + half) / (peak · 1e6): slope = 1 / (peak · 1e6), intercept = half · slope.
  fit.peak_tflops = 1.0 / (line.slope * 1e6);
  fit.half_flops = line.intercept / line.slope;
  fit.rel_error = line.rel_error;
  fit.samples = static_cast<int>(x.size());
  return fit;
}

double predict_tflops(const db::GemmFitRecord& fit, double flops) {
  return fit.peak_tflops * flops / (flops + fit.half_flops);
}

FitOutcome fit_run(const std::vector<db::CommSample>& comm, const std::vector<db::ComputeSample>& compute,
                   const std::vector<db::OverlapSample>& overlap) {
  FitOutcome outcome;
  using Key = std::tuple<std::string, std::string, std::string, int, int, int>;
  std::map<Key, std::vector<db::CommSample>> series;
  for (const auto& s : comm)
    series[{s.collective, s.algo, s.proto, s.ranks, s.nodes, s.channels}].push_back(s);
  for (const auto& [key, samples] : series) {
    auto fit = fit_collective_series(samples);
    if (fit.ok()) {
      outcome.fits.collectives.push_back(fit.value());
    } else {
      outcome.skipped.push_back(series_name(samples.front()) + ": " + fit.error().message);
    }
  }
  std::map<std::string, std::vector<db::ComputeSample>> gemms;
  std::map<std::int64_t, std::vector<double>> memory;
  for (const auto& s : compute) {
    if (s.kind == "gemm") gemms[s.precision].push_back(s);
    if (s.kind == "memory") memory[s.bytes].push_back(s.bw_GBps);
  }
  for (const auto& [precision, samples] : gemms) {
    auto fit = fit_gemm(samples);
    if (fit.ok()) {
      outcome.fits.gemms.push_back(fit.value());
    } else {
      outcome.skipped.push_back("gemm " + precision + ": " + fit.error().message);
    }
  }
  if (!memory.empty()) {
    // The largest size is the one least helped by caches.
    outcome.fits.scalars.push_back({"memory_bw_GBps", median(memory.rbegin()->second), 0});
  }
  if (!overlap.empty()) {
    std::vector<double> compute_slowdown, comm_slowdown;
    for (const auto& o : overlap) {
      // Only co-run cases ("gemm+<collective>") measure a slowdown pair; the FlashOverlap kernel cases
      // ("<kernel>/<method>", profiler/overlap.h) time a decomposed plan, whose makespan is no slowdown.
      if (o.name.find('/') != std::string::npos) continue;
      if (o.gemm_alone_us > 0) compute_slowdown.push_back(o.gemm_overlap_us / o.gemm_alone_us - 1.0);
      if (o.comm_alone_us > 0) comm_slowdown.push_back(o.comm_overlap_us / o.comm_alone_us - 1.0);
    }
    if (!compute_slowdown.empty())
      outcome.fits.scalars.push_back({"compute_slowdown", median(compute_slowdown), 0});
    if (!comm_slowdown.empty()) outcome.fits.scalars.push_back({"comm_slowdown", median(comm_slowdown), 0});
  }
  return outcome;
}

model::Calibration to_calibration(const db::FitSet& fits, std::int64_t run_id, const std::string& host) {
  model::Calibration calibration;
  calibration.run_id = run_id;
  calibration.host = host;
  for (const auto& f : fits.collectives) {
    model::CollectiveFit c;
    c.collective = f.collective;
    c.algo = f.algo;
    c.proto = f.proto;
    c.ranks = f.ranks;
    c.nodes = f.nodes;
    c.channels = f.channels;
    c.latency_us = f.latency_us;
    c.bus_bw_GBps = f.bus_bw_GBps;
    c.rel_error = f.rel_error;
    c.min_bytes = f.min_bytes;
    c.max_bytes = f.max_bytes;
    calibration.collectives.push_back(std::move(c));
  }
  for (const auto& f : fits.gemms) {
    calibration.gemms.push_back({f.precision, f.peak_tflops, f.half_flops, f.rel_error});
  }
  for (const auto& s : fits.scalars) {
    if (s.name == "memory_bw_GBps") calibration.memory_bw_GBps = s.value;
    if (s.name == "comm_slowdown") calibration.interference.comm_slowdown = s.value;
    if (s.name == "compute_slowdown") calibration.interference.compute_slowdown = s.value;
  }
  return calibration;
}

}  // namespace lagom::profiler
