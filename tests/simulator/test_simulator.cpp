#include <catch2/catch.hpp>

#include "fake_costs.h"
#include "simulator/simulator.h"
#include "simulator/trace.h"

using namespace lagom;
using lagom::test::fake_cluster;
using lagom::test::fake_strategy;
using lagom::test::fake_workload;
using lagom::test::FakeCosts;

namespace {

simulator::SimulationResult run(const model::WorkloadSpec& w, const model::Strategy& s,
                                const FakeCosts& costs, bool timeline = false,
                                const simulator::CommAssignment& a = {}) {
  simulator::SimulateOptions options;
  options.timeline = timeline;
  auto result = simulator::simulate(w, fake_cluster(), s, costs, a, options);
  if (!result.ok()) FAIL(result.error().message);
  return std::move(result).value();
}

void check_adds_up(const simulator::SimulationResult& r) {
  CHECK(r.breakdown.total_s() == Approx(r.iteration_time_s).epsilon(1e-12));
  for (const auto& stage : r.stages) CHECK(stage.total_s() == Approx(r.iteration_time_s).epsilon(1e-12));
}

}  // namespace

TEST_CASE("1f1b without communication has a bubble of (p−1)/m of the ideal time", "[simulator]") {
  // 8 layers over p = 4 stages: 2 layers per stage, F = 200 µs, B = 400 µs per micro-batch; m = 8.
  // Each stage computes m·(F+B) = 4800 µs; the iteration takes (m + p − 1)·(F+B) = 6600 µs.
  FakeCosts costs;
  costs.optimizer_us_per_mparam = 0;
  const auto r = run(fake_workload(8), fake_strategy(4, 1, 1, 8), costs);
  CHECK(r.iteration_time_s == Approx(6600e-6).epsilon(1e-12));
  CHECK(r.breakdown.compute_s == Approx(4800e-6).epsilon(1e-12));
  CHECK(r.breakdown.pipeline_bubble_s / r.breakdown.compute_s == Approx(3.0 / 8.0).epsilon(1e-12));
  CHECK(r.breakdown.exposed_comm_s == 0);
  check_adds_up(r);
}

TEST_CASE("gpipe without communication takes (m + p − 1)·(F + B) too", "[simulator]") {
  FakeCosts costs;
  costs.optimizer_us_per_mparam = 0;
  auto s = fake_strategy(4, 1, 1, 8);
  s.schedule = model::Schedule::gpipe;
  const auto r = run(fake_workload(8), s, costs);
  CHECK(r.iteration_time_s == Approx(6600e-6).epsilon(1e-12));
}

TEST_CASE("interleaving v chunks divides the 1f1b bubble by v", "[simulator]") {
  // 16 layers, p = 4, v = 2: 2 layers per chunk, F+B per chunk = 600 µs, per stage and micro-batch 1200 µs.
  // Bubble of interleaved 1F1B (Narayanan et al. SC'21): (p−1)/v · (F+B of a stage) = 1.5 · 1200 µs.
  FakeCosts costs;
  costs.optimizer_us_per_mparam = 0;
  const auto r = run(fake_workload(16), fake_strategy(4, 2, 1, 8), costs);
  CHECK(r.breakdown.compute_s == Approx(8 * 1200e-6).epsilon(1e-12));
  CHECK(r.breakdown.pipeline_bubble_s == Approx(1.5 * 1200e-6).epsilon(1e-12));
  check_adds_up(r);
}

