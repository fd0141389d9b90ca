// Reading a HuggingFace config.json into a WorkloadSpec, and saying how it was read.
//
// Contract: a config is read only when its family (`model_type`) is one whose layers the cost model
// prices: a decoder of attention + FFN (dense or MoE) blocks, or T5's encoder-decoder. What is not
// modelled is refused with the keys named (Mamba's state-space layers, DeepSeek's multi-head latent
// attention); a key that may change compute or memory and is not read is listed in `ignored`, so the
// command warns about it. A config's context length (`max_position_embeddings`) is not a training
// sequence length: the sequence comes from a `seq` field in the file or from `--seq` (the reading leaves
// seq 0 otherwise). Never prints; errors name the file and the key.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/specs.h"

namespace lagom::model {

struct HfReading {
  WorkloadSpec workload;    // seq 0 when the file has no `seq` field
  std::string family;       // model_type
  long context_length = 0;  // max_position_embeddings (n_positions, ...), 0 when absent
  // Attention window of sliding-window layers (Mistral, Gemma-2, Phi-3), tokens; 0 = full attention.
  // The cost model prices full causal attention over seq, so a window shorter than seq overestimates
  // the attention's time (the command warns).
  long sliding_window = 0;
  std::vector<std::string> read;     // keys that set a field of the workload
  std::vector<std::string> ignored;  // keys not read that may change compute or memory
  std::vector<std::string> notes;    // how keys were mapped (a shared expert's width, an activation)
};

Result<HfReading> read_hf_config(const nlohmann::json& document, const std::string& origin);

// The error for a config read without a sequence length (it names the config's context length).
Error missing_hf_seq(const HfReading& reading, const std::string& origin);

// Whether a document is a HuggingFace config (it has `model_type` or `architectures`).
bool is_hf_config(const nlohmann::json& document);

}  // namespace lagom::model
