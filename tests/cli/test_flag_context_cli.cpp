// What the user says about the model and the strategy is never silently ignored (issue 30): a flag that
// cannot act in its context is an error (inputs/flag_context.h), every numeric flag refuses nan and inf, a
// model too large to simulate is refused at once with the limit named, and a HuggingFace key the family's
// class does not read is named in a warning.
#include <chrono>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::run_lagom;

namespace {

std::vector<std::string> simulate_with(std::vector<std::string> extra,
                                       const std::string& model = "llama3-8b") {
  std::vector<std::string> args{"simulate", "--model",        model, "--cluster", "dgx-h100", "--gpus",
                                "8",        "--global-batch", "8"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("a MoE flag on a dense model is an error naming what it needs", "[cli]") {
  auto r = run_lagom(simulate_with({"--moe-capacity-factor", "1.0", "--expert-tp", "1"}));
  CHECK(r.exit_code == 2);
  CHECK(
      r.err ==
      "lagom: error: --moe-capacity-factor needs a MoE model (llama3-8b has no experts); --expert-tp needs a "
      "MoE model (llama3-8b has no experts): the flag would have no effect\n");
  // On a MoE model the same flags act.
  r = run_lagom(
      simulate_with({"--ep", "8", "--moe-capacity-factor", "1.0", "--expert-tp", "1"}, "mixtral-8x7b"));
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("FP8 flags without --precision fp8 and the FP8 reduce-scatter without TE are errors", "[cli]") {
  auto r = run_lagom(simulate_with({"--fp8-params", "true"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "lagom: error: --fp8-params needs --precision fp8 (precision is bf16): the flag would have no "
        "effect\n");
  r = run_lagom(simulate_with({"--precision", "fp8", "--tp", "8", "--sp", "--tp-overlap-fp8-rs", "on"}));
  CHECK(r.exit_code == 2);
  CHECK(
      r.err ==
      "lagom: error: --tp-overlap-fp8-rs needs --tp-overlap te (tp-overlap is none): the flag would have no "
      "effect\n");
  r = run_lagom(simulate_with(
      {"--precision", "fp8", "--tp", "8", "--sp", "--tp-overlap", "te", "--tp-overlap-fp8-rs", "on"}));
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("a flag given at its default is accepted where it cannot act: it changes nothing", "[cli]") {
  const auto r = run_lagom(simulate_with(
      {"--moe-grouped-gemm", "on", "--schedule", "1f1b", "--fp8-wgrad", "true", "--cp-comm-type", "a2a"}));
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("pipeline, CP and gradient-bucket flags need their dimension", "[cli]") {
  auto r = run_lagom(simulate_with({"--defer-embedding-wgrad", "2"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--defer-embedding-wgrad needs pp > 1 (pp=1)") != std::string::npos);
  r = run_lagom(simulate_with({"--tp", "8", "--bucket-mb", "50"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--bucket-mb needs dp·cp > 1 (dp·cp=1·1: no gradient reduction)") != std::string::npos);
  r = run_lagom(simulate_with({"--pp", "2", "--defer-embedding-wgrad", "2"}));
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("ZeRO with one replica of the weights is an error: there is nothing to shard", "[cli]") {
  auto r = run_lagom(simulate_with({"--tp", "8", "--zero", "1"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--zero needs dp·cp > 1 or experts on more than one replica (dp·cp=1·1: nothing to "
                   "shard)") != std::string::npos);
  // A MoE model's experts can have replicas at dp 1 (tp 4, ep 2, expert-tp 1: two expert replicas).
  auto moe = [](const std::string& gpus) {
    return std::vector<std::string>{
        "simulate",    "--model", "mixtral-8x7b", "--cluster", "dgx-h100",       "--gpus",
        gpus,          "--tp",    gpus,           "--sp",      "--ep",           "2",
        "--expert-tp", "1",       "--zero",       "1",         "--global-batch", "8"};
  };
  r = run_lagom(moe("4"));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  r = run_lagom(moe("2"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("one expert replica: nothing to shard") != std::string::npos);
}

TEST_CASE("explore judges a flag's context only on the dimensions it does not search", "[cli]") {
  const std::vector<std::string> explore{"explore",  "--model", "llama3-8b", "--cluster",
                                         "dgx-h100", "--gpus",  "8",         "--global-batch",
                                         "8",        "--quiet", "--top",     "1"};
  auto with = [&explore](std::vector<std::string> extra) {
    auto args = explore;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_lagom(args);
  };
  // pp is searched: some candidates pipeline, and the flag acts there.
  auto r = with({"--defer-embedding-wgrad", "2"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  r = with({"--pp", "1", "--defer-embedding-wgrad", "2"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--defer-embedding-wgrad needs pp > 1") != std::string::npos);
  // Whether the model has experts is no search's: refused at once.
  r = with({"--moe-dispatcher", "allgather"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--moe-dispatcher needs a MoE model") != std::string::npos);
}

TEST_CASE("cost refuses a flag of the other kind of pricing", "[cli]") {
  const auto r = run_lagom({"cost", "--gemm", "64,64,64", "--cluster", "dgx-h100", "--algo", "ring"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "lagom: error: cost: --algo: applies to --collective only\n");
}

TEST_CASE("every numeric flag refuses nan and inf", "[cli]") {
  for (const char* value : {"nan", "inf"}) {
    INFO(value);
    auto r = run_lagom(simulate_with({"--memory-reserve-gib", value}));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--memory-reserve-gib") != std::string::npos);
    r = run_lagom(simulate_with({"--bucket-mb", value}));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--bucket-mb") != std::string::npos);
    r = run_lagom(
        {"validate", std::string(LAGOM_TEST_DATA_DIR) + "/validate/llm-foundry.csv", "--max-mape", value});
    CHECK(r.exit_code == 2);
    CHECK(r.err == std::string("lagom: error: --max-mape: ") + value + " is not within 0..1000000\n");
  }
}

TEST_CASE("a model too large to simulate is refused at once, naming the limit", "[cli]") {
  const auto start = std::chrono::steady_clock::now();
  auto r = run_lagom({"simulate", "--layers", "2147483647", "--hidden", "64", "--heads", "8", "--vocab",
                      "100", "--seq", "64", "--cluster", "dgx-h100", "--gpus", "8", "--global-batch", "8"});
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "lagom: error: flags: layers: 2147483647 is more than the 65536 layers Lagom simulates "
        "(docs/simulator.md#limits)\n");
  r = run_lagom({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8", "--global-batch",
                 "2147483640"});
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "lagom: error: layers × micro-batches = 32 × 268435455 = 8589934560 layer passes per iteration, more "
        "than the 4194304 Lagom simulates (docs/simulator.md#limits): a larger dp or micro-batch has fewer "
        "micro-batches\n");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 10.0);
}

TEST_CASE("a MoE key in a dense HuggingFace family is named, and the model stays dense", "[cli]") {
  const std::string dir = lagom::test::temp_dir("flag-context-hf");
  auto config =
      nlohmann::json::parse(R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
      "num_local_experts": 8, "num_experts_per_tok": 2})");
  lagom::test::write_file(dir + "/llama.json", config.dump());
  const auto r = run_lagom(simulate_with({"--seq", "8192", "--json"}, dir + "/llama.json"));
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["model_shape"]["parameters"].get<double>() ==
        Approx(8.03e9).epsilon(0.01));
  CHECK(r.err.find("keys LlamaConfig does not read were ignored (model_type llama): num_experts_per_tok, "
                   "num_local_experts") != std::string::npos);
}
