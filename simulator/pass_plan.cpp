#include "simulator/pass_plan.h"

#include <algorithm>
#include <cmath>

namespace lagom::simulator {

void PassPlan::add_count(int op_class, double count) {
  for (auto& [cls, n] : class_counts) {
    if (cls == op_class) {
      n += count;
      return;
    }
  }
  class_counts.emplace_back(op_class, count);
}

void PassPlan::append(const PassPlan& other, bool keep_segments) {
  compute_us += other.compute_us;
  blocking_us += other.blocking_us;
  if (keep_segments) segments.insert(segments.end(), other.segments.begin(), other.segments.end());
  for (const auto& [cls, n] : other.class_counts) add_count(cls, n);
}

namespace {

// Prices steps into pass plans; remembers the overlapped pairs it priced (a layer repeats them).
class PassPlanner {
 public:
  PassPlanner(const IterationCosts& costs, const PassPricing& pricing, OpClassTable& classes)
      : m_costs(costs), m_pricing(pricing), m_classes(classes) {}

  // `recompute`: the steps rerun before a backward (their trace names say so).
  Result<PassPlan> to_plan(const std::vector<model::Step>& steps, bool recompute = false);

 private:
  void add_compute(PassPlan& plan, const std::string& name, double us) const;
  void add_collective(PassPlan& plan, const model::CommOp& comm);
  Status add_overlapped(PassPlan& plan, const model::ComputeOp& gemm, const model::CommOp& comm,
                        model::OverlapKernel kernel);

  const IterationCosts& m_costs;
  const PassPricing& m_pricing;
  OpClassTable& m_classes;
  std::vector<std::pair<OverlapQuery, double>> m_overlap_cache;  // query → exposed µs
};

std::int64_t comm_bytes(const model::CommOp& comm) {
  return static_cast<std::int64_t>(std::llround(comm.bytes));
}

void PassPlanner::add_compute(PassPlan& plan, const std::string& name, double us) const {
  plan.compute_us += us;
  if (m_pricing.keep_segments) plan.segments.push_back({name, -1, us});
}

void PassPlanner::add_collective(PassPlan& plan, const model::CommOp& comm) {
  const std::int64_t bytes = comm_bytes(comm);
  if (m_classes.ranks(comm.group) < 2 || bytes <= 0) return;
  const int cls = m_classes.find_or_add(comm.collective, comm.group, bytes);
  const double us = m_classes.work_us(cls, 1);
  plan.blocking_us += us;
  plan.add_count(cls, 1);
  if (m_pricing.keep_segments) plan.segments.push_back({comm.name, cls, us});
}

Status PassPlanner::add_overlapped(PassPlan& plan, const model::ComputeOp& gemm, const model::CommOp& comm,
                                   model::OverlapKernel kernel) {
  const int cls = m_classes.find_or_add(comm.collective, model::Group::tp, comm_bytes(comm));
  const int tp = m_pricing.tp;
  OverlapQuery query;
  query.kernel = kernel;
  query.method = m_pricing.tp_overlap;
  query.ranks = tp;
  // The per-GPU GEMM is one rank's share of the global problem: column-parallel (ag-gemm) splits n,
  // row-parallel (gemm-rs) splits k.
  query.m = gemm.gemm.m;
  query.n = kernel == model::OverlapKernel::ag_gemm ? gemm.gemm.n * tp : gemm.gemm.n;
  query.k = kernel == model::OverlapKernel::gemm_rs ? gemm.gemm.k * tp : gemm.gemm.k;
  query.element_bytes = m_pricing.element_bytes;
  query.gemm_us = gemm.time_us;
  query.collective = m_classes.price(cls);
  double exposed_us = 0;
  bool cached = false;
  for (const auto& [q, e] : m_overlap_cache) {
    if (q.kernel == query.kernel && q.m == query.m && q.n == query.n && q.k == query.k &&
        q.gemm_us == query.gemm_us && q.collective.time_us == query.collective.time_us) {
      exposed_us = e;
      cached = true;
      break;
    }
  }
  if (!cached) {
    LAGOM_TRY(const OverlapCost cost, m_costs.overlap_cost(query));
    exposed_us = cost.exposed_us;
    m_overlap_cache.emplace_back(query, exposed_us);
  }
  plan.compute_us += gemm.time_us;
  plan.blocking_us += exposed_us;
  plan.add_count(cls, 1);
  if (m_pricing.keep_segments) {
    plan.segments.push_back({gemm.name, -1, gemm.time_us});
    plan.segments.push_back({comm.name + " (overlapped, exposed part)", cls, exposed_us});
  }
  return {};
}

Result<PassPlan> PassPlanner::to_plan(const std::vector<model::Step>& steps, bool recompute) {
  PassPlan plan;
  const bool overlap = m_pricing.tp > 1 && m_pricing.tp_overlap.kind != model::OverlapMethodKind::none;
  auto is_tp = [](const model::Step& step, model::Collective collective) {
    return step.is_comm && step.comm.group == model::Group::tp && step.comm.collective == collective;
  };
  auto is_gemm = [](const model::Step& step) { return !step.is_comm && step.compute.is_weight_gemm(); };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const model::Step& step = steps[i];
    if (overlap && i + 1 < steps.size()) {
      // FlashOverlap's pairs: an all-gather feeding a column-parallel GEMM, a row-parallel GEMM feeding a
      // reduce-scatter (both directions of the pass; the model orders the steps as Megatron issues them).
      const model::Step& next = steps[i + 1];
      if (is_tp(step, model::Collective::allgather) && is_gemm(next)) {
        LAGOM_TRY_STATUS(add_overlapped(plan, next.compute, step.comm, model::OverlapKernel::ag_gemm));
        ++i;
        continue;
      }
      if (is_gemm(step) && is_tp(next, model::Collective::reducescatter)) {
        LAGOM_TRY_STATUS(add_overlapped(plan, step.compute, next.comm, model::OverlapKernel::gemm_rs));
        ++i;
        continue;
      }
    }
    if (step.is_comm) {
      add_collective(plan, step.comm);
    } else {
      add_compute(plan, recompute ? "recompute " + step.compute.name : step.compute.name,
                  step.compute.time_us);
    }
  }
  return plan;
}

}  // namespace

