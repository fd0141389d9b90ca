#include <filesystem>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::run_lagom;

namespace {

const std::vector<std::string> k_small{"--model",       "gpt2", "--cluster",      "a40-pcie-ib100",
                                       "--gpus",        "16",   "--zero",         "3",
                                       "--micro-batch", "2",    "--global-batch", "32"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

bool exists(const std::string& path) {
  return std::filesystem::exists(path);
}

}  // namespace

TEST_CASE("lagom tune writes the three files and simulate --comm-config reproduces its prediction",
          "[search]") {
  const std::string dir = lagom::test::temp_dir("tune-cli") + "/out";
  const auto tuned = run_lagom(with(with({"tune"}, k_small), {"--out", dir, "--json"}));
  INFO(tuned.err);
  REQUIRE(tuned.exit_code == 0);
  const auto doc = nlohmann::json::parse(tuned.out);
  for (const char* field : {"search", "runtime", "op_classes", "evaluations", "search_time_s",
                            "predicted_iteration_time_s", "baseline_iteration_time_s", "speedup", "ops"}) {
    CHECK(doc.contains(field));
  }
  CHECK(doc.at("search") == "lagom");
  CHECK(doc.at("runtime") == "nccl");
  REQUIRE(!doc.at("ops").empty());
  for (const char* field : {"name", "collective", "group", "bytes", "count", "algo", "proto", "channels",
                            "threads", "chunk_bytes", "predicted_time_us"}) {
    CHECK(doc.at("ops")[0].contains(field));
  }
  CHECK(exists(dir + "/nccl_tuner.conf"));
  CHECK(exists(dir + "/lagom.env"));
  CHECK(exists(dir + "/lagom-config.json"));
  CHECK_THAT(lagom::test::read_file(dir + "/lagom.env"),
             Catch::Contains("export LAGOM_TUNER_CONFIG=\"${LAGOM_CONFIG_DIR}/nccl_tuner.conf\"\n"));

  const auto simulated =
      run_lagom(with(with({"simulate"}, k_small), {"--comm-config", dir + "/lagom-config.json", "--json"}));
  INFO(simulated.err);
  REQUIRE(simulated.exit_code == 0);
  const auto sim = nlohmann::json::parse(simulated.out);
  CHECK(sim.at("iteration_time_s").get<double>() == doc.at("predicted_iteration_time_s").get<double>());
}

TEST_CASE("lagom tune refuses an unknown search, an unwritable --out and a strategy that does not fit",
          "[search]") {
  const std::string base = lagom::test::temp_dir("tune-cli-errors");
  auto r = run_lagom(with(with({"tune"}, k_small), {"--search", "random", "--out", base + "/a"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err == "lagom: error: search: 'random' is not lagom, autoccl, exhaustive or default\n");
  CHECK_FALSE(exists(base + "/a"));

  lagom::test::write_file(base + "/file", "x");
  r = run_lagom(with(with({"tune"}, k_small), {"--search", "default", "--out", base + "/file/out"}));
  CHECK(r.exit_code == 1);  // an output the system refuses is a failed run (docs/cli.md#exit-codes)
  CHECK_THAT(r.err, Catch::Contains("lagom: error: out " + base +
                                    "/file/out: cannot create the directory (Not a directory)\n"));

  // A layout given that does not fit; no layout given and none fits (tune explores first).
  r = run_lagom({"tune", "--model", "llama3-70b", "--cluster", "a40-pcie-ib100", "--gpus", "16",
                 "--global-batch", "16", "--tp", "1", "--out", base + "/b"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("lagom: error: tune: the strategy does not fit in memory: "));
  CHECK_FALSE(exists(base + "/b"));
  r = run_lagom({"tune", "--model", "llama3-70b", "--cluster", "a40-pcie-ib100", "--gpus", "16",
                 "--global-batch", "16", "--out", base + "/c", "--quiet"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("lagom: error: tune: no layout given and no strategy for 16 GPUs fits "
                                      "in memory ("));
  CHECK_FALSE(exists(base + "/c"));
}

TEST_CASE("tune searches the issue priority under FSDP and simulate reproduces it from lagom-config.json",
          "[search]") {
  const std::string dir = lagom::test::temp_dir("tune-cli-priority") + "/out";
  const std::vector<std::string> fsdp{"--model",       "phi-2", "--cluster",      "a40-pcie-ib100",
                                      "--gpus",        "16",    "--zero",         "3",
                                      "--micro-batch", "2",     "--global-batch", "64"};
  const auto tuned = run_lagom(with(with({"tune"}, fsdp), {"--out", dir, "--json", "--quiet"}));
  INFO(tuned.err);
  REQUIRE(tuned.exit_code == 0);
  const auto doc = nlohmann::json::parse(tuned.out);
  // The all-gather the next layer waits for goes before the gradient reduce-scatter on the shared NIC.
  CHECK(doc.at("overlap").at("priority") == "critical-first");

  const std::vector<std::string> config{"--comm-config", dir + "/lagom-config.json", "--json"};
  const auto same = run_lagom(with(with({"simulate"}, fsdp), config));
  REQUIRE(same.exit_code == 0);
  const double reproduced = nlohmann::json::parse(same.out).at("iteration_time_s").get<double>();
  CHECK(reproduced == doc.at("predicted_iteration_time_s").get<double>());
  const auto shared =
      run_lagom(with(with(with({"simulate"}, fsdp), config), {"--issue-priority", "as-scheduled"}));
  REQUIRE(shared.exit_code == 0);
  CHECK(nlohmann::json::parse(shared.out).at("iteration_time_s").get<double>() > reproduced);

  const auto bad = run_lagom(with(with({"simulate"}, fsdp), {"--issue-priority", "first"}));
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "lagom: error: issue-priority: 'first' is not as-scheduled or critical-first\n");
}

TEST_CASE("tune splits its speedup into the NCCL knobs alone, the framework knobs alone and both",
          "[search]") {
  // The case of issue 19: most of the speedup is the framework's (TP overlap, bucket, issue order), which no
  // NCCL file carries.
  const std::vector<std::string> args{
      "tune",   "--model", "llama3-70b",     "--cluster", "dgx-h100", "--gpus", "64",
      "--tp",   "8",       "--pp",           "2",         "--dp",     "4",      "--sp",
      "--zero", "1",       "--global-batch", "512",       "--json"};
  const std::string dir = lagom::test::temp_dir("tune-split");
  const auto both = run_lagom(with(args, {"--out", dir + "/both"}));
  INFO(both.err);
  REQUIRE(both.exit_code == 0);
  const auto doc = nlohmann::json::parse(both.out);
  const double speedup = doc["speedup"].get<double>();
  const double nccl = doc["speedup_nccl"].get<double>();
  const double framework = doc["speedup_framework"].get<double>();
  CHECK(nccl >= 1.0);
  CHECK(framework >= 1.0);
  CHECK(speedup >= std::max(nccl, framework) - 1e-9);
  CHECK(framework > nccl);  // the overlap method and bucket size are worth more than the NCCL knobs here
  // speedup_nccl is the speedup of a tune whose framework knobs are pinned at the strategy's values.
  const auto pinned = run_lagom(with(args, {"--tp-overlap", "none", "--bucket-mb", "25", "--issue-priority",
                                            "as-scheduled", "--out", dir + "/pinned"}));
  REQUIRE(pinned.exit_code == 0);
  CHECK(nlohmann::json::parse(pinned.out)["speedup"].get<double>() == Approx(nccl).epsilon(1e-12));
}
