#include "model/hf_config.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "core/json_fields.h"
#include "model/hf_families.h"

namespace lagom::model {

namespace {

// Families whose layers are not attention + FFN blocks, with the keys that say so.
constexpr std::array<std::string_view, 7> k_state_space{"mamba", "mamba2",          "falcon_mamba", "rwkv",
                                                        "jamba", "recurrent_gemma", "zamba"};
constexpr std::array<std::string_view, 9> k_state_space_keys{
    "state_size", "ssm_state_size", "conv_kernel",          "d_conv", "expand", "time_step_rank",
    "d_state",    "mamba_d_state",  "attention_window_size"};
// DeepSeek-V2/V3's multi-head latent attention: low-rank query and key/value projections (the families'
// classes always build it: hf_families.cpp gives their defaults).
constexpr std::array<std::string_view, 5> k_mla_keys{"q_lora_rank", "kv_lora_rank", "qk_rope_head_dim",
                                                     "qk_nope_head_dim", "v_head_dim"};

// Keys that change neither the compute nor the memory of training (numerics, tokens, rotary embedding
// frequencies, inference caches, bookkeeping), so ignoring them is not worth a warning.
const std::set<std::string, std::less<>>& no_effect_keys() {
  static const std::set<std::string, std::less<>> keys{
      "_name_or_path", "architectures", "auto_map", "transformers_version", "torch_dtype", "dtype",
      "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id",
      "tokenizer_class", "id2label", "label2id", "problem_type", "finetuning_task", "task_specific_params",
      "initializer_range", "initializer_factor", "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon",
      "norm_epsilon", "norm_eps", "rope_theta", "rope_scaling", "rotary_emb_base", "rotary_pct",
      "partial_rotary_factor", "original_max_position_embeddings", "attention_dropout", "hidden_dropout",
      "dropout_rate", "dropout", "resid_pdrop", "embd_pdrop", "attn_pdrop", "summary_type",
      "summary_use_proj", "summary_activation", "summary_proj_to_labels", "summary_first_dropout",
      "use_cache", "output_past", "cache_implementation", "output_router_logits", "router_aux_loss_coef",
      "aux_loss_alpha", "seq_aux", "router_z_loss_coef", "norm_topk_prob", "scoring_func", "topk_method",
      "n_group", "topk_group", "routed_scaling_factor", "ep_size", "query_pre_attn_scalar",
      "final_logit_softcapping", "pretraining_tp", "relative_attention_num_buckets",
      "relative_attention_max_distance", "attention_bias", "mlp_bias", "use_bias", "qkv_bias", "bias",
      "scale_attn_weights", "reorder_and_upcast_attn", "scale_attn_by_inverse_layer_idx",
      "use_parallel_residual", "gradient_checkpointing", "clip_qkv", "qk_layernorm", "sliding_window_size",
      "max_window_layers", "use_sliding_window", "embedding_multiplier", "logits_scaling",
      "residual_multiplier", "attention_multiplier", "is_encoder_decoder", "rope_type", "classifier_dropout",
      "hidden_dropout_prob", "attention_probs_dropout_prob", "use_return_dict", "output_hidden_states",
      "output_attentions", "torchscript", "num_experts_per_tok_group",
      // context lengths of older files no class reads
      "n_ctx", "seq_length"};
  return keys;
}

std::string family_names() {
  std::string out;
  for (const hf::Family& family : hf::families()) out += (out.empty() ? "" : ", ") + std::string(family.name);
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
Status read_activation(HfKeys& k, const hf::Family& family, bool t5, WorkloadSpec& w) {
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

std::vector<std::string> hf_warnings(const HfReading& reading, const std::string& origin) {
  auto joined = [](const std::vector<std::string>& keys) {
    std::string out;
    for (const auto& key : keys) out += (out.empty() ? "" : ", ") + key;
    return out;
  };
  std::vector<std::string> out;
  if (!reading.defaulted.empty()) {
    out.push_back(fmt::format("{}: keys absent, read at {}'s defaults (transformers {}): {}", origin,
                              reading.config_class, hf::k_transformers_version, joined(reading.defaulted)));
  }
  if (!reading.unread.empty()) {
    out.push_back(fmt::format("{}: keys {} does not read were ignored (model_type {}): {}", origin,
                              reading.config_class, reading.family, joined(reading.unread)));
  }
  if (!reading.ignored.empty()) {
    out.push_back(fmt::format("{}: keys not modelled, which may change compute or memory, were ignored: {}",
                              origin, joined(reading.ignored)));
  }
  return out;
}

bool is_hf_config(const nlohmann::json& document) {
  return document.is_object() && (document.contains("model_type") || document.contains("architectures"));
}

namespace {

// Keys Lagom reads in every family: its own `seq`, and what says which family and which network it is.
bool lagom_key(const std::string& key) {
  return key == "model_type" || key == "seq" || key == "is_encoder_decoder" || key == "_name_or_path";
}

// The document as the family's class reads it: the keys it reads as the file gives them (a null too), its
// defaults for those the file omits (listed in out.defaulted), and nothing it does not read (listed in
// out.unread when another family reads the key, else in out.ignored when it may change compute or memory).
nlohmann::json family_view(const nlohmann::json& document, const hf::Family& family, HfReading& out) {
  nlohmann::json view = nlohmann::json::object();
  for (const auto& item : document.items()) {
    const std::string& key = item.key();
    if (lagom_key(key) || hf::reads(family, key)) {
      view[key] = item.value();
    } else if (no_effect_keys().count(key) != 0 || item.value().is_null()) {
      continue;
    } else if (hf::any_family_reads(key)) {
      out.unread.push_back(key);
    } else {
      out.ignored.push_back(key);
    }
  }
  const nlohmann::json& aliases = hf::aliases_of(family);
  for (const auto& item : hf::defaults_of(family).items()) {
    bool given = document.contains(item.key());
    for (const auto& alias : aliases.items()) {
      if (alias.value() == item.key() && document.contains(alias.key())) given = true;
    }
    if (given || item.value().is_null()) continue;
    view[item.key()] = item.value();
    out.defaulted.push_back(fmt::format("{} {}", item.key(), item.value().dump()));
  }
  return view;
}

std::string class_name(const hf::Family& family) {
  return family.config_class.empty() ? std::string(family.name) : std::string(family.config_class);
}

}  // namespace

Result<HfReading> read_hf_config(const nlohmann::json& document, const std::string& origin) {
  LAGOM_TRY_STATUS(require_object(document, origin));
  HfReading out;
  {
    const FieldReader file(document, origin, "", UnknownFields::error, k_spec_number_maximum);
    LAGOM_TRY(out.family, file.string("model_type", std::nullopt));
  }
  if (std::find(k_state_space.begin(), k_state_space.end(), out.family) != k_state_space.end()) {
    std::string keys;
    for (std::string_view key : k_state_space_keys) {
      if (document.contains(key)) keys += (keys.empty() ? "" : ", ") + std::string(key);
    }
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{}: model_type {}: state-space layers{} are not modelled (Lagom prices "
                                  "attention and FFN layers)",
                                  origin, out.family, keys.empty() ? "" : " (" + keys + ")"));
  }
  const hf::Family* family = hf::find_family(out.family);
  if (family == nullptr) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{}: model_type: '{}' is not a family Lagom reads (its FFN and attention "
                                  "shapes cannot be told from the keys); known: {}; or write a Lagom "
                                  "workload file",
                                  origin, out.family, family_names()));
  }
  out.config_class = class_name(*family);
  const nlohmann::json view = family_view(document, *family, out);
  FieldReader r(view, origin, "", UnknownFields::error, k_spec_number_maximum);
  WorkloadSpec& w = out.workload;
  HfKeys k{r, out, origin};
  auto refuse = [&k](const std::string& what) { return k.refuse(what); };
  auto pick = [&k](std::initializer_list<const char*> keys) { return k.pick(keys); };
  out.read.emplace_back("model_type");
  {
    std::string mla;
    for (std::string_view key : k_mla_keys) {
      if (r.has(std::string(key)))
        mla += fmt::format("{}{} {}", mla.empty() ? "" : ", ", key, r.at(std::string(key)).dump());
    }
    if (!mla.empty()) {
      return refuse(fmt::format(
          "model_type {}: multi-head latent attention (DeepSeek's low-rank query and key/value projections: "
          "{}; {}'s defaults where the file has none) is not modelled",
          out.family, mla, class_name(*family)));
    }
  }
  const bool t5 = contains(out.family, "t5");
  {
    LAGOM_TRY(const bool enc_dec, r.boolean("is_encoder_decoder", t5));
    if (enc_dec != t5) return refuse("is_encoder_decoder: only T5's encoder-decoder is modelled");
  }
  w.name = out.family;
  // The norm and the position embedding are the family's modeling code, not config keys.
  w.norm = family->rmsnorm ? NormType::rmsnorm : NormType::layernorm;
  w.rope = family->rope;
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
  {
    // GPT-2's n_inner: None is 4·n_embd (modeling_gpt2.py GPT2Block); every other family's width is given
    // or defaulted by its class.
    const bool inner = hf::reads(*family, "n_inner");
    LAGOM_TRY(w.ffn_hidden, r.integer(pick({"intermediate_size", "n_inner", "d_ff"}),
                                      inner ? std::optional<std::int64_t>(4 * w.hidden) : std::nullopt));
  }
  LAGOM_TRY(w.vocab, r.integer(pick({"vocab_size"}), std::nullopt));
  {
    const std::string key = pick({"max_position_embeddings", "n_positions"});
    LAGOM_TRY(out.context_length, r.integer(key, 0L, 0));
  }
  LAGOM_TRY(w.seq, r.integer(pick({"seq"}), 0L, 0));
  LAGOM_TRY(w.tied_embeddings, r.boolean(pick({"tie_word_embeddings"}), std::nullopt));

  LAGOM_TRY_STATUS(read_activation(k, *family, t5, w));

  LAGOM_TRY_STATUS(read_experts(k, w));

  // Sliding-window attention: a window shorter than the sequence makes each query attend fewer keys.
  if (r.has("sliding_window")) {
    out.read.emplace_back("sliding_window");
    LAGOM_TRY(const bool used, r.boolean("use_sliding_window", true));
    LAGOM_TRY(long window, r.integer("sliding_window", 0L, 0));
    if (used) out.sliding_window = window;
  }

  // Only what the file gave counts as read (defaults are listed in out.defaulted).
  out.read.erase(std::remove_if(out.read.begin(), out.read.end(),
                                [&document](const std::string& key) { return !document.contains(key); }),
                 out.read.end());
  std::sort(out.read.begin(), out.read.end());
  out.read.erase(std::unique(out.read.begin(), out.read.end()), out.read.end());
  return out;
}

}  // namespace lagom::model
