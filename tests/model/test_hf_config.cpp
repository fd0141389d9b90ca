#include <algorithm>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "model/hf_config.h"
#include "model/hf_families.h"
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
  CHECK(
      mla.error().message ==
      "ds.json: model_type deepseek_v2: multi-head latent attention (DeepSeek's low-rank query and key/value "
      "projections: kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128; "
      "DeepseekV2Config's defaults where the file has none) is not modelled");
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

namespace {

// A family's config with every key its class defaults written out (the defaults themselves).
nlohmann::json written_defaults(const hf::Family& family) {
  nlohmann::json config = {{"model_type", family.name}};
  for (const auto& item : hf::defaults_of(family).items()) {
    if (!item.value().is_null()) config[item.key()] = item.value();
  }
  return config;
}

bool mla_family(const hf::Family& family) {
  return hf::defaults_of(family).contains("kv_lora_rank");
}

}  // namespace

TEST_CASE("a config missing each key its transformers class defaults gets the class default", "[model]") {
  for (const hf::Family& family : hf::families()) {
    if (family.config_class.empty() || mla_family(family)) continue;
    const nlohmann::json full = written_defaults(family);
    const HfReading all = *read_hf_config(full, "c.json");
    CHECK(all.defaulted.empty());
    for (const auto& item : full.items()) {
      if (item.key() == "model_type") continue;
      INFO(family.name << " without " << item.key());
      nlohmann::json missing = full;
      missing.erase(item.key());
      const auto reading = read_hf_config(missing, "c.json");
      REQUIRE(reading.ok());
      CHECK(to_json(reading->workload) == to_json(all.workload));
      CHECK(reading->context_length == all.context_length);
      CHECK(reading->sliding_window == all.sliding_window);
      CHECK(reading->defaulted == std::vector<std::string>{item.key() + " " + item.value().dump()});
    }
  }
}

TEST_CASE("the families' class defaults are transformers v4.55.4's", "[model]") {
  auto minimal = [](const char* family) {
    const auto reading = read_hf_config(nlohmann::json{{"model_type", family}}, "c.json");
    INFO(family << ": " << (reading.ok() ? std::string() : reading.error().message));
    REQUIRE(reading.ok());
    return *reading;
  };
  // LlamaConfig: intermediate_size 11008, not 4·hidden (configuration_llama.py:165).
  const HfReading llama = minimal("llama");
  CHECK(llama.workload.hidden == 4096);
  CHECK(llama.workload.ffn_hidden == 11008);
  CHECK(llama.workload.kv_heads == 32);  // num_key_value_heads None: the attention heads
  CHECK(llama.config_class == "LlamaConfig");
  // Qwen2MoeConfig's defaults are Qwen1.5-MoE-A2.7B: 14.3 B parameters, experts of width 1408 and a shared
  // expert of 5632 = 4 × 1408 (configuration_qwen2_moe.py:191-194).
  const HfReading qwen_moe = minimal("qwen2_moe");
  REQUIRE(qwen_moe.workload.moe);
  CHECK(qwen_moe.workload.moe->experts == 60);
  CHECK(qwen_moe.workload.moe->top_k == 4);
  CHECK(qwen_moe.workload.moe->expert_ffn_hidden == 1408);
  CHECK(qwen_moe.workload.moe->shared_experts == 4);
  CHECK(qwen_moe.workload.parameters() == Approx(14.3e9).epsilon(0.01));
  // Qwen3Config's head_dim is 128 whatever hidden / heads is (configuration_qwen3.py:163).
  auto qwen3 = nlohmann::json{{"model_type", "qwen3"}, {"hidden_size", 2048}, {"num_attention_heads", 32}};
  CHECK(read_hf_config(qwen3, "q.json")->workload.head_dim() == 128);
  CHECK(minimal("mistral").sliding_window == 4096);
  CHECK(minimal("qwen2").sliding_window == 0);            // use_sliding_window False
  CHECK(minimal("gpt2").workload.ffn_hidden == 4 * 768);  // n_inner None
  CHECK(minimal("gpt2").workload.tied_embeddings);        // PretrainedConfig's default
  CHECK(minimal("umt5").workload.tied_embeddings);
  CHECK_FALSE(minimal("mt5").workload.tied_embeddings);
  CHECK(minimal("mixtral").workload.moe->experts == 8);
  CHECK(minimal("mixtral").workload.moe->expert_ffn_hidden == 14336);  // the FFN's width: no key of its own
  CHECK(minimal("olmoe").workload.moe->experts == 64);
  CHECK(minimal("qwen3_moe").workload.moe->expert_ffn_hidden == 768);
  CHECK(minimal("gemma").workload.head_dim() == 256);
  CHECK(minimal("t5").workload.layers == 12);  // num_decoder_layers None: num_layers
}

