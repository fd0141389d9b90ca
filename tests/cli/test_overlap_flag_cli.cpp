// The overlap method at the flag: simulate, explore and tune (`--tp-overlap`) and bench-overlap
// (`--method`) read it with model::parse_overlap_method, refuse a bad value before anything runs, and say
// which flag and what is allowed in the same words.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::run_lagom;

namespace {

const std::vector<std::string> k_strategy{"--model", "gpt2", "--cluster", "dgx-a100",       "--gpus", "8",
                                          "--tp",    "2",    "--sp",      "--global-batch", "16"};

std::vector<std::string> command_with(const std::string& command, const std::string& method) {
  std::vector<std::string> args{command};
  args.insert(args.end(), k_strategy.begin(), k_strategy.end());
  if (command == "tune") args.insert(args.end(), {"--out", lagom::test::temp_dir("tune-overlap")});
  args.insert(args.end(), {"--tp-overlap", method});
  return args;
}

std::vector<std::string> bench_with(const std::string& method) {
  return {"bench-overlap", "--kernel", "ag-gemm", "--method", method,    "--m", "8",
          "--n",           "8",        "--k",     "8",        "--ranks", "2",   "--executor",
          "threads",       "--reps",   "1",       "--quiet"};
}

std::string refusal(const std::string& flag, const std::string& value) {
  return "lagom: error: " + flag + ": '" + value + "' is not none, slice:K (K from 2 to 4096), flash or te\n";
}

}  // namespace

TEST_CASE("a bad overlap method is refused at the flag of every command that takes it, in one message",
          "[cli]") {
  for (const std::string value : {"slice:5000", "slice:1", "slice:0", "ring"}) {
    for (const std::string command : {"simulate", "explore", "tune"}) {
      INFO(command << " --tp-overlap " << value);
      const auto r = run_lagom(command_with(command, value));
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err == refusal("--tp-overlap", value));
    }
    INFO("bench-overlap --method " << value);
    const auto r = run_lagom(bench_with(value));
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == refusal("--method", value));
  }
}

TEST_CASE("slice:2 and slice:4096 are the bounds every command accepts", "[cli]") {
  for (const std::string value : {"slice:2", "slice:4096"}) {
    INFO(value);
    const auto simulated = run_lagom(command_with("simulate", value));
    INFO(simulated.err);
    REQUIRE(simulated.exit_code == 0);
    const auto benched = run_lagom(bench_with(value));
    INFO(benched.err);
    CHECK(benched.exit_code == 0);
    CHECK(benched.out.rfind("# bench-overlap: ag-gemm " + value + ", ", 0) == 0);
  }
  // The strategy reports the method as given.
  auto args = command_with("simulate", "slice:4096");
  args.push_back("--json");
  const auto r = run_lagom(args);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["strategy"]["tp_overlap"] == "slice:4096");
}

TEST_CASE("vanilla is none for every command", "[cli]") {
  auto args = command_with("simulate", "vanilla");
  args.push_back("--json");
  const auto r = run_lagom(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["strategy"]["tp_overlap"] == "none");
  const auto b = run_lagom(bench_with("none"));
  CHECK(b.exit_code == 0);
  CHECK(b.out.rfind("# bench-overlap: ag-gemm none, ", 0) == 0);
}