TEST_CASE("the compute stream's busy time equals compute plus optimizer", "[simulator]") {
  FakeCosts costs;
  costs.compute_slowdown = 1.3;  // DP buckets overlap the backward and slow it
  costs.comm_slowdown = 1.1;
  auto s = fake_strategy(2, 1, 4, 4);
  s.bucket_mb = 1;
  const auto r = run(fake_workload(4), s, costs, true);
  check_adds_up(r);
  for (int stage = 0; stage < 2; ++stage) {
    double busy_us = 0;
    for (const auto& e : r.timeline) {
      if (e.stage == stage && e.stream == simulator::StreamKind::compute && e.category != "bubble")
        busy_us += e.duration_us;
    }
    const auto& b = r.stages[static_cast<std::size_t>(stage)];
    CHECK(busy_us * 1e-6 == Approx(b.compute_s + b.optimizer_s).epsilon(1e-9));
  }
  // Contention made compute slower than alone: 2 layers × 300 µs × 4 micro-batches per stage.
  CHECK(r.breakdown.compute_s > 2400e-6);
}

TEST_CASE("gradient buckets overlapped with the backward expose less communication than after it",
          "[simulator]") {
  FakeCosts costs;
  auto s = fake_strategy(1, 1, 8, 2);
  s.bucket_mb = 1;
  const auto w = fake_workload(8);
  const auto overlapped = run(w, s, costs);
  s.dp_overlap = false;
  const auto after = run(w, s, costs);
  // 8 layers × 1e6 params × 2 bytes = 16 MB at 10 GB/s = 1600 µs of all-reduce when serial.
  CHECK(after.breakdown.exposed_comm_s == Approx(1600e-6).epsilon(1e-9));
  CHECK(overlapped.breakdown.exposed_comm_s < after.breakdown.exposed_comm_s);
  CHECK(overlapped.iteration_time_s < after.iteration_time_s);
  check_adds_up(overlapped);
  check_adds_up(after);
}

TEST_CASE("blocking TP collectives inside a layer count as exposed communication", "[simulator]") {
  FakeCosts costs;
  costs.tp = 2;
  costs.optimizer_us_per_mparam = 0;
  auto s = fake_strategy(1, 1, 1, 1);
  s.tp = 2;
  s.gpus = 2;
  const auto r = run(fake_workload(1), s, costs);
  // 4 all-reduces of 100000 bytes at 10 GB/s = 4 × 10 µs; compute 100 + 200 µs.
  CHECK(r.breakdown.compute_s == Approx(300e-6).epsilon(1e-12));
  CHECK(r.breakdown.exposed_comm_s == Approx(40e-6).epsilon(1e-12));
  CHECK(r.iteration_time_s == Approx(340e-6).epsilon(1e-12));
  REQUIRE(r.op_classes.size() == 1);
  CHECK(r.op_classes[0].count == 4);
}

TEST_CASE("ZeRO-3 gathers parameters before every layer and reduce-scatters after every backward",
          "[simulator]") {
  FakeCosts costs;
  auto s = fake_strategy(1, 1, 4, 2);
  s.zero = 3;
  const auto r = run(fake_workload(4), s, costs);
  double gathers = 0, scatters = 0;
  for (const auto& c : r.op_classes) {
    if (c.key.collective == model::Collective::allgather) gathers += c.count;
    if (c.key.collective == model::Collective::reducescatter) scatters += c.count;
  }
  CHECK(gathers == 4 * 2 * 2);  // layers × micro-batches × (forward, backward)
  CHECK(scatters == 4 * 2);
  check_adds_up(r);
}

TEST_CASE("a knob assignment changes the price of exactly its op class", "[simulator]") {
  FakeCosts costs;
  costs.tp = 2;
  auto s = fake_strategy(1, 1, 1, 1);
  s.tp = 2;
  s.gpus = 2;
  const auto base = run(fake_workload(1), s, costs);
  simulator::CommAssignment a;
  model::CollConfig config;
  config.channels = 16;  // the fake doubles bandwidth at 16 channels
  a.per_class.push_back({base.op_classes.at(0).key, config});
  const auto tuned = run(fake_workload(1), s, costs, false, a);
  CHECK(tuned.op_classes.at(0).time_us == Approx(base.op_classes.at(0).time_us / 2).epsilon(1e-12));
  CHECK(tuned.breakdown.exposed_comm_s == Approx(20e-6).epsilon(1e-12));
}

