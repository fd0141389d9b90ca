#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "model/hf_config.h"
#include "model/presets.h"
#include "model/specs.h"

using namespace lagom::model;

namespace {

nlohmann::json hf_file(const std::string& name) {
  std::ifstream in(std::string(LAGOM_TEST_DATA_DIR) + "/hf/" + name);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

HfReading read(const std::string& name) {
  auto reading = read_hf_config(hf_file(name), name);
  INFO(name << ": " << (reading.ok() ? std::string() : reading.error().message));
  REQUIRE(reading.ok());
  return *reading;
}

}  // namespace

TEST_CASE("published HuggingFace configs resolve within 1% of their published parameter counts", "[model]") {
  // The counts their model cards state (tests/data/hf/README.md).
  const std::pair<const char*, double> cases[] = {
      {"gemma-2-9b.json", 9.24e9}, {"qwen2-57b-a14b.json", 57.4e9}, {"qwen2-7b.json", 7.62e9},
      {"mistral-7b.json", 7.24e9}, {"mixtral-8x22b.json", 141e9},   {"llama-3.1-405b.json", 405.9e9},
      {"phi-3-mini.json", 3.82e9}, {"t5-large.json", 0.74e9},
  };
  for (const auto& [name, published] : cases) {
    INFO(name);
    const HfReading reading = read(name);
    CHECK(reading.workload.parameters() == Approx(published).epsilon(0.01));
  }
}

TEST_CASE("Gemma-2 is read with its head_dim, a GeGLU FFN, tied embeddings and its sliding window",
          "[model]") {
  const HfReading g = read("gemma-2-9b.json");
  CHECK(g.workload.head_dim() == 256);
  CHECK(g.workload.q_width() == 4096);
  CHECK(g.workload.ffn_type == FfnType::geglu);
  CHECK(g.workload.tied_embeddings);
  CHECK(g.sliding_window == 4096);
  CHECK(g.context_length == 8192);
  CHECK(g.workload.seq == 0);  // a context length is not a training sequence length
  // attn_logit_softcapping (a tanh per score) is not modelled and may change compute: listed.
  CHECK(g.ignored == std::vector<std::string>{"attn_logit_softcapping"});
}

TEST_CASE("Qwen2-MoE's shared expert becomes shared experts of the routed width", "[model]") {
  const HfReading q = read("qwen2-57b-a14b.json");
  REQUIRE(q.workload.moe);
  CHECK(q.workload.moe->experts == 64);
  CHECK(q.workload.moe->top_k == 8);
  CHECK(q.workload.moe->expert_ffn_hidden == 2560);
  CHECK(q.workload.moe->shared_experts == 8);  // 20480 / 2560
  CHECK(q.sliding_window == 0);                // use_sliding_window: false
  CHECK(q.ignored.empty());
  auto odd = hf_file("qwen2-57b-a14b.json");
  odd["shared_expert_intermediate_size"] = 3000;
  CHECK(read_hf_config(odd, "q.json").error().message ==
        "q.json: shared_expert_intermediate_size: 3000 is not a multiple of moe_intermediate_size 2560 (one "
        "shared-expert width is modelled)");
}

TEST_CASE("Mistral's sliding window and T5's encoder-decoder are read", "[model]") {
  CHECK(read("mistral-7b.json").sliding_window == 4096);
  const HfReading t5 = read("t5-large.json");
  CHECK(t5.workload.encoder_layers == 24);
  CHECK(t5.workload.decoder_layers == 24);
  CHECK(t5.workload.layers == 48);
  CHECK(t5.workload.ffn_type == FfnType::gelu);
  CHECK(t5.workload.tied_embeddings);
}

TEST_CASE("configs whose layers are not modelled are refused with the keys named", "[model]") {
  auto mamba = read_hf_config(hf_file("mamba-2.8b.json"), "mamba.json");
  CHECK(mamba.error().message ==
        "mamba.json: model_type mamba: state-space layers (state_size, conv_kernel, expand, time_step_rank) "
        "are not modelled (Lagom prices attention and FFN layers)");
  auto mla = read_hf_config(hf_file("deepseek-v2-lite.json"), "ds.json");
  CHECK(mla.error().message ==
        "ds.json: kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim: multi-head latent attention "
        "(DeepSeek's low-rank query and key/value projections) is not modelled");
  auto unknown = nlohmann::json::parse(R"({"model_type": "bert", "num_hidden_layers": 12})");
  CHECK(read_hf_config(unknown, "b.json")
            .error()
            .message.rfind("b.json: model_type: 'bert' is not a family Lagom reads", 0) == 0);
  auto bart = hf_file("mistral-7b.json");
  bart["is_encoder_decoder"] = true;
  CHECK(read_hf_config(bart, "m.json").error().message ==
        "m.json: is_encoder_decoder: only T5's encoder-decoder is modelled");
}

TEST_CASE("a key that may change compute and is not read is listed as ignored", "[model]") {
  auto config = hf_file("llama-3.1-405b.json");
  config["num_nextn_predict_layers"] = 1;
  config["quantization_config"] = {{"bits", 4}};
  const HfReading r = *read_hf_config(config, "c.json");
  CHECK(r.ignored == std::vector<std::string>{"num_nextn_predict_layers", "quantization_config"});
}

TEST_CASE("a HuggingFace config needs a seq: its context length is not a training sequence length",
          "[model]") {
  auto config = hf_file("qwen2-7b.json");
  CHECK(parse_hf_config(config, "q.json").error().message ==
        "q.json: seq: required for a HuggingFace config: its max_position_embeddings (131072) is the context "
        "length it supports, not a training sequence length; give --seq N (or a \"seq\" field in the file)");
  config["seq"] = 4096;
  const WorkloadSpec w = parse_hf_config(config, "q.json").value();
  CHECK(w.seq == 4096);
}

TEST_CASE("integers are range-checked into their field's type, never truncated", "[model]") {
  auto base = nlohmann::json::parse(R"({"name": "m", "layers": 4, "hidden": 64, "heads": 4, "vocab": 100,
      "seq": 32})");
  auto with = [&](const char* field, const nlohmann::json& value) {
    auto doc = base;
    doc[field] = value;
    auto parsed = parse_workload(doc, "m.json");
    return parsed.ok() ? std::string("ok") : parsed.error().message;
  };
  // 4294967308 = 2^32 + 12 would run as 12 layers if cast to int.
  CHECK(with("layers", 4294967308LL) == "m.json: layers: 4294967308 is out of range (at most 2147483647)");
  // heads = 2^32 used to become 0 and divide by zero.
  CHECK(with("heads", 4294967296LL) == "m.json: heads: 4294967296 is out of range (at most 2147483647)");
  CHECK(with("kv_heads", 4294967296LL) ==
        "m.json: kv_heads: 4294967296 is out of range (at most 2147483647)");
  CHECK(with("layers", 1e300) == "m.json: layers: 1e+300 is out of range (at most 2147483647)");
  CHECK(with("layers", 18446744073709551615ULL) ==
        "m.json: layers: 18446744073709551615 is out of range (at most 2147483647)");
  auto moe = base;
  moe["moe"] = {{"experts", 4294967300LL}, {"top_k", 2}};
  CHECK(parse_workload(moe, "m.json").error().message ==
        "m.json: moe.experts: 4294967300 is out of range (at most 2147483647)");
  auto hf = hf_file("mixtral-8x22b.json");
  hf["num_local_experts"] = 4294967300LL;
  CHECK(read_hf_config(hf, "x.json").error().message ==
        "x.json: num_local_experts: 4294967300 is out of range (at most 2147483647)");
}