Result<LayerPlans> plan_layers(int layers, const IterationCosts& costs, const PassPricing& pricing,
                               OpClassTable& classes) {
  PassPlanner planner(costs, pricing, classes);
  LayerPlans out;
  const auto count = static_cast<std::size_t>(layers);
  out.parameters.resize(count);
  out.layer_slot.assign(count, -1);
  std::vector<std::pair<int, int>> slots;  // (variant, slot), in order of first appearance
  for (int l = 0; l < layers; ++l) {
    const auto i = static_cast<std::size_t>(l);
    const int variant = costs.layer_variant(l);
    const auto known =
        std::find_if(slots.begin(), slots.end(), [&](const auto& e) { return e.first == variant; });
    out.parameters[i] = costs.layer_params(l);
    if (known != slots.end()) {
      out.layer_slot[i] = known->second;
      continue;
    }
    out.layer_slot[i] = static_cast<int>(out.variant_forward.size());
    slots.emplace_back(variant, out.layer_slot[i]);
    LAGOM_TRY(PassPlan forward, planner.to_plan(costs.layer_steps(l, model::Phase::forward)));
    // The backward pass first reruns what recomputation drops (full: the forward with its collectives).
    LAGOM_TRY(PassPlan backward, planner.to_plan(costs.layer_steps(l, model::Phase::recompute), true));
    LAGOM_TRY(const PassPlan rest, planner.to_plan(costs.layer_steps(l, model::Phase::backward)));
    backward.append(rest, pricing.keep_segments);
    out.variant_forward.push_back(std::move(forward));
    out.variant_backward.push_back(std::move(backward));
  }
  LAGOM_TRY(out.embedding_forward, planner.to_plan(costs.embedding_steps(model::Phase::forward)));
  LAGOM_TRY(out.embedding_backward, planner.to_plan(costs.embedding_steps(model::Phase::backward)));
  LAGOM_TRY(out.logits_forward, planner.to_plan(costs.logits_steps(model::Phase::forward)));
  LAGOM_TRY(out.logits_backward, planner.to_plan(costs.logits_steps(model::Phase::backward)));
  for (const auto* plans : {&out.variant_forward, &out.variant_backward}) {
    for (const PassPlan& plan : *plans) {
      if (!std::isfinite(plan.total_us()) || plan.total_us() < 0) {
        return make_error(ErrorCode::failure, "simulate: the cost model priced a layer as not finite");
      }
    }
  }
  return out;
}

}  // namespace lagom::simulator
