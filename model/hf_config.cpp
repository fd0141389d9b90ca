#include "model/hf_config.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "core/json_fields.h"

namespace lagom::model {

namespace {

// The families read, with what their config classes in transformers leave implicit: whether the FFN is
// gated (gate_proj/up_proj/down_proj: LLaMA's MLP and its descendants) or two matrices (fc1/fc2, GPT-2's
// c_fc/c_proj), and the default of `tie_word_embeddings` when a file omits it (PretrainedConfig's default
// is true; LlamaConfig, MistralConfig, Qwen2Config, ... set false).
struct Family {
  std::string_view name;
  bool gated;
  bool tied_by_default;
};
constexpr std::array<Family, 24> k_families{{
    {"gpt2", false, true},       {"gpt_neox", false, false},   {"phi", false, false},
    {"starcoder2", false, true}, {"nemotron", false, false},   {"t5", false, true},
    {"mt5", false, false},       {"umt5", false, false},       {"llama", true, false},
    {"mistral", true, false},    {"mixtral", true, false},     {"qwen2", true, false},
    {"qwen2_moe", true, false},  {"qwen3", true, false},       {"qwen3_moe", true, false},
    {"phi3", true, false},       {"olmo", true, false},        {"olmo2", true, false},
    {"olmoe", true, false},      {"gemma", true, true},        {"gemma2", true, true},
    {"deepseek", true, false},   {"deepseek_v2", true, false}, {"deepseek_v3", true, false},
}};

// Families whose layers are not attention + FFN blocks, with the keys that say so.
constexpr std::array<std::string_view, 7> k_state_space{"mamba", "mamba2",          "falcon_mamba", "rwkv",
                                                        "jamba", "recurrent_gemma", "zamba"};
constexpr std::array<std::string_view, 9> k_state_space_keys{
    "state_size", "ssm_state_size", "conv_kernel",          "d_conv", "expand", "time_step_rank",
    "d_state",    "mamba_d_state",  "attention_window_size"};
// DeepSeek-V2/V3's multi-head latent attention: low-rank query and key/value projections.
constexpr std::array<std::string_view, 5> k_mla_keys{"q_lora_rank", "kv_lora_rank", "qk_rope_head_dim",
                                                     "qk_nope_head_dim", "v_head_dim"};

// Keys that change neither the compute nor the memory of training (numerics, tokens, rotary embedding
// frequencies, inference caches, bookkeeping), so ignoring them is not worth a warning.
const std::set<std::string, std::less<>>& no_effect_keys() {
  static const std::set<std::string, std::less<>> keys{"_name_or_path",
                                                       "architectures",
                                                       "auto_map",
                                                       "transformers_version",
                                                       "torch_dtype",
                                                       "dtype",
                                                       "bos_token_id",
                                                       "eos_token_id",
                                                       "pad_token_id",
                                                       "sep_token_id",
                                                       "decoder_start_token_id",
                                                       "tokenizer_class",
                                                       "id2label",
                                                       "label2id",
                                                       "problem_type",
                                                       "finetuning_task",
                                                       "task_specific_params",
                                                       "initializer_range",
                                                       "initializer_factor",
                                                       "rms_norm_eps",
                                                       "layer_norm_eps",
                                                       "layer_norm_epsilon",
                                                       "norm_epsilon",
                                                       "norm_eps",
                                                       "rope_theta",
                                                       "rope_scaling",
                                                       "rotary_emb_base",
                                                       "rotary_pct",
                                                       "partial_rotary_factor",
                                                       "original_max_position_embeddings",
                                                       "attention_dropout",
                                                       "hidden_dropout",
                                                       "dropout_rate",
                                                       "dropout",
                                                       "resid_pdrop",
                                                       "embd_pdrop",
                                                       "attn_pdrop",
                                                       "summary_type",
                                                       "summary_use_proj",
                                                       "summary_activation",
                                                       "summary_proj_to_labels",
                                                       "summary_first_dropout",
                                                       "use_cache",
                                                       "output_past",
                                                       "cache_implementation",
                                                       "output_router_logits",
                                                       "router_aux_loss_coef",
                                                       "aux_loss_alpha",
                                                       "seq_aux",
                                                       "router_z_loss_coef",
                                                       "norm_topk_prob",
                                                       "scoring_func",
                                                       "topk_method",
                                                       "n_group",
                                                       "topk_group",
                                                       "routed_scaling_factor",
                                                       "ep_size",
                                                       "query_pre_attn_scalar",
                                                       "final_logit_softcapping",
                                                       "pretraining_tp",
                                                       "relative_attention_num_buckets",
                                                       "relative_attention_max_distance",
                                                       "attention_bias",
                                                       "mlp_bias",
                                                       "use_bias",
                                                       "qkv_bias",
                                                       "bias",
                                                       "scale_attn_weights",
                                                       "reorder_and_upcast_attn",
                                                       "scale_attn_by_inverse_layer_idx",
                                                       "use_parallel_residual",
                                                       "gradient_checkpointing",
                                                       "clip_qkv",
                                                       "qk_layernorm",
                                                       "sliding_window_size",
                                                       "max_window_layers",
                                                       "use_sliding_window",
                                                       "embedding_multiplier",
                                                       "logits_scaling",
                                                       "residual_multiplier",
                                                       "attention_multiplier",
                                                       "is_encoder_decoder",
                                                       "rope_type",
                                                       "classifier_dropout",
                                                       "hidden_dropout_prob",
                                                       "attention_probs_dropout_prob",
                                                       "use_return_dict",
                                                       "output_hidden_states",
                                                       "output_attentions",
                                                       "torchscript",
                                                       "num_experts_per_tok_group"};
  return keys;
}

const Family* find_family(std::string_view type) {
  for (const Family& family : k_families) {
    if (family.name == type) return &family;
  }
  return nullptr;
}

std::string family_names() {
  std::string out;
  for (const Family& family : k_families) out += (out.empty() ? "" : ", ") + std::string(family.name);
  return out;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// read_hf_config's view of the document: its reader, the reading it fills and the file's name.
struct HfKeys {
  const FieldReader& r;
  HfReading& out;
  const std::string& origin;
  [[nodiscard]] Error refuse(const std::string& what) const {
    return make_error(ErrorCode::invalid_input, origin + ": " + what);
  }
  // The first key present of `keys` (the first of them when none is), recorded as read.
  std::string pick(std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      if (r.has(key)) {
        out.read.emplace_back(key);
        return key;
      }
    }
    return *keys.begin();
  }
  void note_read(const char* key) {
    if (r.has(key)) out.read.emplace_back(key);
  }
};

// The activation, and with the family whether the FFN is gated: w.ffn_type.
Status read_activation(HfKeys& k, const Family& family, bool t5, WorkloadSpec& w) {
  std::string act = family.gated ? "silu" : "gelu";
  const std::string key =
      k.pick({"hidden_activation", "hidden_act", "activation_function", "feed_forward_proj"});
  for (const char* other : {"hidden_activation", "hidden_act", "activation_function", "feed_forward_proj"}) {
    if (other != key && k.r.has(other)) k.out.read.emplace_back(other);  // Gemma states it twice
  }
  if (k.r.has(key)) {
    LAGOM_TRY(act, k.r.string(key, std::nullopt));
  }
  bool gated = family.gated;
  if (t5 && act.rfind("gated-", 0) == 0) {  // T5 v1.1: "gated-gelu"
    gated = true;
    act = act.substr(6);
  }
  const bool silu = act == "silu" || act == "swish";
  const bool gelu = contains(act, "gelu");
  if (gated && silu) {
    w.ffn_type = FfnType::swiglu;
  } else if (gated && gelu) {
    w.ffn_type = FfnType::geglu;
  } else if (!gated && act == "relu2") {
    w.ffn_type = FfnType::squared_relu;
  } else if (!gated && (gelu || act == "relu")) {
    w.ffn_type = FfnType::gelu;
    if (act == "relu") k.out.notes.emplace_back(fmt::format("{}: relu priced as gelu (the same GEMMs)", key));
  } else {
    return k.refuse(
        fmt::format("{}: '{}' is not modelled for a {} FFN", key, act, gated ? "gated" : "plain"));
  }
  return {};
}

// The experts, when the config has more than one: w.moe.
Status read_experts(HfKeys& k, WorkloadSpec& w) {
  const std::string experts_key = k.pick({"num_local_experts", "num_experts", "n_routed_experts"});
  if (k.r.has(experts_key)) {
    LAGOM_TRY(long experts, k.r.integer(experts_key, std::nullopt, 0));
    if (experts > 1) {
      MoeSpec moe;
      moe.experts = static_cast<int>(experts);
      LAGOM_TRY(long top_k, k.r.integer(k.pick({"num_experts_per_tok"}), std::nullopt));
      moe.top_k = static_cast<int>(top_k);
      LAGOM_TRY(moe.expert_ffn_hidden, k.r.integer(k.pick({"moe_intermediate_size"}), w.ffn_hidden));
      LAGOM_TRY(long shared, k.r.integer(k.pick({"n_shared_experts"}), 0L, 0));
      moe.shared_experts = static_cast<int>(shared);
      if (k.r.has("shared_expert_intermediate_size")) {
        // Qwen2-MoE: one shared expert of its own width. A gated FFN's weights and FLOPs are linear in its
        // width, so a width k·expert_ffn_hidden is k shared experts of the routed experts' width.
        LAGOM_TRY(long width, k.r.integer(k.pick({"shared_expert_intermediate_size"}), std::nullopt, 0));
        if (width > 0) {
          if (width % moe.expert_ffn_hidden != 0) {
            return k.refuse(
                fmt::format("shared_expert_intermediate_size: {} is not a multiple of "
                            "moe_intermediate_size {} (one shared-expert width is modelled)",
                            width, moe.expert_ffn_hidden));
          }
          moe.shared_experts += static_cast<int>(width / moe.expert_ffn_hidden);
          k.out.notes.emplace_back(fmt::format(
              "shared_expert_intermediate_size {} = {} shared experts of moe_intermediate_size {}", width,
              width / moe.expert_ffn_hidden, moe.expert_ffn_hidden));
        }
      }
      LAGOM_TRY(long first_dense, k.r.integer(k.pick({"first_k_dense_replace"}), 0L, 0));
      moe.first_dense_layers = static_cast<int>(first_dense);
      // Layouts other than "every layer after the first dense ones is MoE" are not modelled.
      for (const char* key : {"decoder_sparse_step", "moe_layer_freq"}) {
        if (!k.r.has(key)) continue;
        k.out.read.emplace_back(key);
        LAGOM_TRY(long step, k.r.integer(key, std::nullopt));
        if (step != 1) {
          return k.refuse(
              fmt::format("{}: {} (MoE every {} layers) is not modelled; only every layer", key, step, step));
        }
      }
      if (k.r.has("mlp_only_layers")) {
        k.out.read.emplace_back("mlp_only_layers");
        const auto& dense = k.r.at("mlp_only_layers");
        if (!dense.is_array() || !dense.empty())
          return k.refuse("mlp_only_layers: dense layers among MoE layers are not modelled");
      }
      w.moe = moe;
    } else {
      for (const char* key : {"num_experts_per_tok", "moe_intermediate_size",
                              "shared_expert_intermediate_size", "n_shared_experts", "first_k_dense_replace",
                              "decoder_sparse_step", "moe_layer_freq", "mlp_only_layers"})
        k.note_read(key);
    }
  }

  return {};
}

}  // namespace

bool is_hf_config(const nlohmann::json& document) {
  return document.is_object() && (document.contains("model_type") || document.contains("architectures"));
}

Result<HfReading> read_hf_config(const nlohmann::json& document, const std::string& origin) {
  LAGOM_TRY_STATUS(require_object(document, origin));
  FieldReader r(document, origin, "", UnknownFields::error, k_spec_number_maximum);
  HfReading out;
  WorkloadSpec& w = out.workload;
  HfKeys k{r, out, origin};
  auto refuse = [&k](const std::string& what) { return k.refuse(what); };
  auto present = [&](auto keys) {
    std::string list;
    for (std::string_view key : keys) {
      if (r.has(std::string(key))) list += (list.empty() ? "" : ", ") + std::string(key);
    }
    return list;
  };
  auto pick = [&k](std::initializer_list<const char*> keys) { return k.pick(keys); };

  LAGOM_TRY(out.family, r.string("model_type", std::nullopt));
  out.read.emplace_back("model_type");
  if (std::find(k_state_space.begin(), k_state_space.end(), out.family) != k_state_space.end()) {
    const std::string keys = present(k_state_space_keys);
    return refuse(
        fmt::format("model_type {}: state-space layers{} are not modelled (Lagom prices attention "
                    "and FFN layers)",
                    out.family, keys.empty() ? "" : " (" + keys + ")"));
  }
  if (const std::string mla = present(k_mla_keys); !mla.empty()) {
    return refuse(
        fmt::format("{}: multi-head latent attention (DeepSeek's low-rank query and key/value "
                    "projections) is not modelled",
                    mla));
  }
  const Family* family = find_family(out.family);
  if (family == nullptr) {
    return refuse(
        fmt::format("model_type: '{}' is not a family Lagom reads (its FFN and attention shapes "
                    "cannot be told from the keys); known: {}; or write a Lagom workload file",
                    out.family, family_names()));
  }
  const bool t5 = contains(out.family, "t5");
  {
    LAGOM_TRY(const bool enc_dec, r.boolean("is_encoder_decoder", t5));
    if (enc_dec != t5) return refuse("is_encoder_decoder: only T5's encoder-decoder is modelled");
  }
  w.name = out.family;
  if (r.has("_name_or_path") && r.at("_name_or_path").is_string() &&
      !r.at("_name_or_path").get<std::string>().empty()) {
    w.name = r.at("_name_or_path").get<std::string>();
  }

  LAGOM_TRY(long layers, r.integer(pick({"num_hidden_layers", "n_layer", "num_layers"}), std::nullopt));
  w.layers = static_cast<int>(layers);
  if (t5) {
    // T5: num_layers encoder blocks, num_decoder_layers decoder blocks (with cross-attention).
    LAGOM_TRY(long decoder, r.integer(pick({"num_decoder_layers"}), layers));
    if (layers + decoder > std::numeric_limits<int>::max()) return refuse("num_decoder_layers: out of range");
    w.encoder_layers = static_cast<int>(layers);
    w.decoder_layers = static_cast<int>(decoder);
    w.layers = static_cast<int>(layers + decoder);
  }
  LAGOM_TRY(w.hidden, r.integer(pick({"hidden_size", "n_embd", "d_model"}), std::nullopt));
  LAGOM_TRY(long heads, r.integer(pick({"num_attention_heads", "n_head", "num_heads"}), std::nullopt));
  w.heads = static_cast<int>(heads);
  LAGOM_TRY(long kv, r.integer(pick({"num_key_value_heads", "n_head_kv"}), heads));
  w.kv_heads = static_cast<int>(kv);
  {
    const std::string key = pick({"head_dim", "d_kv"});
    LAGOM_TRY(long head_dim, r.integer(key, 0L, 0));
    // Only a width other than hidden / heads is kept, so a file that states the usual one reads as one
    // that omits it.
    if (head_dim > 0 && (w.hidden % w.heads != 0 || head_dim != w.hidden / w.heads)) {
      w.attention_head_dim = head_dim;
    }
  }
  LAGOM_TRY(w.ffn_hidden, r.integer(pick({"intermediate_size", "n_inner", "ffn_dim", "d_ff"}), 4 * w.hidden));
  LAGOM_TRY(w.vocab, r.integer(pick({"vocab_size"}), std::nullopt));
  {
    const std::string key = pick({"max_position_embeddings", "n_positions", "n_ctx", "seq_length"});
    LAGOM_TRY(out.context_length, r.integer(key, 0L, 0));
  }
  LAGOM_TRY(w.seq, r.integer(pick({"seq"}), 0L, 0));
  LAGOM_TRY(w.tied_embeddings, r.boolean(pick({"tie_word_embeddings"}), family->tied_by_default));

  LAGOM_TRY_STATUS(read_activation(k, *family, t5, w));

  LAGOM_TRY_STATUS(read_experts(k, w));

  // Sliding-window attention: a window shorter than the sequence makes each query attend fewer keys.
  if (r.has("sliding_window")) {
    out.read.emplace_back("sliding_window");
    LAGOM_TRY(const bool used, r.boolean("use_sliding_window", true));
    LAGOM_TRY(long window, r.integer("sliding_window", 0L, 0));
    if (used) out.sliding_window = window;
  }

  // What was neither read nor known to be without effect.
  const std::set<std::string, std::less<>> read(out.read.begin(), out.read.end());
  for (const auto& item : document.items()) {
    if (read.count(item.key()) == 0 && no_effect_keys().count(item.key()) == 0 && !item.value().is_null()) {
      out.ignored.push_back(item.key());
    }
  }
  std::sort(out.read.begin(), out.read.end());
  out.read.erase(std::unique(out.read.begin(), out.read.end()), out.read.end());
  return out;
}

}  // namespace lagom::model
