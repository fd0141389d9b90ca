// Fits of the cost model's parameters from measured samples (pure functions, no I/O).
//
// Collectives: the alpha-beta model time_us(bytes) = latency_us + bytes / (algbw · 1e3), with
// algbw = bus_bw_GBps / busbw_factor(collective, ranks) (model/collective_factors.h), fitted per series
// (collective, algo, proto, ranks, nodes, channels) by least squares on *relative* residuals, since sizes
// span several decades and a plain fit would ignore every small size, with one pass of outlier rejection.
// Samples whose data check failed (wrong > 0) are left out, and so are in-place samples when the series
// has out-of-place ones (MPI prices the two differently; nccl-tests' first columns are out-of-place). GEMMs:
// achieved = peak · flops / (flops + half_flops) is the same line, time_us = (flops + half_flops) /
// (peak_tflops · 1e6), fitted per precision. Memory bandwidth: the median bandwidth of the largest streaming
// size. Overlap: the median fractional slowdowns of each side.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "db/database.h"
#include "model/calibration.h"

namespace lagom::profiler {

// A line y = intercept + slope · x fitted on points (x, y > 0) by minimising Σ ((y − ŷ) / y)²; a negative
// intercept is clamped to 0 (and the slope refitted), since a latency cannot be negative.
struct LineFit {
  double intercept = 0;
  double slope = 0;
  double rel_error = 0;         // median |ŷ − y| / y over the points
  double slope_rel_stderr = 0;  // the slope's standard error over the slope (0 with 2 points: unknown)
};
// Weighted least squares on relative residuals. A negative intercept (a shaped link's token-bucket burst
// lets the smallest sizes through faster than the rate) is reported as 0 with the slope kept: the slope
// is what the size dependence measures, and forcing the line through the origin would bend it.
// invalid_input when fewer than 2 distinct x or a non-positive y.
Result<LineFit> fit_relative_line(const std::vector<double>& x, const std::vector<double>& y);

// One collective series' fit; invalid_input when it has < 2 sizes or time does not grow with size.
Result<db::CollectiveFitRecord> fit_collective_series(const std::vector<db::CommSample>& series);
// time_us the fit predicts for `bytes` (nccl-tests bytes) and the busbw that follows from it.
double predict_time_us(const db::CollectiveFitRecord& fit, std::int64_t bytes);
double predict_time_us(const model::CollectiveFit& fit, std::int64_t bytes);  // the model's view of a fit
double predict_busbw_GBps(const db::CollectiveFitRecord& fit, std::int64_t bytes);

// GEMM fit of one precision's gemm samples.
Result<db::GemmFitRecord> fit_gemm(const std::vector<db::ComputeSample>& samples);
// tflops the GEMM fit predicts for a GEMM of `flops` FLOPs.
double predict_tflops(const db::GemmFitRecord& fit, double flops);

// Everything that can be fitted from a run's samples; series that cannot be fitted are reported in
// `skipped` (one line each: "<series>: <why>").
struct FitOutcome {
  db::FitSet fits;
  std::vector<std::string> skipped;
};
FitOutcome fit_run(const std::vector<db::CommSample>& comm, const std::vector<db::ComputeSample>& compute,
                   const std::vector<db::OverlapSample>& overlap);

// Converts stored fits into the cost model's plain struct.
model::Calibration to_calibration(const db::FitSet& fits, std::int64_t run_id, const std::string& host);

}  // namespace lagom::profiler
