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

Result<OverlapCost> IterationCosts::overlap_cost(const OverlapQuery& query) const {
  return price_overlap(query);
}

}  // namespace lagom::simulator
