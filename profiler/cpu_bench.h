// CPU measurements: GEMMs through Eigen (one thread: Eigen is built without OpenMP here) and a
// streaming memory kernel (STREAM's triad a = b + s·c, counted as 3 arrays moved per element, STREAM's
// convention). Timing: one warm-up call, then as many calls as fit the time budget (at least min_iters).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "db/database.h"

namespace lagom::profiler {

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
};

// Square and skinny shapes for the cpu backend's GEMM sweep.
std::vector<GemmShape> cpu_gemm_shapes(bool quick);
// Precisions the cpu backend measures.
std::vector<std::string> cpu_gemm_precisions();

struct TimingPolicy {
  int min_iters = 3;         // timed calls at least
  int max_iters = 100;       // and at most
  double target_us = 20000;  // time budget per measurement
};

// A reusable GEMM C = A·B of `shape` in `precision` ("fp32" | "fp64"), buffers allocated once.
// invalid_input for another precision.
Result<std::function<void()>> make_cpu_gemm(const std::string& precision, const GemmShape& shape);

// Times the GEMM: mean time of one call; tflops = 2mnk / time.
Result<db::ComputeSample> measure_cpu_gemm(const std::string& precision, const GemmShape& shape,
                                           const TimingPolicy& policy);

// Streaming triad over three arrays of `array_bytes` each; the sample keeps the best call's time (as
// STREAM does), bytes = 3 · array_bytes.
Result<db::ComputeSample> measure_memory_bandwidth(std::int64_t array_bytes, const TimingPolicy& policy);

// Mean time of `call` in µs under `policy` (one untimed warm-up call first).
double time_calls_us(const std::function<void()>& call, const TimingPolicy& policy,
                     double* best_us = nullptr);

}  // namespace lagom::profiler
