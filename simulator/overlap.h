// TP overlap (slice:K, flash) priced through model's overlap plans, so the simulator prices exactly the
// schedule kernels/ executes (docs/kernels.md#plans-and-pricing-for-the-simulator). A thin adapter from a
// layer's (GEMM, collective) pair to model::price_overlap_plan().
#pragma once

#include <cstdint>

#include "core/error.h"
#include "model/specs.h"
#include "simulator/costs.h"

namespace lagom::simulator {

// The plan for (kernel, method, ranks, shape) priced with: GEMM time gemm_us; communication time the
// collective's bandwidth part plus one per-step latency per comm step of the plan (the collective's
// latency_us spread over its ranks − 1 ring steps); the collective's compute/comm slowdowns.
// invalid_input for a bad shape or method.
Result<OverlapCost> price_overlap(const OverlapQuery& query);

// Context parallelism's ring (cp-comm-type p2p) as TE's AttnFuncWithCPAndKVP2P runs it
// (NVIDIA/TransformerEngine@3b2a7b00:transformer_engine/pytorch/attention.py:1742; forward loop
// :1963-1994, backward :2766-2770, 2821-2858, 3294-3303): cp attention steps of step_us each (one
// (tokens/cp)² block); beside step i runs the exchange for step i + 1. Forward: cp − 1 sends of the K/V
// block (single_us each). Backward: step 0 sends K/V (single_us), steps 1 … cp − 2 K/V with the
// accumulated dK/dV (double_us: twice the bytes), the last step dK/dV only (single_us); each is waited for
// before the next step (forward) or the dK/dV accumulation (backward). A step lasts
// max(step + its share of the slowdown, exchange): exposed = Σ max(0, exchange − step) plus, for the part of
// the step the exchange overlaps, (compute_slowdown − 1) × that part (its CTAs take SMs from the attention).
// TP overlap te: Transformer Engine's userbuffers with the defaults NeMo leaves them
// (NVIDIA/TransformerEngine@3b2a7b00:transformer_engine/pytorch/module/base.py:280-313; the GEMM keeps all
// SMs, set_sm_margin false: …/common/comm_gemm_overlap/comm_gemm_overlap.cpp:82). The three methods:
//   ring exchange (qkv and fc1 forward, proj and fc2 dgrad; num_splits = tp, copy engines: no SMs):
//     tp GEMM chunks of 1/tp of the rows, the first on the rank's own rows, each later one on the chunk the
//     previous step received (…/comm_gemm_overlap.cpp:679-830): (tp − 1)·max(chunk, send) + chunk;
//   pipelined (proj and fc2 forward; 4 splits, 16 SMs): GEMM chunk i + 1 beside chunk i's reduce-scatter
//     (:333-460): chunk + 3·max(chunk slowed while they overlap, chunk RS) + the last chunk's RS;
//   bulk (qkv and fc1 backward; 16 SMs): the wgrad input all-gather beside the dgrad GEMM, the dgrad
//     reduce-scatter beside the wgrad GEMM (:180-230): max(GEMM slowed while they overlap, collective).
inline constexpr int k_te_pipeline_splits = 4;  // "num_splits": 4 if method == "pipeline" (base.py:310)
inline constexpr int k_te_comm_sms = 16;        // "num_sm": 16 for pipeline and bulk (base.py:307)
double te_ring_exchange_us(int tp, double chunk_us, double send_us);
double te_pipelined_us(int splits, double chunk_us, double slowdown, double chunk_rs_us);
double te_bulk_us(double gemm_us, double slowdown, double comm_us);

struct RingAttention {
  double exposed_us = 0;  // beyond cp · step_us
  int single_sends = 0;   // exchanges of one K/V block
  int double_sends = 0;   // exchanges of two (backward: K/V and dK/dV)
};
RingAttention price_ring_attention(int cp, double step_us, double single_us, double double_us,
                                   double compute_slowdown, bool backward);

}  // namespace lagom::simulator