TEST_CASE("cluster numbers beyond any hardware are refused at parse, naming the field", "[model]") {
  nlohmann::json c = to_json(cluster_preset("dgx-a100").value());
  c["intra"]["latency_us"] = 1e308;
  CHECK(parse_cluster(c, "c.json").error().message ==
        "c.json: intra.latency_us: 1e+308 is out of range (at most 1e+06)");
  c = to_json(cluster_preset("dgx-a100").value());
  c["gpus_per_node"] = 100000;
  CHECK(parse_cluster(c, "c.json").error().message ==
        "c.json: gpus_per_node: 100000 is out of range (at most 1024)");
}

TEST_CASE("a workload file may set head_dim, which parameters and to_json follow", "[model]") {
  auto doc = nlohmann::json::parse(R"({"name": "m", "layers": 2, "hidden": 3584, "heads": 16, "head_dim": 256,
      "kv_heads": 8, "vocab": 1000, "seq": 64, "ffn_type": "geglu", "ffn_hidden": 14336})");
  const WorkloadSpec w = parse_workload(doc, "m.json").value();
  CHECK(w.head_dim() == 256);
  CHECK(parse_workload(to_json(w), "again").value() == w);
  // Q and out are hidden × heads·head_dim, K and V hidden × kv_heads·head_dim.
  const double h = 3584, per_layer = 2 * h * 4096 + 2 * h * 2048 + 3 * h * 14336 + 4 * h;
  CHECK(w.parameters() == Approx(1000 * h + 2 * per_layer));
}
