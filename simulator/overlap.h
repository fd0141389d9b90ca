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

}  // namespace lagom::simulator
