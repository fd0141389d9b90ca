// plan/formulas.h pinned to hand-derived numbers (docs/plan.md works the same examples), and the monotonic
// properties of goodput and cost over random inputs.
#include <cmath>
#include <limits>
#include <random>

#include <catch2/catch.hpp>

#include "plan/formulas.h"
#include "plan/quantities.h"

using namespace lagom;
using namespace lagom::plan;

TEST_CASE("Young's interval is sqrt(2 delta M) and Daly's adds his higher-order terms", "[plan]") {
  // δ = 100 s, M = 20000 s: √(2·100·20000) = √(4·10^6) = 2000 s.
  CHECK(young_interval_s(100, 20000) == Approx(2000).epsilon(1e-12));
  // δ/(2M) = 0.0025, √ = 0.05: 2000·(1 + 0.05/3 + 0.0025/9) − 100 = 2033.8889 − 100 = 1933.8889 s.
  CHECK(daly_interval_s(100, 20000) == Approx(1933.888888888889).epsilon(1e-12));
  // δ >= 2M: Daly checkpoints every M.
  CHECK(daly_interval_s(500, 200) == 200);
}

TEST_CASE("goodput at a given interval splits the wall time into Daly's useful, checkpoint, restart and lost",
          "[plan]") {
  // τ = 1933.8889 s, δ = 100 s, R = 300 s, M = 20000 s. (τ+δ)/M = 0.10169444, e^that − 1 = 0.10704442;
  // e^{R/M} = e^0.015 = 1.01511306; T_w/T_s = 20000·1.01511306·0.10704442/1933.8889 = 1.12377660, so
  // useful = 0.88985672; checkpoint = useful·100/1933.8889 = 0.04601385; restart = 1 − e^−0.015 = 0.01488806;
  // lost = 1 − the three = 0.04924137.
  const Goodput g = goodput(1933.888888888889, 100, 300, 20000);
  CHECK(g.useful == Approx(0.8898567208107686).epsilon(1e-12));
  CHECK(g.checkpoint == Approx(0.04601384939555827).epsilon(1e-12));
  CHECK(g.restart == Approx(0.014888060396937339).epsilon(1e-12));
  CHECK(g.lost == Approx(0.049241369396735776).epsilon(1e-9));
  CHECK(g.useful + g.checkpoint + g.restart + g.lost == Approx(1.0).epsilon(1e-12));
  // At Daly's interval, the same.
  CHECK(goodput_at_daly_interval(100, 300, 20000).useful == Approx(0.8898567208107686).epsilon(1e-12));
}

TEST_CASE("the Llama 3 failure rate gives one interruption every 3.1 hours on 16,384 GPUs", "[plan]") {
  // 419 / (54·24·16384) = 1.97328e-5 per GPU-hour; · 16384 = 0.32330 per hour; 3600 / 0.32330 = 11135 s.
  const double rate = 419.0 / (54.0 * 24.0 * 16384.0);
  CHECK(rate == Approx(1.9732816719714506e-05).epsilon(1e-12));
  CHECK(job_mtbf_s(rate, 16384) == Approx(11135.08353221957).epsilon(1e-12));
  CHECK(std::isinf(job_mtbf_s(0, 16384)));
  const Goodput none = goodput_at_daly_interval(100, 300, std::numeric_limits<double>::infinity());
  CHECK(none.useful == 1.0);
  CHECK(none.lost == 0.0);
}

TEST_CASE("a run whose failures outpace its restarts makes no progress", "[plan]") {
  // M = 1 s against R = 10^4 s: e^{R/M} overflows, useful is 0 rather than NaN.
  const Goodput g = goodput_at_daly_interval(100, 1e4, 1);
  CHECK(g.useful == 0.0);
  CHECK(g.restart == Approx(1.0));
}

TEST_CASE("the expected slowest of N standard normals matches its closed forms", "[plan]") {
  CHECK(expected_max_std_normal(1) == 0.0);
  // E[max of 2] = 1/√π, E[max of 3] = 3/(2√π) (David & Nagaraja, Order Statistics, 3rd ed., ex. 3.2).
  CHECK(expected_max_std_normal(2) == Approx(0.5641895835477563).margin(1e-7));
  CHECK(expected_max_std_normal(3) == Approx(0.8462843753216345).margin(1e-7));
  // Tabulated: E[max of 5] = 1.16296, of 10 = 1.53875, of 100 = 2.50759 (Harter 1961, Biometrika 48:151).
  CHECK(expected_max_std_normal(5) == Approx(1.16296).margin(1e-5));
  CHECK(expected_max_std_normal(10) == Approx(1.53875).margin(1e-5));
  CHECK(expected_max_std_normal(100) == Approx(2.50759).margin(1e-5));
  // More ranks, a slower slowest.
  CHECK(expected_max_std_normal(16384) > expected_max_std_normal(1024));
}

