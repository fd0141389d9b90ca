#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/presets.h"
#include "model/specs.h"
#include "support/run.h"

using lagom::test::run_lagom;

TEST_CASE("lagom cost prices an all-reduce on dgx-a100 as JSON", "[model_cli]") {
  const auto r = run_lagom({"cost", "--collective", "allreduce", "--bytes", "1G", "--ranks", "8", "--cluster",
                            "dgx-a100", "--algo", "ring", "--proto", "simple", "--channels", "16", "--json"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["algo"] == "ring");
  CHECK(j["proto"] == "simple");
  CHECK(j["channels"] == 16);
  CHECK(j["busbw_GBps"].get<double>() == Approx(229.4).epsilon(0.02));
  CHECK(j["algbw_GBps"].get<double>() * 1.75 == Approx(j["busbw_GBps"].get<double>()));
  CHECK(j["time_us"].get<double>() > 0);
}

TEST_CASE("lagom cost without knobs reports NCCL's default choice in a table", "[model_cli]") {
  const auto r = run_lagom(
      {"cost", "--collective", "allgather", "--bytes", "64M", "--ranks", "16", "--cluster", "dgx-h100"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("# collective", 0) == 0);
  CHECK(r.out.find("allgather") != std::string::npos);
}

TEST_CASE("lagom cost prices a GEMM", "[model_cli]") {
  const auto r = run_lagom(
      {"cost", "--gemm", "8192,8192,8192", "--cluster", "dgx-h100", "--precision", "bf16", "--json"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  // 989 TFLOP/s × 0.592 sustained × 0.99077 (4096 tiles of k 8192 split over 132 SMs: 254,200.2 of
  // 256,568.2 k-steps, tests/model/test_compute.cpp) = 580.1 TFLOP/s.
  CHECK(j["tflops"].get<double>() == Approx(989 * 0.592 * 0.99077).epsilon(0.001));
}

TEST_CASE("lagom cost refuses invalid combinations with exit 2", "[model_cli]") {
  auto r = run_lagom({"cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster",
                      "a40-pcie-ib100", "--algo", "nvls"});
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "lagom: error: cost: allreduce nvls/simple: needs NVLink SHARP (sm90+ GPUs on NVSwitch); "
        "a40-pcie-ib100 has A40-48GB on pcie\n");
  r = run_lagom(
      {"cost", "--collective", "allreduce", "--bytes", "-5", "--ranks", "8", "--cluster", "dgx-a100"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "lagom: error: cost: --bytes: '-5': size must not be negative\n");
  r = run_lagom({"cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster",
                 "dgx-a100", "--algo", "magic"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("lagom: error: cost: --algo: 'magic' is not tree, ring, ", 0) == 0);
  const std::string empty_db = lagom::test::temp_dir("nodb") + "/none.db";
  r = run_lagom({"cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster",
                 "localhost", "--db", empty_db});
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "lagom: error: cluster localhost: no profile database " + empty_db + "; run 'lagom profile' first\n");
}

TEST_CASE("lagom presets --show NAME --json prints a spec that parses back to the preset", "[model_cli]") {
  for (const auto& c : lagom::model::cluster_presets()) {
    const auto r = run_lagom({"presets", "--show", c.name, "--json"});
    REQUIRE(r.exit_code == 0);
    CHECK(lagom::model::parse_cluster(nlohmann::json::parse(r.out), c.name).value() == c);
  }
  for (const auto& w : lagom::model::workload_presets()) {
    const auto r = run_lagom({"presets", "--show", w.name, "--json"});
    REQUIRE(r.exit_code == 0);
    CHECK(lagom::model::parse_workload(nlohmann::json::parse(r.out), w.name).value() == w);
  }
  const auto list = run_lagom({"presets", "--json"});
  REQUIRE(list.exit_code == 0);
  const auto j = nlohmann::json::parse(list.out);
  CHECK(j["clusters"].size() == 9);
  CHECK(j["models"].size() == 17);
}

TEST_CASE("a bad spec file is named with its field, exit 2", "[model_cli]") {
  const std::string dir = lagom::test::temp_dir("model-cli");
  const std::string path = dir + "/cluster.json";
  auto spec = lagom::model::to_json(lagom::model::cluster_preset("dgx-a100").value());
  spec["gpus_per_node"] = 0;
  lagom::test::write_file(path, spec.dump());
  const auto r = run_lagom({"cost", "--gemm", "128,128,128", "--cluster", path});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "lagom: error: " + path + ": gpus_per_node: must be a positive integer\n");
}
