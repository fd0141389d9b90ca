#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/overlap_data.h"
#include "kernels/thread_executor.h"
#include "model/overlap_plan.h"

using namespace lagom;
using namespace lagom::kernels;
using model::OverlapKernel;

namespace {

model::OverlapPlan plan_for(OverlapKernel kernel, const std::string& method, int ranks, std::int64_t m,
                            std::int64_t n, std::int64_t k) {
  model::OverlapRequest request;
  request.kernel = kernel;
  request.method = model::parse_overlap_method(method).value();
  request.ranks = ranks;
  request.m = m;
  request.n = n;
  request.k = k;
  auto plan = model::make_overlap_plan(request);
  REQUIRE(plan.ok());
  return std::move(plan).value();
}

BenchOptions quick() {
  BenchOptions options;
  options.reps = 1;
  options.warmup = 0;
  return options;
}

struct Run {
  BenchResult result;
  std::vector<float> y;
};

Run run(OverlapKernel kernel, const std::string& method, int ranks, std::int64_t m, std::int64_t n,
        std::int64_t k) {
  const model::OverlapPlan plan = plan_for(kernel, method, ranks, m, n, k);
  Run out;
  out.y.assign(static_cast<std::size_t>(m * n), std::numeric_limits<float>::quiet_NaN());
  auto result = run_threads(plan, quick(), out.y);
  REQUIRE(result.ok());
  out.result = *result;
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

const OverlapKernel k_kernels[] = {OverlapKernel::ag_gemm, OverlapKernel::gemm_rs, OverlapKernel::a2a};

}  // namespace

TEST_CASE("every kernel and method matches the fp64 reference within 1e-5 on random shapes and 1 to 8 ranks",
          "[kernels]") {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> dim(1, 72);
  for (int ranks = 1; ranks <= 8; ++ranks) {
    for (int trial = 0; trial < 2; ++trial) {
      const std::int64_t m = dim(random), n = dim(random), k = dim(random);
      for (OverlapKernel kernel : k_kernels) {
        for (const char* method : {"vanilla", "slice:2", "slice:3", "flash"}) {
          INFO(model::to_string(kernel)
               << " " << method << " P=" << ranks << " m=" << m << " n=" << n << " k=" << k);
          const Run r = run(kernel, method, ranks, m, n, k);
          CHECK(r.result.correct);
          CHECK(r.result.rel_error <= 1e-5);
          CHECK(r.result.max_abs_ref > 0);
          for (float v : r.y) REQUIRE(std::isfinite(v));  // every output element was written
        }
      }
    }
  }
}

TEST_CASE(
    "vanilla and flash agree bit for bit: the same per-piece GEMM calls and the same rank-order reduction",
    "[kernels]") {
  // vanilla issues its GEMM as the P piece calls flash makes, in a different order; gemm-rs sums the P
  // partials in rank order in both. Only the schedule differs, so the bits cannot.
  for (int ranks = 1; ranks <= 8; ++ranks) {
    for (OverlapKernel kernel : k_kernels) {
      INFO(model::to_string(kernel) << " P=" << ranks);
      const Run vanilla = run(kernel, "vanilla", ranks, 61, 45, 83);
      const Run flash = run(kernel, "flash", ranks, 61, 45, 83);
      CHECK(same_bits(vanilla.y, flash.y));
    }
  }
}

TEST_CASE("ag-gemm and a2a agree bit for bit for the same method: each output block is the same GEMM call",
          "[kernels]") {
  // ag-gemm's piece (o, i) on rank r and a2a's piece (r, i) on rank o multiply the same rows of X by the
  // same columns of W with the same call shape.
  for (const char* method : {"vanilla", "slice:3", "flash"}) {
    for (int ranks : {2, 3, 5}) {
      INFO(method << " P=" << ranks);
      CHECK(same_bits(run(OverlapKernel::ag_gemm, method, ranks, 90, 40, 70).y,
                      run(OverlapKernel::a2a, method, ranks, 90, 40, 70).y));
    }
  }
}

TEST_CASE("slice:K is checked against the reference only: its GEMM row blocks differ from vanilla's",
          "[kernels]") {
  // Eigen's blocking depends on the call's shape, so a row computed in a block of m/(P·K) rows may round
  // differently from the same row in a block of m/P rows; gemm-rs also splits k. Both stay within 1e-5.
  for (OverlapKernel kernel : k_kernels) {
    const Run vanilla = run(kernel, "vanilla", 4, 256, 96, 130);
    const Run sliced = run(kernel, "slice:4", 4, 256, 96, 130);
    double max_diff = 0, max_ref = 0;
    for (std::size_t e = 0; e < vanilla.y.size(); ++e) {
      max_diff = std::max(max_diff, static_cast<double>(std::fabs(vanilla.y[e] - sliced.y[e])));
      max_ref = std::max(max_ref, static_cast<double>(std::fabs(vanilla.y[e])));
    }
    CHECK(max_diff / max_ref <= 2e-5);
    CHECK(sliced.result.correct);
  }
}

TEST_CASE("a run is reproducible bit for bit", "[kernels]") {
  for (OverlapKernel kernel : k_kernels) {
    CHECK(same_bits(run(kernel, "slice:2", 3, 50, 33, 47).y, run(kernel, "slice:2", 3, 50, 33, 47).y));
  }
}

TEST_CASE("non-divisible shapes are padded and still match the reference", "[kernels]") {
  // m = 7 with P = 4 and K = 3 pads m to 12: some pieces are all padding, and rank 3 of gemm-rs owns none
  // of the real rows.
  for (OverlapKernel kernel : k_kernels) {
    INFO(model::to_string(kernel));
    const Run r = run(kernel, "slice:3", 4, 7, 5, 3);
    CHECK(r.result.correct);
    for (float v : r.y) CHECK(std::isfinite(v));
  }
}

TEST_CASE("a GEMM run before its data arrived poisons the output and fails the check", "[kernels]") {
  // Receive areas start as NaN. Computing every piece of rank 0 without communicating at all must show.
  const model::OverlapPlan plan = plan_for(OverlapKernel::ag_gemm, "flash", 2, 16, 8, 8);
  RankData data(plan, 0, 1);
  for (const model::PlanComputeOp& op : plan.ranks[0].compute) data.compute(op);
  CHECK(std::isinf(data.check_against_reference().max_abs_error));

  const model::OverlapPlan rs = plan_for(OverlapKernel::gemm_rs, "vanilla", 2, 16, 8, 8);
  RankData partial(rs, 1, 1);
  for (const model::PlanComputeOp& op : rs.ranks[1].compute) partial.compute(op);
  CHECK(std::isinf(partial.check_against_reference().max_abs_error));
}

TEST_CASE("the generated inputs are uniform in [-1, 1) and depend on the seed", "[kernels]") {
  double sum = 0;
  float lo = 1, hi = -1;
  for (int i = 0; i < 10000; ++i) {
    const float v = input_value(3, 0, i / 100, i % 100);
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  CHECK(lo >= -1.0f);
  CHECK(hi < 1.0f);
  CHECK(std::fabs(sum / 10000) < 0.03);
  CHECK(input_value(3, 0, 5, 5) != input_value(4, 0, 5, 5));
  CHECK(input_value(3, 0, 5, 5) != input_value(3, 1, 5, 5));
}
