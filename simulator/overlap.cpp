#include "simulator/overlap.h"

#include <algorithm>

#include "model/overlap_plan.h"

namespace lagom::simulator {

Result<OverlapCost> price_overlap(const OverlapQuery& query) {
  if (query.method.kind == model::OverlapMethodKind::none)
    return make_error(ErrorCode::invalid_input, "tp-overlap none has no overlap plan");
  model::OverlapRequest request;
  request.kernel = query.kernel;
  request.method = query.method;
  request.ranks = query.ranks;
  request.m = std::max<std::int64_t>(query.m, 1);
  request.n = std::max<std::int64_t>(query.n, 1);
  request.k = std::max<std::int64_t>(query.k, 1);
  request.element_bytes = query.element_bytes;
  LAGOM_TRY(const model::OverlapPlan plan, model::make_overlap_plan(request));
  const auto steps = static_cast<double>(plan.ranks.front().comm.size());
  const double step_latency_us = query.collective.latency_us / std::max(1, query.ranks - 1);
  const double bandwidth_us = std::max(0.0, query.collective.time_us - query.collective.latency_us);
  model::OverlapTiming timing;
  timing.gemm_us = query.gemm_us;
  timing.reduce_us = 0;  // the reduction of received partials is memory-bound and small beside the GEMM
  timing.comm_us = bandwidth_us + steps * step_latency_us;
  timing.comm_step_latency_us = step_latency_us;
  timing.compute_slowdown = std::max(1.0, query.collective.compute_slowdown);
  timing.comm_slowdown = std::max(1.0, query.collective.comm_slowdown);
  LAGOM_TRY(const model::OverlapPrediction prediction, model::price_overlap_plan(plan, timing));
  return OverlapCost{std::max(0.0, prediction.overlapped_us - query.gemm_us)};
}

RingAttention price_ring_attention(int cp, double step_us, double single_us, double double_us,
                                   double compute_slowdown, bool backward) {
  RingAttention ring;
  if (cp < 2) return ring;
  const double slow = std::max(1.0, compute_slowdown);
  auto exchange = [&](double comm_us) {
    ring.exposed_us += std::max(0.0, comm_us - step_us) + std::min(step_us, comm_us) * (slow - 1.0);
  };
  if (!backward) {
    for (int i = 0; i + 1 < cp; ++i) exchange(single_us);
    ring.single_sends = cp - 1;
    return ring;
  }
  for (int i = 0; i < cp; ++i) exchange(i == 0 || i == cp - 1 ? single_us : double_us);
  ring.single_sends = 2;
  ring.double_sends = cp - 2;
  return ring;
}

ChunkGemm IterationCosts::gemm_beside(const model::GemmShape& shape, int /*comm_sms*/,
                                      double /*comm_GBps*/) const {
  return ChunkGemm{shape.flops() / (std::max(peak_tflops(), 1e-9) * 1e6), 1.0};
}

double te_ring_exchange_us(int tp, double chunk_us, double send_us) {
  if (tp < 2) return chunk_us;
  return (tp - 1) * std::max(chunk_us, send_us) + chunk_us;
}

double te_pipelined_us(int splits, double chunk_us, double slowdown, double chunk_rs_us) {
  if (splits < 2) return chunk_us + chunk_rs_us;
  const double beside =
      std::max(chunk_us + std::min(chunk_us, chunk_rs_us) * (std::max(1.0, slowdown) - 1.0), chunk_rs_us);
  return chunk_us + (splits - 1) * beside + chunk_rs_us;
}

double te_bulk_us(double gemm_us, double slowdown, double comm_us) {
  return std::max(gemm_us + std::min(gemm_us, comm_us) * (std::max(1.0, slowdown) - 1.0), comm_us);
}

Result<OverlapCost> IterationCosts::overlap_cost(const OverlapQuery& query) const {
  return price_overlap(query);
}

}  // namespace lagom::simulator
