#include "model/elementwise.h"

namespace lagom::model {

namespace {

// A fused kernel moving `forward` bytes per element: its backward reads the saved input and the incoming
// gradient and writes the gradient, twice the forward's bytes.
ElementwiseChain fused(double forward) {
  return {forward, 2.0 * forward, 1, 1, 0.0};
}

}  // namespace

// RMSNorm as eager PyTorch runs it: torchtitan's RMSNorm (pytorch/torchtitan@7c3a1fac2:torchtitan/models/
// norms.py:95-100, `norm_type = "rmsnorm"` in its Llama configs) and HuggingFace's LlamaRMSNorm alike:
// x.float() (read e, write 4), pow(2) (4 + 4), mean (4), + eps and rsqrt (per token), x · rsqrt (4 + 4),
// type_as (4 + e), · weight (e + e): 28 + 4e bytes, 8 kernels. Backward, autograd's nodes: the weight
// product's two gradients (g·w: 2e; g·out summed over tokens: 4e), type_as's (e + 4), x · rsqrt's two
// (g·r: 8; g·x summed per token: 12), mean's expand (4), pow's 2·x·g (3 kernels, 28), the two paths'
// accumulation (12), float's (4 + e): 80 + 9e bytes, 14 kernels. Without a cast (fp32 activations) the two
// casts and their gradients go: 20 + 2e and 72 + 7e bytes, 6 and 12 kernels. Kept for the backward: the
// fp32 copy pow and the product save and the normalised output the weight's product saves, where a fused
// norm keeps its input: 4 B more. LayerNorm is one ATen kernel in eager PyTorch too.
ElementwiseChain norm_chain(Stack stack, NormType norm, double e, bool fp8_out) {
  if (norm == NormType::rmsnorm && stack == Stack::pytorch_eager) {
    if (e >= 4.0) return {20.0 + 2.0 * e, 72.0 + 7.0 * e, 6, 12, 4.0};
    return {28.0 + 4.0 * e, 80.0 + 9.0 * e, 8, 14, 4.0};
  }
  return fused(e + (fp8_out ? 1.0 : e));  // read the input, write the output (FP8 for TE's LayerNormLinear)
}

// Rotary embedding of one element of Q or K; launches for Q and K together.
//  * fused (Megatron-Core with apply_rope_fusion, on in NeMo's Llama, Mixtral and Nemotron configs,
//    NVIDIA/NeMo@8cfedd7203:nemo/collections/llm/gpt/model/llama.py:81; Transformer Engine's
//    fused_rope; Inductor under torch.compile): read e, write e, each way; one kernel per tensor.
//  * pytorch-eager (torchtitan's apply_rotary_emb, pytorch/torchtitan@7c3a1fac2:torchtitan/models/llama/
//    model.py:109-113: float(), a complex product with the frequencies, type_as): (e + 4) + 8 + (4 + e) =
//    16 + 2e bytes, 3 kernels per tensor; the backward the same three in reverse. HuggingFace's
//    rotate_half form (q·cos + rotate_half(q)·sin in the activation dtype) moves 10e, the same at e = 2.
//  * megatron-deepspeed (microsoft/Megatron-DeepSpeed@f4157bea:megatron/model/rotary_pos_embedding.py:
//    47-69: t·cos, rotate_half's neg and cat, ·sin, the sum, and a cat with the empty pass-through part):
//    12e, 6 kernels per tensor; backward the two products, the neg, the accumulation and chunk's cat: 10e,
//    5 kernels.
ElementwiseChain rope_chain(Stack stack, double e) {
  switch (stack) {
    case Stack::pytorch_eager:
      return {16.0 + 2.0 * e, 16.0 + 2.0 * e, 6, 6, 0.0};
    case Stack::megatron_deepspeed:
      return {12.0 * e, 10.0 * e, 12, 10, 0.0};
    case Stack::megatron_core:
    case Stack::pytorch_compile:
      break;
  }
  return {2.0 * e, 2.0 * e, 2, 2, 0.0};  // the backward reads the gradient and writes it: 1x
}

// The FFN activation per element of its output (f wide), as the stack runs it. Fused (Megatron-Core's
// bias_swiglu / bias_gelu, Inductor, a single ATen gelu): read the inputs (2 when gated), write the
// output; backward twice that. Unfused gated (pytorch-eager's `F.silu(w1(x)) * w3(x)`, torchtitan
// models/llama/model.py and HuggingFace's LlamaMLP; Megatron-DeepSpeed's swiglu, megatron/model/
// transformer.py:138-140): silu (e + e) then the product (2e + e): 5e, 2 kernels; backward the product's two
// gradients (3e each) and silu's (3e): 9e, 3 kernels. Squared ReLU under eager PyTorch (relu, then square):
// 4e, 2 kernels; backward 6e, 3 kernels. An unfused gated activation keeps silu's output for the product
// beside its inputs: e more per element.
ElementwiseChain activation_chain(Stack stack, FfnType type, double e) {
  const bool unfused_gated =
      is_gated(type) && (stack == Stack::pytorch_eager || stack == Stack::megatron_deepspeed);
  if (unfused_gated) return {5.0 * e, 9.0 * e, 2, 3, e};
  if (type == FfnType::squared_relu && stack == Stack::pytorch_eager) return {4.0 * e, 6.0 * e, 2, 3, 0.0};
  return fused(e * (is_gated(type) ? 3.0 : 2.0));
}

// bias-dropout-add: read the branch and the residual, write the sum, and with dropout its 1-byte mask
// (torch's dropout keeps a bool mask, Megatron's bias_dropout_add_fusion). Eager PyTorch runs the dropout
// (read e, write e and the mask) and the sum as two kernels.
ElementwiseChain residual_chain(Stack stack, bool dropout, double e) {
  if (dropout && stack == Stack::pytorch_eager) {
    ElementwiseChain c = fused(5.0 * e + 1.0);
    c.forward_launches = c.backward_launches = 2;
    return c;
  }
  return fused(3.0 * e + (dropout ? 1.0 : 0.0));
}

}  // namespace lagom::model
