// The 90% intervals that simulate, explore, tune and plan print (model/accuracy.h): a scenario in a
// validated regime carries its bounds and names its runs; one outside every regime carries none and says why.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::run_lagom;

namespace {

nlohmann::json run_json(const std::vector<std::string>& args) {
  auto argv = args;
  argv.push_back("--json");
  const auto r = run_lagom(argv);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

// The interval brackets `value` as the regime's bounds on measured ÷ predicted scale it.
void check_brackets(const nlohmann::json& interval, const std::string& field, double value) {
  INFO(interval.dump());
  REQUIRE(interval[field].is_array());
  const double low = interval[field][0].get<double>(), high = interval[field][1].get<double>();
  CHECK(low < value);
  CHECK(high > value);
  CHECK(interval["level"] == 0.9);
  CHECK(interval["runs"].get<int>() >= 19);
  CHECK(interval["why"].is_null());
}

}  // namespace

TEST_CASE("simulate's iteration time carries the interval of its validated regime, in JSON and for people",
          "[cli][accuracy]") {
  const std::vector<std::string> h100 = {"simulate", "--model", "llama3-70b",     "--cluster", "dgx-h100",
                                         "--gpus",   "64",      "--tp",           "4",         "--pp",
                                         "4",        "--sp",    "--global-batch", "128"};
  const auto doc = run_json(h100);
  const auto& interval = doc["interval"];
  check_brackets(interval, "iteration_time_s", doc["iteration_time_s"].get<double>());
  CHECK(interval["regime"] == "sm90 megatron-core model-parallel dense 16-bit multi-node");
  CHECK(interval["data"] == "dgxc-h100.csv");
  CHECK(interval["differs"].empty());
  const auto human = run_lagom(h100);
  CHECK(human.out.find("iteration_90%_s") != std::string::npos);
  CHECK(human.out.find("# 90% interval (measured ÷ predicted") != std::string::npos);
}

TEST_CASE("a GPU no measured run covers gets no interval, and the reason", "[cli][accuracy]") {
  // A40 (sm86): every shipped run is A100 (sm80) or H100 (sm90).
  const auto doc = run_json(
      {"simulate", "--model", "gpt2", "--cluster", "a40-pcie-ib100", "--gpus", "8", "--global-batch", "64"});
  const auto& interval = doc["interval"];
  CHECK(interval["iteration_time_s"].is_null());
  CHECK(interval["regime"].is_null());
  CHECK(interval["why"].get<std::string>().find("no validated runs on sm86 GPUs") != std::string::npos);
  const auto human = run_lagom(
      {"simulate", "--model", "gpt2", "--cluster", "a40-pcie-ib100", "--gpus", "8", "--global-batch", "64"});
  CHECK(human.out.find("iteration_90%_s         -") != std::string::npos);
  CHECK(human.out.find("# no 90% interval: no validated runs on sm86 GPUs") != std::string::npos);
}

TEST_CASE("explore, tune and plan carry the interval of each figure they predict", "[cli][accuracy]") {
  // Megatron-LM's strategies under Megatron-Core: the model-parallel ones in the DGX H100 runs' regime; its
  // FSDP (ZeRO 3 without TP) in none (no measured Megatron-Core FSDP run), which each says.
  const auto explored = run_json({"explore", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16",
                                  "--global-batch", "64", "--top", "3", "--framework", "megatron-lm"});
  REQUIRE(!explored["results"].empty());
  int bracketed = 0;
  for (const auto& r : explored["results"]) {
    const bool fsdp = r["strategy"]["zero"].get<int>() >= 2 && r["strategy"]["tp"].get<int>() == 1;
    if (fsdp) {
      CHECK(r["interval"]["why"] ==
            "no validated sharded-dp runs of the megatron-core stack on sm90 GPUs: no interval");
      continue;
    }
    check_brackets(r["interval"], "iteration_time_s", r["iteration_time_s"].get<double>());
    ++bracketed;
  }
  CHECK(bracketed >= 2);
  // FSDP in eager PyTorch: llm-foundry's regime. The same FSDP under Megatron-Core has no measured run.
  const std::vector<std::string> tune_fsdp = {
      "tune",   "--model", "gpt2",           "--cluster", "dgx-a100", "--gpus",       "16",
      "--zero", "3",       "--global-batch", "64",        "--stack",  "pytorch-eager"};
  auto tune_args = tune_fsdp;
  tune_args.insert(tune_args.end(), {"--out", lagom::test::temp_dir("intervals-tune")});
  const auto tuned = run_json(tune_args);
  check_brackets(tuned["interval"], "predicted_iteration_time_s",
                 tuned["predicted_iteration_time_s"].get<double>());
  CHECK(tuned["interval"]["regime"] == "sm80 pytorch-eager sharded-dp dense 16-bit multi-node");
  auto core_args = tune_fsdp;
  core_args.back() = "megatron-core";
  core_args.insert(core_args.end(), {"--out", lagom::test::temp_dir("intervals-tune-core")});
  const auto core = run_json(core_args);
  CHECK(core["interval"]["predicted_iteration_time_s"].is_null());
  CHECK(core["interval"]["why"] == "no validated runs of the megatron-core stack on sm80 GPUs: no interval");
  const auto planned = run_json({"plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "64",
                                 "--tokens", "1T", "--global-batch", "512", "--price", "2"});
  const auto& row = planned["rows"][0];
  REQUIRE(row["feasible"] == true);
  check_brackets(row["interval"], "wall_s", row["wall_s"].get<double>());
  check_brackets(row["interval"], "gpu_hours", row["gpu_hours"].get<double>());
  check_brackets(row["interval"], "cost_usd", row["cost_usd"].get<double>());
}

TEST_CASE("plan prices the stack it is given, and takes its intervals from that stack's runs",
          "[cli][accuracy]") {
  const std::vector<std::string> args = {"plan",     "--model",        "gpt3-175b", "--cluster",
                                         "dgx-a100", "--gpus",         "512",       "--tokens",
                                         "300B",     "--global-batch", "1536"};
  const auto fused = run_json(args);
  auto eager_args = args;
  eager_args.insert(eager_args.end(), {"--stack", "megatron-deepspeed"});
  const auto eager = run_json(eager_args);
  const auto& f = fused["rows"][0];
  const auto& e = eager["rows"][0];
  REQUIRE(f["feasible"] == true);
  REQUIRE(e["feasible"] == true);
  CHECK(e["strategy"]["stack"] == "megatron-deepspeed");
  // The eager stack's 75 µs per op and 30 µs per collective call make every iteration longer.
  CHECK(e["step"]["simulated_s"].get<double>() > f["step"]["simulated_s"].get<double>());
  // Megatron-Core on A100 has no measured run; eager Megatron-DeepSpeed on A100 has vTrain's.
  CHECK(f["interval"]["wall_s"].is_null());
  CHECK(e["interval"]["data"] == "vtrain-multi.csv");
  check_brackets(e["interval"], "wall_s", e["wall_s"].get<double>());
  eager_args.back() = "deepspeed";
  const auto bad = run_lagom(eager_args);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("lagom: error: --stack: 'deepspeed' is not megatron-core, megatron-deepspeed, "
                     "pytorch-eager or pytorch-compile") != std::string::npos);
}

