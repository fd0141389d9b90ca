// The elementwise kernels a software stack runs for each memory-bound op of a layer (docs/model.md
// "Software stack"): the HBM bytes per element of the op's forward and backward, the kernels each
// launches, and what the chain keeps for its backward beyond a fused kernel's inputs. The cost model
// (model/cost_compute.cpp) prices the ops with them, the memory model (model/cost_memory.cpp) the
// activations they keep.
#pragma once

#include "model/specs.h"

namespace lagom::model {

// A fused kernel reads its inputs and writes its outputs once, and its backward moves twice that; an
// unfused chain pays each kernel's read and write. Counted from the stacks' source (the forward) and from
// autograd's formulas for each op (the backward; pytorch/pytorch:tools/autograd/derivatives.yaml), not
// profiled. e: bytes per activation element.
struct ElementwiseChain {
  double forward_bytes = 0;   // per element
  double backward_bytes = 0;  // per element
  int forward_launches = 1;
  int backward_launches = 1;
  double extra_saved_bytes = 0;  // per element, kept for the backward beyond a fused kernel's inputs
};

// The layer norm (per element of the hidden state): one kernel (LayerNorm; RMSNorm fused by TE, apex or
// Inductor) writing FP8 when `fp8_out` (TE's LayerNormLinear), or eager PyTorch's RMSNorm chain.
ElementwiseChain norm_chain(Stack stack, NormType norm, double e, bool fp8_out = false);
// Rotary embedding, per element of Q or K; launches for Q and K together.
ElementwiseChain rope_chain(Stack stack, double e);
// The FFN activation, per element of its output (f wide).
ElementwiseChain activation_chain(Stack stack, FfnType type, double e);
// The residual sum after a block, with its dropout (per element of the hidden state).
ElementwiseChain residual_chain(Stack stack, bool dropout, double e);

}  // namespace lagom::model
