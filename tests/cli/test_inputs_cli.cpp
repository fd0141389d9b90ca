#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::run_lagom;

namespace {
const std::string k_hf = std::string(LAGOM_TEST_DATA_DIR) + "/hf/";
std::vector<std::string> simulate_with(std::vector<std::string> extra) {
  std::vector<std::string> args{"simulate", "--cluster", "dgx-h100", "--gpus", "8", "--global-batch", "8"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}
}  // namespace

TEST_CASE("seq given with an HF config overrides its context length and is printed", "[cli]") {
  auto r =
      run_lagom(simulate_with({"--model", k_hf + "qwen2-7b.json", "--tp", "4", "--seq", "2048", "--json"}));
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["model_shape"]["seq"] == 2048);
  CHECK(j["model_shape"]["parameters"].get<double>() == Approx(7.62e9).epsilon(0.01));
  CHECK(j["model_shape"]["flops_per_token"].get<double>() > 0);
  r = run_lagom(simulate_with({"--model", k_hf + "qwen2-7b.json", "--tp", "4"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("seq: required for a HuggingFace config: its max_position_embeddings (131072)") !=
        std::string::npos);
  r = run_lagom(simulate_with({"--model", k_hf + "qwen2-7b.json", "--tp", "4", "--seq", "2048"}));
  CHECK(r.out.find("# model: qwen2: layers 28, hidden 3584, heads 28 (kv 4, head_dim 128)") !=
        std::string::npos);
  CHECK(r.out.find("(1 node × 8") != std::string::npos);
}

TEST_CASE("lagom model shows how a config was read, its ignored keys and sliding window", "[cli]") {
  const auto r = run_lagom({"model", k_hf + "gemma-2-9b.json", "--seq", "8192", "--json"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["format"] == "huggingface");
  CHECK(j["model_shape"]["head_dim"] == 256);
  CHECK(j["model_shape"]["ffn_type"] == "geglu");
  CHECK(j["ignored"] == nlohmann::json::array({"attn_logit_softcapping"}));
  CHECK(j["sliding_window"] == 4096);
  CHECK(j["model_shape"]["parameters"].get<double>() == Approx(9.24e9).epsilon(0.01));
}

TEST_CASE("a misspelled tolerance metric is an error listing the valid names", "[cli]") {
  const std::string dir = lagom::test::temp_dir("inputs-check");
  lagom::test::write_file(dir + "/b.json", R"({"iteration_time_s": 1.0, "breakdown_s": {"compute": 1.0}})");
  lagom::test::write_file(dir + "/neg.json",
                          R"({"iteration_time_s": -1.0, "breakdown_s": {"compute": 1.0}})");
  lagom::test::write_file(dir + "/zero.json",
                          R"({"iteration_time_s": 0.0, "breakdown_s": {"compute": 1.0}})");
  auto r = run_lagom({"check", "--baseline", dir + "/b.json", "--current", dir + "/b.json", "--tolerance",
                      "iteration_time=1"});
  CHECK(r.exit_code == 2);
  CHECK(
      r.err.rfind("lagom: error: --tolerance: 'iteration_time' is not a metric of simulate documents (valid: "
                  "iteration_time_s, ",
                  0) == 0);
  // A negative time is an input error, not an improvement.
  r = run_lagom({"check", "--baseline", dir + "/b.json", "--current", dir + "/neg.json"});
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "lagom: error: " + dir + "/neg.json: iteration_time_s: -1 is negative (not a result Lagom writes)\n");
  // From a zero baseline a change is not +100%.
  r = run_lagom({"check", "--baseline", dir + "/zero.json", "--current", dir + "/b.json", "--json"});
  CHECK(r.exit_code == 1);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["metrics"][0]["delta_pct"].is_null());
  CHECK(j["metrics"][0]["status"] == "regressed");
}

TEST_CASE("strategy contradictions and out-of-range flags are refused at the flag", "[cli]") {
  auto r =
      run_lagom(simulate_with({"--model", "llama3-8b", "--pp", "2", "--vpp", "2", "--schedule", "1f1b"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "lagom: error: schedule 1f1b with vpp=2: vpp > 1 runs the interleaved schedule (give --schedule "
        "interleaved or leave it out)\n");
  r = run_lagom(
      {"simulate", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "0"});
  CHECK(r.err == "lagom: error: --global-batch: 0 is not within 1..2147483647\n");
  r = run_lagom({"cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "1000000000", "--cluster",
                 "dgx-a100"});
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "lagom: error: cost: --ranks: 1000000000 is not within 2..1048576 (more GPUs than any cluster)\n");
  r = run_lagom({"cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster",
                 "dgx-a100", "--precision", "fp8"});
  CHECK(r.exit_code == 2);
  r = run_lagom({"simulate", "--model", "llama3-8b"});
  CHECK(r.err == "lagom: error: required: --cluster PRESET|FILE|localhost, --gpus N\n");
}

TEST_CASE("vocab smaller than tp is refused instead of hanging", "[cli]") {
  const auto r =
      run_lagom({"simulate", "--layers", "2",     "--hidden", "64",           "--heads",  "8",
                 "--vocab",  "4",        "--seq", "64",       "--cluster",    "dgx-a100", "--gpus",
                 "8",        "--tp",     "8",     "--sp",     "--tp-overlap", "flash",    "--global-batch",
                 "8"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "lagom: error: tp=8 exceeds vocab=4 (each TP rank holds a vocabulary slice)\n");
}

TEST_CASE("a write the system refuses is an error with exit 1", "[cli]") {
  const auto r = run_lagom(simulate_with({"--model", "llama3-8b", "--trace", "/dev/full"}));
  CHECK(r.exit_code == 1);
  CHECK(r.err == "lagom: error: /dev/full: cannot write (No space left on device)\n");
}

TEST_CASE("a comm config tuned for another model is refused, naming the field", "[cli]") {
  const std::string dir = lagom::test::temp_dir("inputs-comm");
  lagom::test::write_file(dir + "/k.json", R"({"model": "gpt3-175b", "ops": []})");
  const auto r = run_lagom(simulate_with({"--model", "llama3-8b", "--comm-config", dir + "/k.json"}));
  CHECK(r.exit_code == 2);
  CHECK(
      r.err ==
      "lagom: error: " + dir +
          "/k.json: model: tuned for gpt3-175b but this run has llama3-8b (run 'lagom tune' for this run)\n");
}

TEST_CASE("a cluster file's nodes and NIC count bound the job", "[cli]") {
  const std::string dir = lagom::test::temp_dir("inputs-nodes");
  auto show = run_lagom({"presets", "--show", "dgx-a100", "--json"});
  auto cluster = nlohmann::json::parse(show.out);
  cluster["nodes"] = 2;
  lagom::test::write_file(dir + "/c.json", cluster.dump());
  auto r = run_lagom({"simulate", "--model", "llama3-8b", "--cluster", dir + "/c.json", "--gpus", "32",
                      "--global-batch", "32"});
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "lagom: error: " + dir + "/c.json: nodes: --gpus 32 needs 4 nodes of 8 GPUs, the cluster has 2\n");
  cluster.erase("nodes");
  cluster["nic"]["count"] = 0;
  lagom::test::write_file(dir + "/c.json", cluster.dump());
  r = run_lagom({"simulate", "--model", "llama3-8b", "--cluster", dir + "/c.json", "--gpus", "16",
                 "--global-batch", "16"});
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "lagom: error: " + dir +
            "/c.json: nic.count: 0 NICs (single-node only), but --gpus 16 needs 2 nodes of 8 GPUs\n");
}
