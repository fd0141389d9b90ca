// Pipeline schedules: the order in which one pipeline stage runs the forward and backward passes of its
// model chunks over the micro-batches of an iteration (Megatron-LM's schedules.py semantics).
//   gpipe        all forwards, then all backwards (micro-batch order)
//   1f1b         warm-up of min(p−s−1, m) forwards, then one forward / one backward, then the remaining
//                backwards (Narayanan et al., SC'21 §2.2)
//   interleaved  v model chunks per stage; warm-up (p−s−1)·2 + (v−1)·p forwards (all m·v when m = p),
//                chunk of the k-th forward (k mod p·v) / p, of the k-th backward v−1 minus that,
//                micro-batch ⌊k / (p·v)⌋·p + k mod p (Megatron's get_model_chunk_id)
// Each op names a (chunk, micro-batch, direction); every stage runs each of its m·v forwards and m·v
// backwards exactly once.
#pragma once

#include <vector>

#include "model/specs.h"

namespace lagom::simulator {

struct PipelineOp {
  int chunk = 0;
  int micro_batch = 0;
  bool forward = true;
  bool operator==(const PipelineOp&) const = default;
};

// Preconditions (resolve_strategy checks them): stages >= 1, 0 <= stage < stages, chunks >= 1 (== 1 unless
// interleaved), micro_batches >= 1 (a multiple of stages when interleaved).
std::vector<PipelineOp> stage_schedule(model::Schedule schedule, int stages, int stage, int chunks,
                                       int micro_batches);

}  // namespace lagom::simulator
