// The resolved shape of a workload (`model_shape` in the documents of simulate, explore, tune and model):
// what the cost model prices, so a reader sees the sequence length and widths a file resolved to; and the
// `model --json` document around it.
#include "documents/model.h"

#include <utility>

#include <fmt/format.h>

#include "documents/kind.h"
#include "model/cost_model.h"

namespace lagom::documents {

double flops_per_token(const model::WorkloadSpec& workload) {
  // Model FLOPs of one sequence, forward and backward (docs/model.md#flops-convention), per token.
  return workload.seq > 0
             ? model::CostModel::model_flops_per_iteration(workload, 1) / static_cast<double>(workload.seq)
             : 0.0;
}

nlohmann::json model_shape_json(const model::WorkloadSpec& w) {
  nlohmann::json shape = {{"layers", w.layers},
                          {"hidden", w.hidden},
                          {"heads", w.heads},
                          {"kv_heads", w.kv_heads},
                          {"head_dim", w.head_dim()},
                          {"ffn_hidden", w.ffn_hidden},
                          {"ffn_type", std::string(model::to_string(w.ffn_type))},
                          {"vocab", w.vocab},
                          {"seq", w.seq},
                          {"tied_embeddings", w.tied_embeddings},
                          {"norm", std::string(model::to_string(w.norm))},
                          {"rope", w.rope},
                          {"parameters", w.parameters()},
                          {"flops_per_token", flops_per_token(w)}};
  if (w.encoder_layers + w.decoder_layers > 0) {
    shape["encoder_layers"] = w.encoder_layers;
    shape["decoder_layers"] = w.decoder_layers;
  }
  if (w.moe) {
    shape["moe"] = {{"experts", w.moe->experts},
                    {"top_k", w.moe->top_k},
                    {"expert_ffn_hidden", w.moe->expert_ffn_hidden},
                    {"shared_experts", w.moe->shared_experts},
                    {"first_dense_layers", w.moe->first_dense_layers}};
  }
  return shape;
}

std::string model_shape_text(const model::WorkloadSpec& w) {
  std::string moe;
  if (w.moe) {
    moe = fmt::format(", {} experts top-{} of {}{}", w.moe->experts, w.moe->top_k, w.moe->expert_ffn_hidden,
                      w.moe->shared_experts > 0 ? fmt::format(" +{} shared", w.moe->shared_experts) : "");
  }
  return fmt::format(
      "# model: {}: layers {}, hidden {}, heads {} (kv {}, head_dim {}), ffn {} {}{}, vocab {}, seq {}; "
      "{:.3f} B parameters, {:.4g} FLOPs per token",
      w.name, w.layers, w.hidden, w.heads, w.kv_heads, w.head_dim(), w.ffn_hidden,
      model::to_string(w.ffn_type), moe, w.vocab, w.seq, w.parameters() / 1e9, flops_per_token(w));
}

nlohmann::json model_command_shape_json(const model::WorkloadSpec& workload) {
  nlohmann::json shape = model_shape_json(workload);
  if (workload.seq == 0) shape["flops_per_token"] = nullptr;
  return shape;
}

nlohmann::json to_json(const ModelDocument& document) {
  nlohmann::json doc = {{"model", document.workload.name},
                        {"source", document.source},
                        {"format", document.format},
                        {"model_shape", model_command_shape_json(document.workload)},
                        {"workload", model::to_json(document.workload)}};
  if (document.huggingface) {
    const ModelHfFields& hf = *document.huggingface;
    doc["family"] = hf.family;
    doc["config_class"] = hf.config_class;
    doc["context_length"] = hf.context_length;
    doc["sliding_window"] = hf.sliding_window;
    doc["read"] = hf.read;
    doc["ignored"] = hf.ignored;
    doc["unread"] = hf.unread;
    doc["defaulted"] = hf.defaulted;
    doc["notes"] = hf.notes;
  }
  return stamp(Kind::model, std::move(doc));
}

}  // namespace lagom::documents
