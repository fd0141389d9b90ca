// TP overlap (slice:K, flash) priced through model's overlap plans, so the simulator prices exactly the
// schedule kernels/ executes (DESIGN.md "Kernels"). A thin adapter from a layer's (GEMM, collective) pair
// to model::price_overlap_plan().
#pragma once

#include <cstdint>

#include "core/error.h"
#include "model/specs.h"
#include "simulator/costs.h"

namespace lagom::simulator {

// The two FlashOverlap kernels of a TP layer (model::OverlapKernel's ag_gemm and gemm_rs).
enum class OverlapPair { ag_gemm, gemm_rs };

struct OverlapQuery {
  OverlapPair kernel = OverlapPair::ag_gemm;
  model::TpOverlap method;          // slice:K or flash (none is invalid here)
  int ranks = 2;                    // tp
  std::int64_t m = 0, n = 0, k = 0; // the global GEMM (model/overlap_plan.h)
  int element_bytes = 2;
  double gemm_us = 0;               // the GEMM on one rank, alone
  CollectivePrice collective;       // the unsplit collective on the tp group, alone, and its interference
};

struct OverlapCost {
  double exposed_us = 0;  // time the pair adds beyond gemm_us (exposed communication + slowdowns), >= 0
};

// The plan for (kernel, method, ranks, shape) priced with: GEMM time gemm_us; communication time the
// collective's bandwidth part plus one per-step latency per comm step of the plan (the collective's
// latency_us spread over its ranks − 1 ring steps); the collective's compute/comm slowdowns.
// invalid_input for a bad shape or method.
Result<OverlapCost> price_overlap(const OverlapQuery& query);

}  // namespace lagom::simulator
