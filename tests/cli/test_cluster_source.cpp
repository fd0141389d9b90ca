// --db, --run and `--cluster localhost` as cost, simulate and tune read them (inputs/cluster_source.h).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::run;
using lagom::test::run_lagom;
using lagom::test::temp_dir;

TEST_CASE("localhost is this machine from its cpu and mpi profiles; tune and simulate run on it", "[cli]") {
  const std::string dir = temp_dir("localhost");
  const std::string db = dir + "/l.db";
  REQUIRE(run_lagom({"profile", "--backend", "cpu", "--suite", "compute", "--quick", "--db", db, "--quiet"})
              .exit_code == 0);
  const auto mpi = run(
      "mpirun", {"--allow-run-as-root", "--oversubscribe", "-np", "2", std::string(LAGOM_BIN_DIR) + "/lagom",
                 "profile", "--backend", "mpi", "--suite", "comm", "--quick", "--db", db, "--quiet"});
  REQUIRE(mpi.exit_code == 0);

  const auto gemm = run_lagom({"cost", "--gemm", "256,256,256", "--cluster", "localhost", "--db", db,
                               "--precision", "fp32", "--json"});
  INFO(gemm.err);
  REQUIRE(gemm.exit_code == 0);
  const double tflops = nlohmann::json::parse(gemm.out)["tflops"].get<double>();
  CHECK(tflops > 0.0);
  CHECK(tflops < 10.0);  // a CPU core, not a GPU

  const auto tune =
      run_lagom({"tune", "--model", "gpt2", "--cluster", "localhost", "--db", db, "--gpus", "2",
                 "--global-batch", "8", "--precision", "fp32", "--out", dir + "/out", "--json"});
  INFO(tune.err);
  REQUIRE(tune.exit_code == 0);
  const auto summary = nlohmann::json::parse(tune.out);
  CHECK(summary["predicted_iteration_time_s"].get<double>() > 0.0);

  const auto sim = run_lagom({"simulate", "--model", "gpt2", "--cluster", "localhost", "--db", db, "--gpus",
                              "2", "--global-batch", "8", "--precision", "fp32", "--comm-config",
                              dir + "/out/lagom-config.json", "--json"});
  REQUIRE(sim.exit_code == 0);
  CHECK(nlohmann::json::parse(sim.out)["iteration_time_s"].get<double>() ==
        summary["predicted_iteration_time_s"].get<double>());

  const auto too_many = run_lagom({"simulate", "--model", "gpt2", "--cluster", "localhost", "--db", db,
                                   "--gpus", "4", "--global-batch", "8", "--precision", "fp32"});
  CHECK(too_many.exit_code == 2);
  CHECK(too_many.err.find("4 GPUs asked for, but the profile") != std::string::npos);
}

TEST_CASE("a preset with --db uses the profile's fits; --run without --db is an error", "[cli]") {
  const std::string db = temp_dir("presetdb") + "/v.db";
  REQUIRE(run_lagom({"db", "import", std::string(LAGOM_TEST_DATA_DIR) + "/vtrain/AR_GPU8_1M_1024M_LUT",
                     "--db", db, "--quiet"})
              .exit_code == 0);
  const auto plain = run_lagom({"cost", "--collective", "allreduce", "--bytes", "64M", "--ranks", "8",
                                "--cluster", "dgx-a100", "--json"});
  const auto fitted = run_lagom({"cost", "--collective", "allreduce", "--bytes", "64M", "--ranks", "8",
                                 "--cluster", "dgx-a100", "--db", db, "--run", "1", "--json"});
  REQUIRE(plain.exit_code == 0);
  INFO(fitted.err);
  REQUIRE(fitted.exit_code == 0);
  // The import's fit: latency ≈ 84 µs, bus bandwidth ≈ 228 GB/s (tests/profiler); at 64 MiB that is
  // 2·7/8·64Mi / 228e3 + 84 ≈ 599 µs, whatever the preset's own constants say.
  CHECK(nlohmann::json::parse(fitted.out)["time_us"].get<double>() == Approx(599).epsilon(0.05));
  const auto no_db = run_lagom({"cost", "--collective", "allreduce", "--bytes", "64M", "--ranks", "8",
                                "--cluster", "dgx-a100", "--run", "1"});
  CHECK(no_db.exit_code == 2);
  CHECK(no_db.err == "lagom: error: --run: needs --db PATH\n");
  const auto missing = run_lagom({"cost", "--collective", "allreduce", "--bytes", "64M", "--ranks", "8",
                                  "--cluster", "dgx-a100", "--db", db, "--run", "9"});
  CHECK(missing.exit_code == 2);
}