TEST_CASE("tp overlap without sequence parallelism is refused with the reason", "[simulator]") {
  FakeCosts costs;
  costs.tp = 2;
  auto s = fake_strategy(1, 1, 1, 1);
  s.tp = 2;
  s.tp_overlap = {model::OverlapMethodKind::flash, 1};
  const auto r = simulator::simulate(fake_workload(1), fake_cluster(), s, costs);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        "tp-overlap flash needs --sp (the overlapped kernels are all-gather+GEMM and GEMM+reduce-scatter)");
}

TEST_CASE("flash tp overlap hides communication that sequence parallelism exposes", "[simulator]") {
  FakeCosts costs;
  costs.tp = 4;
  costs.sp = true;
  costs.tp_bytes = 400000;  // 40 µs per collective beside 20–40 µs GEMMs
  auto s = fake_strategy(1, 1, 1, 1);
  s.tp = 4;
  s.sp = true;
  const auto plain = run(fake_workload(2), s, costs);
  s.tp_overlap = {model::OverlapMethodKind::flash, 1};
  const auto flash = run(fake_workload(2), s, costs);
  CHECK(flash.breakdown.exposed_comm_s < plain.breakdown.exposed_comm_s);
  CHECK(flash.breakdown.compute_s == Approx(plain.breakdown.compute_s).epsilon(1e-12));
}

TEST_CASE("the trace has one process per stage and valid complete events", "[simulator]") {
  FakeCosts costs;
  costs.pp_bytes = 100000;
  const auto r = run(fake_workload(4), fake_strategy(2, 1, 2, 4), costs, true);
  const auto trace = simulator::chrome_trace(r);
  REQUIRE(trace.contains("traceEvents"));
  int processes = 0, bubbles = 0, sends = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") ++processes;
    if (e["ph"] == "X") {
      CHECK(e["dur"].get<double>() >= 0);
      if (e["cat"] == "bubble") ++bubbles;
      if (e["name"].get<std::string>().rfind("send", 0) == 0) ++sends;
    }
  }
  CHECK(processes == 2);
  CHECK(bubbles > 0);
  CHECK(sends == 2 * 4);  // activations forward and gradients backward, per micro-batch
  // Round trip through text: valid JSON.
  CHECK(nlohmann::json::parse(trace.dump()).contains("traceEvents"));
}

TEST_CASE("the lower bound never exceeds the simulated iteration time", "[simulator]") {
  // Contention (compute 1.2× slower beside collectives, collectives 1.1× beside compute), TP collectives,
  // pipeline transfers, every ZeRO stage, both gradient modes and every schedule.
  FakeCosts costs;
  costs.tp = 2;
  costs.compute_slowdown = 1.2;
  costs.comm_slowdown = 1.1;
  costs.pp_bytes = 200000;
  costs.head_us = 30;
  const auto w = fake_workload(8);
  for (const auto schedule :
       {model::Schedule::one_f_one_b, model::Schedule::gpipe, model::Schedule::interleaved}) {
    for (int pp : {1, 2, 4}) {
      const int vpp = schedule == model::Schedule::interleaved ? 2 : 1;
      if (vpp > 1 && pp == 1) continue;
      for (int zero : {0, 1, 2, 3}) {
        for (bool dp_overlap : {true, false}) {
          auto s = fake_strategy(pp, vpp, 2, 8);
          s.schedule = schedule;
          s.tp = 2;
          s.zero = zero;
          s.dp_overlap = dp_overlap;
          s.bucket_mb = 0.5;
          const auto r = run(w, s, costs);
          const auto bound_us = simulator::iteration_lower_bound_us(w, fake_cluster(), s, costs);
          const auto path_us = simulator::iteration_critical_path_us(w, fake_cluster(), s, costs);
          REQUIRE(bound_us.ok());
          REQUIRE(path_us.ok());
          INFO("pp " << pp << " schedule " << model::to_string(schedule) << " zero " << zero << " dp-overlap "
                     << dp_overlap);
          // Two lower bounds; neither contains the other since the cheap one adds the optimizer after a
          // shared link's total work (ZeRO-3), which the task-graph path does not.
          CHECK(*bound_us <= r.iteration_time_s * 1e6);
          CHECK(*path_us <= r.iteration_time_s * 1e6);
          // And not trivially weak: what they leave out is contention, up to ~25% here where ZeRO-3's gathers
          // (2 MB, 200 µs each) keep the communication streams busier than compute.
          CHECK(*bound_us > 0.7 * r.iteration_time_s * 1e6);
        }
      }
    }
  }
}

