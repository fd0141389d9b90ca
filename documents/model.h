// The resolved shape of a workload, `model_shape` in every document that prices one (simulate, explore,
// tune, model), and the `model --json` document built around it (docs/cli.md#lagom-model).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/specs.h"

namespace lagom::documents {

// layers, hidden, heads, kv_heads, head_dim, ffn_hidden, ffn_type, vocab, seq, tied_embeddings, parameters
// (a count), flops_per_token (model FLOPs, forward and backward, per token); encoder/decoder layers and moe
// when set.
nlohmann::json model_shape_json(const model::WorkloadSpec& workload);
// The same as one '#' line of the human outputs.
std::string model_shape_text(const model::WorkloadSpec& workload);
// Model FLOPs per token of one sequence, forward and backward (0 without a sequence length).
double flops_per_token(const model::WorkloadSpec& workload);

// What a HuggingFace config.json said beyond the workload (model/hf_config.h).
struct ModelHfFields {
  std::string family;        // model_type
  std::string config_class;  // the transformers class it was read as (model/hf_families.h)
  long context_length = 0, sliding_window = 0;
  std::vector<std::string> read, ignored, unread, defaulted, notes;
};

// `model --json` (kind "model"): how a model was read.
struct ModelDocument {
  model::WorkloadSpec workload;  // resolved
  std::string source;            // as given: a preset name or a file
  std::string format;            // "preset", "lagom", "huggingface"
  std::optional<ModelHfFields> huggingface;
};
// The `model_shape` of `model --json` (and the rows of its table): model_shape_json's, with
// `flops_per_token` null without a sequence length (the other documents price a sequence: they have one).
nlohmann::json model_command_shape_json(const model::WorkloadSpec& workload);
// Stamped with its kind and version.
nlohmann::json to_json(const ModelDocument& document);

}  // namespace lagom::documents
