#include "model/hf_families.h"

#include <array>
#include <map>
#include <string>

namespace lagom::model::hf {

namespace {

// Defaults from the signature of each class's __init__ (transformers v4.55.4,
// src/transformers/models/<name>/configuration_<name>.py, at the line given). tie_word_embeddings, where
// a class does not take it, is PretrainedConfig's default, true
// (src/transformers/configuration_utils.py:224). A null default is derived as the class or its model derives
// it (hf_families.h).
// T5's attribute_map (configuration_t5.py:76-81; MT5 and UMT5 the same, configuration_mt5.py:75-80,
// configuration_umt5.py:75-80).
constexpr std::string_view k_t5_aliases =
    R"({"hidden_size": "d_model", "num_attention_heads": "num_heads", "num_hidden_layers": "num_layers",
        "head_dim": "d_kv"})";

constexpr std::array<Family, 24> k_families{{
    {"gpt2", "GPT2Config", 138, false,
     R"({"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12,
         "n_inner": null, "activation_function": "gelu_new", "tie_word_embeddings": true})",
     // configuration_gpt2.py:131-136
     R"({"hidden_size": "n_embd", "max_position_embeddings": "n_positions",
         "num_attention_heads": "n_head", "num_hidden_layers": "n_layer"})",
     false, false},
    {"gpt_neox", "GPTNeoXConfig", 147, false,
     R"({"vocab_size": 50432, "hidden_size": 6144, "num_hidden_layers": 44, "num_attention_heads": 64,
         "intermediate_size": 24576, "hidden_act": "gelu", "max_position_embeddings": 2048,
         "tie_word_embeddings": false})",
     "{}", false, true},
    {"phi", "PhiConfig", 156, false,
     R"({"vocab_size": 51200, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 24,
         "num_attention_heads": 32, "num_key_value_heads": null, "head_dim": null,
         "hidden_act": "gelu_new", "max_position_embeddings": 2048, "tie_word_embeddings": false})",
     "{}", false, true},
    {"starcoder2", "Starcoder2Config", 152, false,
     R"({"vocab_size": 49152, "hidden_size": 3072, "intermediate_size": 12288, "num_hidden_layers": 30,
         "num_attention_heads": 24, "num_key_value_heads": 2, "head_dim": null,
         "hidden_act": "gelu_pytorch_tanh", "max_position_embeddings": 4096, "sliding_window": null,
         "tie_word_embeddings": true})",
     "{}", false, true},
    {"nemotron", "NemotronConfig", 103, false,
     R"({"vocab_size": 256000, "hidden_size": 6144, "intermediate_size": 24576, "num_hidden_layers": 32,
         "num_attention_heads": 48, "head_dim": null, "num_key_value_heads": null, "hidden_act": "relu2",
         "max_position_embeddings": 4096, "tie_word_embeddings": false})",
     "{}", false, true},
    {"t5", "T5Config", 83, false,
     R"({"vocab_size": 32128, "d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6,
         "num_decoder_layers": null, "num_heads": 8, "feed_forward_proj": "relu",
         "tie_word_embeddings": true})",
     k_t5_aliases, true, false},
    {"mt5", "MT5Config", 82, false,
     R"({"vocab_size": 250112, "d_model": 512, "d_kv": 64, "d_ff": 1024, "num_layers": 8,
         "num_decoder_layers": null, "num_heads": 6, "feed_forward_proj": "gated-gelu",
         "tie_word_embeddings": false})",
     k_t5_aliases, true, false},
    {"umt5", "UMT5Config", 82, false,
     R"({"vocab_size": 250112, "d_model": 512, "d_kv": 64, "d_ff": 1024, "num_layers": 8,
         "num_decoder_layers": null, "num_heads": 6, "feed_forward_proj": "gated-gelu",
         "tie_word_embeddings": true})",
     k_t5_aliases, true, false},
    {"llama", "LlamaConfig", 161, true,
     R"({"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": null, "hidden_act": "silu",
         "max_position_embeddings": 2048, "tie_word_embeddings": false, "head_dim": null})"},
    {"mistral", "MistralConfig", 116, true,
     R"({"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": null, "hidden_act": "silu",
         "max_position_embeddings": 131072, "tie_word_embeddings": false, "sliding_window": 4096})"},
    {"mixtral", "MixtralConfig", 128, true,
     R"({"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": null, "hidden_act": "silu",
         "max_position_embeddings": 131072, "tie_word_embeddings": false, "sliding_window": null,
         "num_experts_per_tok": 2, "num_local_experts": 8})"},
    {"qwen2", "Qwen2Config", 151, true,
     R"({"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": null, "hidden_act": "silu",
         "max_position_embeddings": 32768, "tie_word_embeddings": false, "use_sliding_window": false,
         "sliding_window": 4096})"},
    {"qwen2_moe", "Qwen2MoeConfig", 170, true,
     R"({"vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
         "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": null, "hidden_act": "silu",
         "max_position_embeddings": 32768, "tie_word_embeddings": false, "use_sliding_window": false,
         "sliding_window": 4096, "decoder_sparse_step": 1, "moe_intermediate_size": 1408,
         "shared_expert_intermediate_size": 5632, "num_experts_per_tok": 4, "num_experts": 60,
         "mlp_only_layers": null})"},
    {"qwen3", "Qwen3Config", 155, true,
     R"({"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "hidden_act": "silu",
         "max_position_embeddings": 32768, "tie_word_embeddings": false, "use_sliding_window": false,
         "sliding_window": 4096})"},
    {"qwen3_moe", "Qwen3MoeConfig", 170, true,
     R"({"vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 24,
         "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": null, "hidden_act": "silu",
         "max_position_embeddings": 32768, "tie_word_embeddings": false, "use_sliding_window": false,
         "sliding_window": 4096, "decoder_sparse_step": 1, "moe_intermediate_size": 768,
         "num_experts_per_tok": 8, "num_experts": 128, "mlp_only_layers": null})"},
    {"phi3", "Phi3Config", 124, true,
     R"({"vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": null, "head_dim": null, "hidden_act": "silu",
         "max_position_embeddings": 4096, "tie_word_embeddings": false, "sliding_window": null})"},
    {"olmo", "OlmoConfig", 124, true,
     R"({"vocab_size": 50304, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": null, "head_dim": null, "hidden_act": "silu",
         "max_position_embeddings": 2048, "tie_word_embeddings": false})",
     "{}", false, true},
    {"olmo2", "Olmo2Config", 106, true,
     R"({"vocab_size": 50304, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": null, "head_dim": null, "hidden_act": "silu",
         "max_position_embeddings": 2048, "tie_word_embeddings": false})"},
    {"olmoe", "OlmoeConfig", 112, true,
     R"({"vocab_size": 50304, "hidden_size": 2048, "intermediate_size": 2048, "num_hidden_layers": 16,
         "num_attention_heads": 16, "num_key_value_heads": null, "hidden_act": "silu",
         "max_position_embeddings": 4096, "tie_word_embeddings": false, "num_experts_per_tok": 8,
         "num_experts": 64})"},
    // Gemma's model applies hidden_act (modeling_gemma.py:74); Gemma-2's hidden_activation.
    {"gemma", "GemmaConfig", 110, true,
     R"({"vocab_size": 256000, "hidden_size": 3072, "intermediate_size": 24576, "num_hidden_layers": 28,
         "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256,
         "hidden_act": "gelu_pytorch_tanh", "max_position_embeddings": 8192, "tie_word_embeddings": true})"},
    {"gemma2", "Gemma2Config", 119, true,
     R"({"vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
         "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
         "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 8192,
         "tie_word_embeddings": true, "sliding_window": 4096})"},
    // DeepSeek-MoE (v1) is remote code, not in transformers: no class defaults; its shape keys are
    // required, its MoE keys optional (absent: no experts, no shared experts, no leading dense layers).
    {"deepseek", "", 0, true,
     R"({"vocab_size": null, "hidden_size": null, "intermediate_size": null, "num_hidden_layers": null,
         "num_attention_heads": null, "num_key_value_heads": null, "hidden_act": null,
         "max_position_embeddings": null, "tie_word_embeddings": null, "n_routed_experts": null,
         "num_experts_per_tok": null, "moe_intermediate_size": null, "n_shared_experts": null,
         "first_k_dense_replace": null, "moe_layer_freq": null})"},
    // DeepSeek-V2 and V3 always build multi-head latent attention (their defaults give it its ranks).
    {"deepseek_v2", "DeepseekV2Config", 145, true,
     R"({"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": null, "hidden_act": "silu",
         "max_position_embeddings": 2048, "tie_word_embeddings": false, "first_k_dense_replace": 0,
         "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "n_routed_experts": 64,
         "n_shared_experts": 2, "qk_nope_head_dim": 128, "v_head_dim": 128, "num_experts_per_tok": null,
         "moe_intermediate_size": 1407})"},
    {"deepseek_v3", "DeepseekV3Config", 155, true,
     R"({"vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432,
         "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
         "num_key_value_heads": 128, "n_shared_experts": 1, "n_routed_experts": 256, "kv_lora_rank": 512,
         "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
         "num_experts_per_tok": 8, "first_k_dense_replace": 3, "hidden_act": "silu",
         "max_position_embeddings": 4096, "tie_word_embeddings": false})"},
}};

struct Parsed {
  nlohmann::json defaults, aliases;
};

const Parsed& parsed(const Family& family) {
  static const std::map<std::string_view, Parsed> table = [] {
    std::map<std::string_view, Parsed> out;
    for (const Family& f : k_families) {
      out[f.name] = Parsed{nlohmann::json::parse(f.defaults), nlohmann::json::parse(f.aliases)};
    }
    return out;
  }();
  return table.at(family.name);
}

}  // namespace

std::span<const Family> families() {
  return k_families;
}

const Family* find_family(std::string_view name) {
  for (const Family& family : k_families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

const nlohmann::json& defaults_of(const Family& family) {
  return parsed(family).defaults;
}

const nlohmann::json& aliases_of(const Family& family) {
  return parsed(family).aliases;
}

bool reads(const Family& family, const std::string& key) {
  return defaults_of(family).contains(key) || aliases_of(family).contains(key);
}

bool any_family_reads(const std::string& key) {
  for (const Family& family : k_families) {
    if (reads(family, key)) return true;
  }
  return false;
}

}  // namespace lagom::model::hf