TEST_CASE("MoE keys in a dense family are not experts: the family stays dense and the keys are named",
          "[model]") {
  const std::vector<std::string> moe_keys{"num_local_experts", "num_experts", "n_routed_experts",
                                          "num_experts_per_tok", "moe_intermediate_size"};
  for (const hf::Family& family : hf::families()) {
    if (family.config_class.empty() || mla_family(family) ||
        hf::defaults_of(family).contains("num_experts_per_tok"))
      continue;
    INFO(family.name);
    nlohmann::json config = written_defaults(family);
    const double dense = read_hf_config(config, "c.json")->workload.parameters();
    for (const auto& key : moe_keys) config[key] = 8;
    const HfReading reading = *read_hf_config(config, "c.json");
    CHECK_FALSE(reading.workload.moe);
    CHECK(reading.workload.parameters() == dense);
    std::vector<std::string> unread = reading.unread;
    std::sort(unread.begin(), unread.end());
    CHECK(unread == std::vector<std::string>{"moe_intermediate_size", "n_routed_experts", "num_experts",
                                             "num_experts_per_tok", "num_local_experts"});
  }
  // Llama-3.1 with num_local_experts: 8 was a 47.5 B MoE; LlamaConfig does not read the key.
  auto llama = hf_file("llama-3.1-405b.json");
  llama["num_local_experts"] = 8;
  const HfReading r = *read_hf_config(llama, "l.json");
  CHECK(r.workload.parameters() == Approx(405.9e9).epsilon(0.01));
  CHECK(hf_warnings(r, "l.json") ==
        std::vector<std::string>{
            "l.json: keys LlamaConfig does not read were ignored (model_type llama): num_local_experts"});
}

TEST_CASE("DeepSeek-V2/V3 are always multi-head latent attention: refused with their class defaults",
          "[model]") {
  auto v2 = nlohmann::json::parse(R"({"model_type": "deepseek_v2", "hidden_size": 2048,
      "num_hidden_layers": 27, "num_attention_heads": 16, "vocab_size": 102400, "num_experts_per_tok": 6})");
  CHECK(
      read_hf_config(v2, "v2.json").error().message ==
      "v2.json: model_type deepseek_v2: multi-head latent attention (DeepSeek's low-rank query and key/value "
      "projections: q_lora_rank 1536, kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128, "
      "v_head_dim 128; DeepseekV2Config's defaults where the file has none) is not modelled");
  CHECK(read_hf_config(nlohmann::json{{"model_type", "deepseek_v3"}}, "v3.json")
            .error()
            .message.find("DeepseekV3Config's defaults") != std::string::npos);
  // DeepSeek-MoE (v1) has no class in transformers: its shape keys are required, not guessed.
  CHECK(read_hf_config(nlohmann::json{{"model_type", "deepseek"}}, "d.json").error().message ==
        "d.json: num_hidden_layers: required");
}

TEST_CASE("absent keys are named with the class default they were read at", "[model]") {
  auto config = hf_file("llama-3.1-405b.json");
  config.erase("intermediate_size");
  const HfReading r = *read_hf_config(config, "l.json");
  CHECK(r.workload.ffn_hidden == 11008);
  CHECK(hf_warnings(r, "l.json") ==
        std::vector<std::string>{"l.json: keys absent, read at LlamaConfig's defaults (transformers "
                                 "v4.55.4): intermediate_size 11008"});
}
