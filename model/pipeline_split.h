// The pipeline split: which transformer layers each model chunk (pipeline rank, virtual chunk) holds, as
// Megatron-Core assigns them (NVIDIA/Megatron-LM@aa6207e2 = core_v0.11.0):
//   even       every virtual stage holds layers / (pp·vpp)
//   first/last --first-stage-layers F / --last-stage-layers L (num_layers_in_first/last_pipeline_stage):
//              the first (last) pipeline rank holds F (L) layers, F/vpp (L/vpp) per chunk; the other ranks
//              share the rest evenly (transformer_block.py:56-99, transformer_layer.py:31-130)
//   counted    --embedding-in-pipeline-split / --loss-in-pipeline-split
//              (account_for_embedding/loss_in_pipeline_split): the embedding (loss) counts as one layer, so
//              pp·vpp splits layers + 1 (+ 1) and the first (last) virtual stage builds one transformer
//              layer less (transformer_block.py:100-149; transformer_layer.py:131-165)
// Virtual stage k = chunk·pp + rank; layers are handed out in virtual-stage order, contiguously. (Megatron
// 0.11's offset formula with vpp and only the last stage given places rank 1 at rank 0's offset; Lagom takes
// the contiguous split that formula means: a chunk's layer count is what prices it.)
#pragma once

#include <vector>

#include "core/error.h"
#include "model/specs.h"

namespace lagom::model {

// Chunk `chunk` of pipeline rank `stage`: transformer layers [first_layer, first_layer + layers), with the
// embedding (the first virtual stage) and the output layer and loss (the last).
struct ChunkLayers {
  int first_layer = 0, layers = 0;
  bool embedding = false, logits = false;
  bool operator==(const ChunkLayers&) const = default;
};

// invalid_input when Megatron-Core would reject the split (transformer_config.py:594-700) or a chunk would
// hold nothing, e.g. "pp·vpp=64 does not divide layers + embedding + loss = 129".
Status check_pipeline_split(const WorkloadSpec& workload, const Strategy& strategy);

// Every chunk of every rank, rank-major: split[stage][chunk]. Precondition: check_pipeline_split passed.
std::vector<std::vector<ChunkLayers>> pipeline_split(const WorkloadSpec& workload, const Strategy& strategy);

}  // namespace lagom::model
