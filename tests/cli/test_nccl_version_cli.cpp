// --nccl-version on the commands that price collectives, and the version in effect in their outputs
// (docs/cli.md#nccl-versions).
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::run_lagom;

namespace {

// A Blackwell cluster file (sm_arch 100: Lagom has no Blackwell preset): dgx-h100's spec with NVLink5.
std::string blackwell_file(const std::string& dir, const std::string& nccl_version = "") {
  const auto shown = run_lagom({"presets", "--show", "dgx-h100", "--json"});
  REQUIRE(shown.exit_code == 0);
  nlohmann::json spec = nlohmann::json::parse(shown.out);
  spec["name"] = "b200";
  spec["gpu"]["name"] = "B200";
  spec["gpu"]["sm_arch"] = 100;
  spec["intra"]["bw_GBps"] = 900;
  if (!nccl_version.empty()) spec["nccl_version"] = nccl_version;
  const std::string path = dir + "/b200" + nccl_version + ".json";
  lagom::test::write_file(path, spec.dump());
  return path;
}

nlohmann::json cost_json(std::vector<std::string> args) {
  args.insert(args.begin(), "cost");
  args.push_back("--json");
  const auto r = run_lagom(args);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("lagom cost --nccl-version 2.30 and 2.28 agree on the presets but for the version named", "[cli]") {
  // sm80 and sm90: none of the lines 2.29 and 2.30 changed applies (docs/model.md "NCCL versions").
  for (const std::string cluster : {"dgx-a100", "dgx-h100"}) {
    for (const std::string collective : {"allreduce", "allgather", "alltoall"}) {
      for (const std::string bytes : {"64K", "1G"}) {
        for (const std::string ranks : {"8", "32"}) {
          const std::vector<std::string> args{"--collective", collective, "--bytes",   bytes,
                                              "--ranks",      ranks,      "--cluster", cluster};
          auto old_args = args, new_args = args;
          old_args.insert(old_args.end(), {"--nccl-version", "2.28"});
          new_args.insert(new_args.end(), {"--nccl-version", "2.30"});
          nlohmann::json old_doc = cost_json(old_args), new_doc = cost_json(new_args);
          CHECK(old_doc["nccl"] ==
                nlohmann::json{{"version", "2.28"}, {"default", false}, {"emulated", "2.28.9"}});
          CHECK(new_doc["nccl"]["emulated"] == "2.30.7");
          old_doc.erase("nccl");
          new_doc.erase("nccl");
          CHECK(old_doc == new_doc);
        }
      }
    }
  }
}

TEST_CASE("lagom cost --nccl-version 2.30 and 2.28 differ on Blackwell where NCCL's code does", "[cli]") {
  const std::string dir = lagom::test::temp_dir("nccl-version");
  const std::string b200 = blackwell_file(dir);
  // NVLSTree on 4 nodes: 2.30's ncclNvlsTreeSm100Tuning runs 24 CTAs with 400 Gbit/s NICs
  // (NVIDIA/nccl@v2.30.7-1:src/transport/nvls.cc:191-192), 2.28.9 32.
  const std::vector<std::string> call{"--collective", "allreduce", "--bytes", "1G",     "--ranks",
                                      "32",           "--cluster", b200,      "--algo", "nvls_tree"};
  auto with = [&](const std::string& version) {
    auto args = call;
    args.insert(args.end(), {"--nccl-version", version});
    return cost_json(args);
  };
  CHECK(with("2.28")["channels"] == 32);
  CHECK(with("2.30")["channels"] == 24);
  CHECK(with("2.28")["time_us"] != with("2.30")["time_us"]);
  // Nothing named: the default, said to be one.
  const nlohmann::json plain = cost_json(call);
  CHECK(plain["nccl"] == nlohmann::json{{"version", "2.28.9"}, {"default", true}, {"emulated", "2.28.9"}});
  CHECK(plain["channels"] == 32);
  // The cluster file's version, and the flag over it.
  const std::string named = blackwell_file(dir, "2.30.4");
  std::vector<std::string> file_call = call;
  file_call[7] = named;
  CHECK(cost_json(file_call)["nccl"] ==
        nlohmann::json{{"version", "2.30.4"}, {"default", false}, {"emulated", "2.30.7"}});
  CHECK(cost_json(file_call)["channels"] == 24);
  file_call.insert(file_call.end(), {"--nccl-version", "2.28.9"});
  CHECK(cost_json(file_call)["channels"] == 32);
  // The human output says it under the table.
  auto human = call;
  human.insert(human.begin(), "cost");
  human.insert(human.end(), {"--nccl-version", "2.30"});
  const auto r = run_lagom(human);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\n# nccl: 2.30 (emulating 2.30.7)\n") != std::string::npos);
}

TEST_CASE("a version outside the emulated releases is priced as the nearest, with a warning", "[cli]") {
  const auto r = run_lagom({"cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster",
                            "dgx-h100", "--nccl-version", "2.32.1", "--json"});
  REQUIRE(r.exit_code == 0);
  const std::string warning =
      "NCCL 2.32.1 is newer than the releases Lagom emulates (2.24 to 2.30): its defaults are taken as "
      "2.30.7's";
  CHECK(r.err == "lagom: warning: " + warning + "\n");
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["nccl"]["emulated"] == "2.30.7");
  CHECK(j["nccl"]["warning"] == warning);
}

TEST_CASE("a --nccl-version that is no version is exit 2 naming the flag", "[cli]") {
  const auto r = run_lagom({"cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster",
                            "dgx-h100", "--nccl-version", "2.30-rc1"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "lagom: error: --nccl-version: '2.30-rc1' is not an NCCL version such as 2.30 or 2.28.9\n");
  CHECK(r.out.empty());
}

TEST_CASE("simulate, explore, tune and plan state the NCCL version they priced with", "[cli]") {
  const std::string out = lagom::test::temp_dir("nccl-version-tune");
  const std::vector<std::string> job{"--model",        "llama3-8b", "--cluster", "dgx-a100",
                                     "--global-batch", "8",         "--gpus",    "8"};
  auto run = [&](std::vector<std::string> head, std::vector<std::string> tail) {
    head.insert(head.end(), job.begin(), job.end());
    head.insert(head.end(), tail.begin(), tail.end());
    const auto r = run_lagom(head);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  const nlohmann::json flag{{"version", "2.29"}, {"default", false}, {"emulated", "2.29.7"}};
  const nlohmann::json plain{{"version", "2.28.9"}, {"default", true}, {"emulated", "2.28.9"}};
  CHECK(nlohmann::json::parse(run({"simulate"}, {"--nccl-version", "2.29", "--json"}))["cluster"]["nccl"] ==
        flag);
  CHECK(nlohmann::json::parse(run({"simulate"}, {"--json"}))["cluster"]["nccl"] == plain);
  CHECK(run({"simulate"}, {}).find("\n# nccl: 2.28.9 (the default: the cluster names no nccl_version)\n") !=
        std::string::npos);
  CHECK(nlohmann::json::parse(
            run({"explore"}, {"--top", "1", "--nccl-version", "2.29", "--json"}))["cluster"]["nccl"] == flag);
  CHECK(
      run({"explore"}, {"--top", "1", "--nccl-version", "2.29"}).find("\n# nccl: 2.29 (emulating 2.29.7)") !=
      std::string::npos);
  const std::vector<std::string> tune_tail{"--tp", "8", "--quiet", "--out", out, "--nccl-version", "2.29"};
  auto tune_json = tune_tail;
  tune_json.push_back("--json");
  CHECK(nlohmann::json::parse(run({"tune"}, tune_json))["nccl"] == flag);
  CHECK(run({"tune"}, tune_tail).find("\n# nccl: 2.29 (emulating 2.29.7)\n") != std::string::npos);
  const std::vector<std::string> plan_tail{"--tokens", "1T", "--nccl-version", "2.29"};
  auto plan_json = plan_tail;
  plan_json.push_back("--json");
  CHECK(nlohmann::json::parse(run({"plan"}, plan_json))["rows"][0]["nccl"] == flag);
  CHECK(run({"plan"}, plan_tail).find("\n# nccl on dgx-a100: 2.29 (emulating 2.29.7)\n") !=
        std::string::npos);
}
