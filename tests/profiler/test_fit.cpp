#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "profiler/calibration.h"
#include "profiler/fit.h"
#include "profiler/nccl_tests_format.h"
#include "profiler/profile.h"
#include "support/run.h"

using namespace lagom;

namespace {

db::CommSample synthetic(const std::string& collective, int ranks, std::int64_t bytes, double latency_us,
                         double busbw_GBps, double factor) {
  db::CommSample s;
  s.collective = collective;
  s.ranks = ranks;
  s.bytes = bytes;
  s.time_us = latency_us + static_cast<double>(bytes) / (busbw_GBps / factor * 1e3);
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

TEST_CASE("the alpha-beta fit recovers latency and bus bandwidth from exact allreduce times", "[profiler]") {
  // 8 ranks: busbw factor 2·7/8 = 1.75 (nccl-tests PERFORMANCE.md).
  std::vector<db::CommSample> series;
  for (std::int64_t bytes = 1024; bytes <= (64 << 20); bytes *= 2)
    series.push_back(synthetic("allreduce", 8, bytes, 12.0, 200.0, 1.75));
  const auto fit = profiler::fit_collective_series(series);
  REQUIRE(fit.ok());
  CHECK(fit.value().latency_us == Approx(12.0).epsilon(1e-9));
  CHECK(fit.value().bus_bw_GBps == Approx(200.0).epsilon(1e-9));
  CHECK(fit.value().rel_error < 1e-9);
  CHECK(fit.value().min_bytes == 1024);
  CHECK(fit.value().max_bytes == (64 << 20));
  CHECK(profiler::predict_busbw_GBps(fit.value(), 1LL << 40) ==
        Approx(200.0).epsilon(1e-5));  // latency still costs 1.2e-6
}

TEST_CASE("a fit outside physical bounds is refused, never stored", "[profiler]") {
  // Times that imply 10^7 GB/s of bus bandwidth (a corrupt log): no link does that.
  std::vector<db::CommSample> series;
  for (std::int64_t bytes = 1 << 20; bytes <= (64 << 20); bytes *= 2)
    series.push_back(synthetic("allreduce", 8, bytes, 5.0, 1e7, 1.75));
  const auto fit = profiler::fit_collective_series(series);
  REQUIRE_FALSE(fit.ok());
  CHECK(fit.error().message.find("outside physical bounds") != std::string::npos);
  const auto outcome = profiler::fit_run(series, {}, {});
  CHECK(outcome.fits.collectives.empty());
  REQUIRE(outcome.skipped.size() == 1);
}

TEST_CASE("samples whose data check failed are left out of the fit", "[profiler]") {
  std::vector<db::CommSample> series;
  for (std::int64_t bytes = 1024; bytes <= (1 << 20); bytes *= 2)
    series.push_back(synthetic("broadcast", 2, bytes, 5.0, 10.0, 1.0));
  series[3].time_us *= 50;
  series[3].wrong = 7;
  const auto fit = profiler::fit_collective_series(series);
  REQUIRE(fit.ok());
  CHECK(fit.value().bus_bw_GBps == Approx(10.0).epsilon(1e-9));
  CHECK(fit.value().samples == static_cast<int>(series.size()) - 1);
}

TEST_CASE("a series whose time does not grow with size cannot be fitted", "[profiler]") {
  std::vector<db::CommSample> series{synthetic("allreduce", 2, 1024, 5, 1, 1),
                                     synthetic("allreduce", 2, 2048, 5, 1, 1)};
  series[1].time_us = series[0].time_us / 2;
  const auto fit = profiler::fit_collective_series(series);
  REQUIRE_FALSE(fit.ok());
  CHECK(fit.error().message == "time does not grow with size");
}

TEST_CASE("the GEMM fit recovers peak throughput and half-performance FLOPs", "[profiler]") {
  // achieved = peak · f / (f + half) with peak 2 TFLOP/s, half 1e8 FLOPs.
  std::vector<db::ComputeSample> samples;
  for (std::int64_t n = 64; n <= 2048; n *= 2) {
    db::ComputeSample s;
    s.kind = "gemm";
    s.precision = "fp32";
    s.m = s.n = s.k = n;
    const double flops = 2.0 * n * n * n;
    s.time_us = (flops + 1e8) / (2.0 * 1e6);
    samples.push_back(s);
  }
  const auto fit = profiler::fit_gemm(samples);
  REQUIRE(fit.ok());
  CHECK(fit.value().peak_tflops == Approx(2.0).epsilon(1e-9));
  CHECK(fit.value().half_flops == Approx(1e8).epsilon(1e-6));
  CHECK(profiler::predict_tflops(fit.value(), 1e8) == Approx(1.0).epsilon(1e-9));
}

TEST_CASE(
    "vTrain A100 allreduce tables: fitting every other size predicts the others' busbw within 10% (median)",
    "[profiler]") {
  for (int gpus = 2; gpus <= 8; ++gpus) {
    const std::string name = "AR_GPU" + std::to_string(gpus) + "_1M_1024M_LUT";
    const std::string text = test::read_file(std::string(LAGOM_TEST_DATA_DIR) + "/vtrain/" + name);
    REQUIRE_FALSE(text.empty());
    const auto log = profiler::parse_log(name, text, {});
    REQUIRE(log.ok());
    CHECK(log.value().collective == "allreduce");
    CHECK(log.value().ranks == gpus);
    REQUIRE(log.value().samples.size() == 2048);  // 1024 sizes × two repetitions
    // Sizes 1 MiB .. 1024 MiB: even-numbered MiB sizes fit, odd ones are predicted.
    std::vector<db::CommSample> train, test_set;
    for (const auto& s : log.value().samples) ((s.bytes >> 20) % 2 == 0 ? train : test_set).push_back(s);
    const auto fit = profiler::fit_collective_series(train);
    REQUIRE(fit.ok());
    std::vector<double> errors;
    for (const auto& s : test_set) {
      errors.push_back(std::fabs(profiler::predict_busbw_GBps(fit.value(), s.bytes) - s.busbw_GBps) /
                       s.busbw_GBps);
    }
    INFO(name << ": bus_bw_GBps " << fit.value().bus_bw_GBps << ", latency_us " << fit.value().latency_us);
    CHECK(median(errors) < 0.10);
  }
}

TEST_CASE("the vTrain 8-GPU table fits an asymptotic bus bandwidth near its measured 1 GiB busbw",
          "[profiler]") {
  // research-simulators.md §2.5: 229.35 GB/s at 1 GiB on 8 A100s; the fitted asymptote must sit just above.
  const std::string name = "AR_GPU8_1M_1024M_LUT";
  const auto log =
      profiler::parse_log(name, test::read_file(std::string(LAGOM_TEST_DATA_DIR) + "/vtrain/" + name), {});
  REQUIRE(log.ok());
  const auto fit = profiler::fit_collective_series(log.value().samples);
  REQUIRE(fit.ok());
  CHECK(fit.value().bus_bw_GBps > 225.0);
  CHECK(fit.value().bus_bw_GBps < 240.0);
}

TEST_CASE("fit_run fits every series and reports those it cannot fit", "[profiler]") {
  std::vector<db::CommSample> comm;
  for (std::int64_t bytes = 1024; bytes <= 65536; bytes *= 2) {
    comm.push_back(synthetic("allgather", 4, bytes, 3.0, 20.0, 0.75));
  }
  comm.push_back(synthetic("reduce", 4, 4096, 3.0, 20.0, 1.0));  // one size only
  db::ComputeSample memory;
  memory.kind = "memory";
  memory.bytes = 1 << 20;
  memory.bw_GBps = 12.0;
  db::OverlapSample overlap;
  overlap.gemm_alone_us = 100;
  overlap.gemm_overlap_us = 125;
  overlap.comm_alone_us = 50;
  overlap.comm_overlap_us = 60;
  db::OverlapSample kernel_case = overlap;  // a FlashOverlap plan's makespan: not a slowdown pair
  kernel_case.name = "ag-gemm/flash";
  kernel_case.comm_overlap_us = 500;
  kernel_case.gemm_overlap_us = 400;
  const auto outcome = profiler::fit_run(comm, {memory}, {overlap, kernel_case});
  REQUIRE(outcome.fits.collectives.size() == 1);
  CHECK(outcome.fits.collectives[0].bus_bw_GBps == Approx(20.0));
  REQUIRE(outcome.skipped.size() == 1);
  CHECK(outcome.skipped[0] == "reduce ranks=4 nodes=1: needs at least 2 distinct sizes");
  const auto calibration = profiler::to_calibration(outcome.fits, 7, "host");
  CHECK(calibration.memory_bw_GBps == Approx(12.0));
  CHECK(calibration.interference.compute_slowdown.value() == Approx(0.25));
  CHECK(calibration.interference.comm_slowdown.value() == Approx(0.20));
}

TEST_CASE("load_calibration reads the newest complete run and refuses incomplete ones", "[profiler]") {
  const std::string path = test::temp_dir("calib") + "/c.db";
  std::int64_t complete_id = 0, incomplete_id = 0;
  {
    auto database = db::Database::open(path, db::Database::Mode::read_write);
    REQUIRE(database.ok());
    db::Run run;
    run.backend = "mpi";
    run.host = "h";
    complete_id = database.value().begin_run(run).value();
    std::vector<db::CommSample> comm;
    for (std::int64_t bytes = 1024; bytes <= 65536; bytes *= 2)
      comm.push_back(synthetic("allreduce", 2, bytes, 4.0, 8.0, 1.0));
    REQUIRE(database.value().add_comm_samples(complete_id, comm).ok());
    REQUIRE(database.value().finish_run(complete_id).ok());
    incomplete_id = database.value().begin_run(run).value();
  }
  const auto calibration = profiler::load_calibration(path);
  REQUIRE(calibration.ok());
  CHECK(calibration.value().run_id == complete_id);
  REQUIRE(calibration.value().collectives.size() == 1);  // fitted on the fly: none were stored
  CHECK(calibration.value().collectives[0].bus_bw_GBps == Approx(8.0));
  CHECK(calibration.value().collectives[0].latency_us == Approx(4.0));
  const auto refused = profiler::load_calibration(path, incomplete_id);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message ==
        "run " + std::to_string(incomplete_id) + " is incomplete: its samples are not used");
}

TEST_CASE("the sweep resolves defaults and rejects bad sizes, factors and collectives", "[profiler]") {
  profiler::ProfileOptions options;
  options.quick = true;
  const auto quick = profiler::resolve_sweep(options, "mpi");
  REQUIRE(quick.ok());
  CHECK(quick.value().sizes_bytes.front() == 1024);
  CHECK(quick.value().sizes_bytes.back() == (1 << 20));
  CHECK(quick.value().sizes_bytes.size() == 11);
  CHECK(quick.value().collectives.size() == 7);
  options.step_factor = 1.0;
  CHECK(profiler::resolve_sweep(options, "mpi").error().message == "--step-factor must be greater than 1");
  options.step_factor = 2;
  options.min_bytes = 4096;
  options.max_bytes = 1024;
  CHECK(profiler::resolve_sweep(options, "mpi").error().message ==
        "--min-bytes 4096 is larger than --max-bytes 1024");
  options.max_bytes = 0;
  options.collectives = {"allreduce", "gossip"};
  CHECK(profiler::resolve_sweep(options, "mpi").error().message ==
        "--collectives: unknown collective 'gossip' (allreduce, allgather, reducescatter, alltoall, "
        "broadcast, reduce, sendrecv)");
}