TEST_CASE("torch-fsdp's strategies are priced as eager PyTorch unless --stack names another stack",
          "[cli][accuracy]") {
  const std::vector<std::string> args = {"explore", "--model",     "llama3-8b",      "--cluster", "dgx-h100",
                                         "--gpus",  "16",          "--global-batch", "64",        "--top",
                                         "1",       "--framework", "torch-fsdp"};
  const auto eager = run_json(args);
  REQUIRE(!eager["results"].empty());
  CHECK(eager["results"][0]["strategy"]["stack"] == "pytorch-eager");
  auto compiled_args = args;
  compiled_args.insert(compiled_args.end(), {"--stack", "pytorch-compile"});
  const auto compiled = run_json(compiled_args);
  REQUIRE(!compiled["results"].empty());
  CHECK(compiled["results"][0]["strategy"]["stack"] == "pytorch-compile");
  // Llama 3's RMSNorm, RoPE and SwiGLU as chains of kernels: the eager step is the slower.
  CHECK(eager["results"][0]["iteration_time_s"].get<double>() >
        1.05 * compiled["results"][0]["iteration_time_s"].get<double>());
  const auto planned = run_json({"plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16",
                                 "--tokens", "1B", "--global-batch", "64", "--framework", "torch-fsdp"});
  CHECK(planned["rows"][0]["strategy"]["stack"] == "pytorch-eager");
  const auto megatron = run_json({"plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16",
                                  "--tokens", "1B", "--global-batch", "64", "--framework", "megatron-lm"});
  CHECK(megatron["rows"][0]["strategy"]["stack"] == "megatron-core");
}
