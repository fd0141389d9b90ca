#include "profiler/cpu_bench.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <Eigen/Dense>

namespace lagom::profiler {

namespace {

template <typename Scalar>
std::function<void()> gemm_closure(const GemmShape& shape) {
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  struct Buffers {
    Matrix a, b, c;
  };
  auto buffers = std::make_shared<Buffers>();
  buffers->a = Matrix::Random(shape.m, shape.k);
  buffers->b = Matrix::Random(shape.k, shape.n);
  buffers->c = Matrix::Zero(shape.m, shape.n);
  return [buffers] { buffers->c.noalias() = buffers->a * buffers->b; };
}

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::vector<GemmShape> cpu_gemm_shapes(bool quick) {
  if (quick) return {{64, 64, 64}, {128, 128, 128}, {192, 192, 192}, {256, 256, 256}};
  return {{64, 64, 64},    {128, 128, 128},    {256, 256, 256},   {384, 384, 384},   {512, 512, 512},
          {768, 768, 768}, {1024, 1024, 1024}, {1024, 256, 1024}, {256, 1024, 1024}, {2048, 512, 512}};
}

std::vector<std::string> cpu_gemm_precisions() {
  return {"fp32", "fp64"};
}

double time_calls_us(const std::function<void()>& call, const TimingPolicy& policy, double* best_us) {
  double start = now_us();
  call();  // warm-up: page faults, caches
  const double first_us = std::max(now_us() - start, 0.01);
  const int iters =
      std::clamp(static_cast<int>(policy.target_us / first_us), policy.min_iters, policy.max_iters);
  double best = first_us;
  start = now_us();
  for (int i = 0; i < iters; ++i) {
    const double begin = now_us();
    call();
    best = std::min(best, now_us() - begin);
  }
  const double mean = (now_us() - start) / iters;
  if (best_us != nullptr) *best_us = best;
  return mean;
}

Result<std::function<void()>> make_cpu_gemm(const std::string& precision, const GemmShape& shape) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0)
    return make_error(ErrorCode::invalid_input, "GEMM shape must be positive");
  if (precision == "fp32") return gemm_closure<float>(shape);
  if (precision == "fp64") return gemm_closure<double>(shape);
  return make_error(ErrorCode::invalid_input,
                    "precision " + precision + ": the cpu backend measures fp32 and fp64");
}

Result<db::ComputeSample> measure_cpu_gemm(const std::string& precision, const GemmShape& shape,
                                           const TimingPolicy& policy) {
  LAGOM_TRY(auto gemm, make_cpu_gemm(precision, shape));
  db::ComputeSample sample;
  sample.kind = "gemm";
  sample.precision = precision;
  sample.m = shape.m;
  sample.n = shape.n;
  sample.k = shape.k;
  sample.time_us = time_calls_us(gemm, policy);
  const double flops =
      2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k);
  sample.tflops = flops / (sample.time_us * 1e6);
  return sample;
}

Result<db::ComputeSample> measure_memory_bandwidth(std::int64_t array_bytes, const TimingPolicy& policy) {
  const auto n = static_cast<std::size_t>(array_bytes / static_cast<std::int64_t>(sizeof(double)));
  if (n == 0)
    return make_error(ErrorCode::invalid_input, "memory bandwidth array must hold at least one double");
  std::vector<double> a(n, 0.0), b(n, 1.0), c(n, 2.0);
  const double scalar = 3.0;
  auto triad = [&] {
    double* __restrict pa = a.data();
    const double* __restrict pb = b.data();
    const double* __restrict pc = c.data();
    for (std::size_t i = 0; i < n; ++i) pa[i] = pb[i] + scalar * pc[i];
  };
  double best_us = 0;
  time_calls_us(triad, policy, &best_us);
  if (a[n / 2] != 7.0)
    return make_error(ErrorCode::failure, "memory bandwidth kernel computed a wrong value");
  db::ComputeSample sample;
  sample.kind = "memory";
  sample.bytes = 3 * static_cast<std::int64_t>(n * sizeof(double));
  sample.time_us = best_us;
  sample.bw_GBps = static_cast<double>(sample.bytes) / (best_us * 1e3);
  return sample;
}

}  // namespace lagom::profiler
