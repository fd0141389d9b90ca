// The resolved shape of a workload, `model_shape` in every document that prices one (simulate, explore,
// tune, model), and the `model --json` document built around it (docs/cli.md#lagom-model).
#pragma once

#include <string>

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

}  // namespace lagom::documents