TEST_CASE("without communication the lower bound is the 1f1b iteration time", "[simulator]") {
  // The fill (3 forwards of 200 µs), the last stage's 8 × 600 µs and the drain (3 backwards of 400 µs):
  // (m + p − 1)·(F + B) = 6600 µs, as simulated, less the 1e-9 rounding margin.
  FakeCosts costs;
  costs.optimizer_us_per_mparam = 0;
  const auto w = fake_workload(8);
  const auto s = fake_strategy(4, 1, 1, 8);
  const auto bound_us = simulator::iteration_lower_bound_us(w, fake_cluster(), s, costs);
  REQUIRE(bound_us.ok());
  CHECK(*bound_us == Approx(6600 * (1 - 1e-9)).epsilon(1e-13));
  CHECK(*bound_us <= run(w, s, costs).iteration_time_s * 1e6);
}

TEST_CASE("the lower bound counts synchronous sends, the exposed gradient tail and the optimizer",
          "[simulator]") {
  // p = 2, m = 4, one layer per stage: F = 100, B = 200 µs; a transfer of 1e5 bytes at 10 GB/s = 10 µs.
  // Stage 1: starts after stage 0's first forward and its send (110 µs); runs 4 × 300 µs with a send after
  // every backward but its last (3 × 10 µs); then its last gradient crosses back (10 µs) and stage 0 runs
  // that backward (200 µs); stage 0 then all-reduces its 1e6 parameters × 2 bytes after the backward
  // (dp-overlap off, dp = 2: 200 µs) and steps the optimizer (1 µs per million parameters).
  FakeCosts costs;
  costs.pp_bytes = 100000;
  const auto w = fake_workload(2);
  auto s = fake_strategy(2, 1, 2, 4);
  s.dp_overlap = false;
  const auto bound_us = simulator::iteration_lower_bound_us(w, fake_cluster(), s, costs);
  REQUIRE(bound_us.ok());
  CHECK(*bound_us == Approx((110 + 1200 + 30 + 10 + 200 + 200 + 1) * (1 - 1e-9)).epsilon(1e-13));
  CHECK(*bound_us <= run(w, s, costs).iteration_time_s * 1e6);
}

TEST_CASE("simulate_unless_slower simulates exactly as simulate, or not at all above its limit",
          "[simulator]") {
  FakeCosts costs;
  costs.tp = 2;
  costs.compute_slowdown = 1.2;
  auto s = fake_strategy(2, 1, 2, 4);
  s.tp = 2;
  s.zero = 3;
  const auto w = fake_workload(4);
  const auto full = run(w, s, costs);
  const auto path_us = simulator::iteration_critical_path_us(w, fake_cluster(), s, costs);
  REQUIRE(path_us.ok());
  const auto below = simulator::simulate_unless_slower(w, fake_cluster(), s, costs, *path_us);
  REQUIRE(below.ok());
  REQUIRE(below->has_value());
  CHECK((*below)->iteration_time_s == full.iteration_time_s);
  CHECK((*below)->tasks == full.tasks);
  const auto above = simulator::simulate_unless_slower(w, fake_cluster(), s, costs, *path_us * 0.999);
  REQUIRE(above.ok());
  CHECK_FALSE(above->has_value());
}
