// Reading a HuggingFace config.json into a WorkloadSpec, and saying how it was read.
//
// Contract: a config is read only when its family (`model_type`) is one whose layers the cost model
// prices: a decoder of attention + FFN (dense or MoE) blocks, or T5's encoder-decoder. It is read as the
// family's transformers config class reads it (model/hf_families.h, pinned to a transformers release): the
// keys the class takes, with the class's defaults for those the file omits (listed in `defaulted`); a key
// the class does not take has no effect on the real model either, and is listed in `unread` (a Llama
// config's `num_local_experts` is not experts: LlamaConfig does not read it). What is not modelled is
// refused with the keys named (Mamba's state-space layers, DeepSeek-V2/V3's multi-head latent attention,
// which their classes always build); a key that may change compute or memory and is not read is listed in
// `ignored`. The command warns about `defaulted`, `unread` and `ignored`. A config's context length
// (`max_position_embeddings`) is not a training sequence length: the sequence comes from a `seq` field in the
// file or from `--seq` (the reading leaves seq 0 otherwise). Never prints; errors name the file and the key.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/specs.h"

namespace lagom::model {

struct HfReading {
  WorkloadSpec workload;     // seq 0 when the file has no `seq` field
  std::string family;        // model_type
  std::string config_class;  // the transformers class read as (LlamaConfig), or the family for remote code
  long context_length = 0;   // max_position_embeddings (n_positions, ...), 0 when absent
  // Attention window of sliding-window layers (Mistral, Gemma-2, Phi-3), tokens; 0 = full attention.
  // The cost model prices full causal attention over seq, so a window shorter than seq overestimates
  // the attention's time (the command warns).
  long sliding_window = 0;
  std::vector<std::string> read;       // keys that set a field of the workload
  std::vector<std::string> ignored;    // keys not read that may change compute or memory
  std::vector<std::string> unread;     // keys another family reads that this family's class does not
  std::vector<std::string> defaulted;  // "intermediate_size 11008": keys absent, read at the class default
  std::vector<std::string> notes;      // how keys were mapped (a shared expert's width, an activation)
};

Result<HfReading> read_hf_config(const nlohmann::json& document, const std::string& origin);

// The error for a config read without a sequence length (it names the config's context length).
Error missing_hf_seq(const HfReading& reading, const std::string& origin);

// The warnings a command gives about a reading (one each for `defaulted`, `unread` and `ignored` when
// not empty): "FILE: keys absent, read at LlamaConfig's defaults (transformers v4.55.4): ...".
std::vector<std::string> hf_warnings(const HfReading& reading, const std::string& origin);

// Whether a document is a HuggingFace config (it has `model_type` or `architectures`).
bool is_hf_config(const nlohmann::json& document);

}  // namespace lagom::model