TEST_CASE("the step's p50 and p99 are quantiles of the slowest rank", "[plan]") {
  // One rank: Φ⁻¹(0.99) = 2.3263479. Two: p50 at Φ⁻¹(√0.5) = 0.5449521, p99 at Φ⁻¹(√0.99) = 2.5749615.
  CHECK(inverse_normal_cdf(0.99) == Approx(2.3263478740408408).margin(1e-9));
  CHECK(quantile_max_std_normal(2, 0.5) == Approx(0.5449521356173603).margin(1e-9));
  const StepTimes t = straggler_step(10.0, 0.01, 2);
  CHECK(t.mean_s == Approx(10.0 * (1 + 0.01 * 0.5641895835477563)).epsilon(1e-9));
  CHECK(t.p50_s == Approx(10.0 * (1 + 0.01 * 0.5449521356173603)).epsilon(1e-9));
  CHECK(t.p99_s == Approx(10.0 * (1 + 0.01 * 2.574961455590522)).epsilon(1e-9));
  const StepTimes one = straggler_step(10.0, 0.01, 1);
  CHECK(one.mean_s == 10.0);
  CHECK(one.p50_s == Approx(10.0).margin(1e-9));
}

TEST_CASE("energy of a run interpolates GPU power by busy time and adds nodes and PUE", "[plan]") {
  // Busy 0.85 between 100 W idle and 700 W full: 100 + 600·0.85 = 610 W.
  CHECK(gpu_power_w(100, 700, 0.85) == Approx(610));
  // 16 GPUs on 2 nodes, 1000 s stepping, 100 s waiting, 4600 W per node, PUE 1.1:
  // GPUs 16·(610·1000 + 100·100) = 9.92 MJ; nodes 2·4600·1100 = 10.12 MJ; (9.92 + 10.12)·1.1 = 22.044 MJ.
  const RunEnergy e = run_energy({100, 700, 4600, 1.1}, 16, 2, 1000, 100, 0.85);
  CHECK(e.gpu_j == Approx(9.92e6));
  CHECK(e.node_j == Approx(10.12e6));
  CHECK(e.facility_j == Approx(22.044e6));
}

TEST_CASE("the cost of a run is its GPU-hours times the price", "[plan]") {
  // 1024 GPUs for 30 days: 1024·720 = 737,280 GPU-hours; at $2.50, $1,843,200.
  CHECK(gpu_hours(1024, 30 * 86400.0) == Approx(737280));
  CHECK(run_cost(1024, 30 * 86400.0, 2.5) == Approx(1843200));
}

TEST_CASE("more failures never raise goodput, a higher price never lowers cost (random inputs)", "[plan]") {
  std::mt19937_64 rng(20240728);
  std::uniform_real_distribution<double> log10(-1, 5);
  auto draw = [&] { return std::pow(10.0, log10(rng)); };
  for (int i = 0; i < 20000; ++i) {
    const double delta = draw(), restart = draw(), m1 = draw(), m2 = draw();
    const double fewer = std::max(m1, m2), more = std::min(m1, m2);  // more failures: a shorter MTBF
    const Goodput a = goodput_at_daly_interval(delta, restart, fewer);
    const Goodput b = goodput_at_daly_interval(delta, restart, more);
    INFO("delta " << delta << " restart " << restart << " mtbf " << fewer << " -> " << more);
    REQUIRE(b.useful <= a.useful * (1 + 1e-12));
    REQUIRE(b.lost >= 0);
    REQUIRE(b.useful + b.checkpoint + b.restart + b.lost == Approx(1.0).margin(1e-9));
    const long gpus = 1 + static_cast<long>(draw());
    const double wall = draw(), p1 = draw(), p2 = draw();
    REQUIRE(run_cost(gpus, wall, std::max(p1, p2)) >= run_cost(gpus, wall, std::min(p1, p2)));
  }
}

TEST_CASE("plan's quantities: token counts, durations, GPU lists and ranges", "[plan]") {
  CHECK(parse_quantity("15T").value() == 15e12);
  CHECK(parse_quantity("2.5M").value() == 2.5e6);
  CHECK(parse_quantity("300").value() == 300);
  CHECK(!parse_quantity("-1").ok());
  CHECK(!parse_quantity("15X").ok());
  CHECK(!parse_quantity("nan").ok());
  CHECK(parse_quantity("1e30").value() == 1e30);  // a number; make_plan bounds tokens
  CHECK(parse_duration_s("60d").value() == 60 * 86400.0);
  CHECK(parse_duration_s("36h").value() == 36 * 3600.0);
  CHECK(parse_duration_s("90").value() == 90 * 86400.0);
  CHECK(parse_duration_s("0").error().message ==
        "'0' is not a positive duration such as 60d, 36h, 90m, 2w (a bare number: days)");
  CHECK(parse_gpu_counts("256..2048", 1 << 20).value() == std::vector<int>{256, 512, 1024, 2048});
  CHECK(parse_gpu_counts("3000..8192", 1 << 20).value() == std::vector<int>{3000, 6000, 8192});
  CHECK(parse_gpu_counts("2048,1024,1024", 1 << 20).value() == std::vector<int>{1024, 2048});
  CHECK(parse_gpu_counts("0", 1 << 20).error().message == "'0' is not a GPU count within 1..1048576");
  CHECK(!parse_gpu_counts("64..32", 1 << 20).ok());
  CHECK(!parse_gpu_counts("8,", 1 << 20).ok());
}
