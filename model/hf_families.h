// The HuggingFace families model/hf_config.h reads, each as its transformers config class reads it: the
// keys the class takes that Lagom reads, with the class's defaults, and the aliases of its attribute_map.
// Pinned to transformers v4.55.4 (github.com/huggingface/transformers, tag v4.55.4): each row cites the line
// of its class's `__init__` in src/transformers/models/<family>/configuration_<family>.py, whose signature
// holds the defaults. Internal to model/ (hf_config.cpp); tests read it to check each family's defaults.
#pragma once

#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

namespace lagom::model::hf {

// The transformers release the defaults are read from.
inline constexpr std::string_view k_transformers_version = "v4.55.4";

struct Family {
  std::string_view name;          // model_type
  std::string_view config_class;  // transformers' class; empty: not in transformers (remote code)
  int init_line;                  // line of the class's __init__ in configuration_<name>.py (0: none)
  bool gated;                     // gate/up/down projections (LLaMA's MLP) rather than fc1/fc2
  // The keys the class reads that Lagom reads, as a JSON object of their defaults; null: no value of its
  // own (derived from other keys as the class and its model derive it: num_key_value_heads = heads,
  // head_dim = hidden / heads, n_inner = 4·n_embd, num_decoder_layers = num_layers, no sliding window,
  // no dense layers among MoE ones), or, for a family without a class, required.
  std::string_view defaults;
  // The class's attribute_map: {"alias": "key"}, keys the class accepts under another name.
  std::string_view aliases = "{}";
  // What its modeling code builds, which no config key says: the layer norm (LlamaRMSNorm and its copies,
  // T5LayerNorm, GemmaRMSNorm; false: nn.LayerNorm, Nemotron's LayerNorm1P, OLMo's non-parametric
  // LayerNorm) and rotary embeddings of Q and K (false: GPT-2's learned positions, T5's relative bias;
  // GPT-NeoX, Phi and Nemotron rotate part of each head, priced as the whole head).
  bool rmsnorm = true;
  bool rope = true;
};

// Every family read, in the order of the error that lists them.
std::span<const Family> families();
const Family* find_family(std::string_view name);

// A family's defaults and aliases, parsed once.
const nlohmann::json& defaults_of(const Family& family);
const nlohmann::json& aliases_of(const Family& family);
// Whether the family's class reads `key` (under its name or an alias).
bool reads(const Family& family, const std::string& key);
// Whether any family reads `key`: a key Lagom knows the meaning of.
bool any_family_reads(const std::string& key);

}  // namespace lagom::model::hf
