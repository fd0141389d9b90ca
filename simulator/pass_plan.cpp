#include "simulator/pass_plan.h"

#include <algorithm>
#include <cmath>

#include "simulator/overlap.h"

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
  void add_ring(PassPlan& plan, const model::ComputeOp& attention, const model::CommOp& comm, bool backward);
  // tp-overlap te's three methods (simulator/overlap.h).
  void add_te_ring(PassPlan& plan, const model::ComputeOp& gemm, const model::CommOp& comm);
  void add_te_pipelined(PassPlan& plan, const model::ComputeOp& gemm, const model::CommOp& comm);
  void add_te_bulk(PassPlan& plan, const model::ComputeOp& gemm, const model::CommOp& comm);
  void add_decomposed(PassPlan& plan, const model::ComputeOp& gemm, const model::CommOp& comm, int cls,
                      double compute_us, double total_us, double calls);

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

void PassPlanner::add_ring(PassPlan& plan, const model::ComputeOp& attention, const model::CommOp& comm,
                           bool backward) {
  const int cp = m_classes.ranks(model::Group::cp);
  const std::int64_t bytes = comm_bytes(comm);
  const int single = m_classes.find_or_add(model::Collective::sendrecv, model::Group::cp, bytes);
  const int twice = backward && cp > 2
                        ? m_classes.find_or_add(model::Collective::sendrecv, model::Group::cp, 2 * bytes)
                        : -1;
  const double step_us = attention.time_us / cp;
  const RingAttention ring = price_ring_attention(cp, step_us, m_classes.work_us(single, 1),
                                                  twice < 0 ? 0.0 : m_classes.work_us(twice, 1),
                                                  m_classes.price(single).compute_slowdown, backward);
  plan.compute_us += attention.time_us;
  plan.blocking_us += ring.exposed_us;
  plan.add_count(single, ring.single_sends);
  if (twice >= 0) plan.add_count(twice, ring.double_sends);
  if (m_pricing.keep_segments) {
    plan.segments.push_back({attention.name, -1, attention.time_us});
    plan.segments.push_back({comm.name + " (overlapped, exposed part)", single, ring.exposed_us});
  }
}

void PassPlanner::add_decomposed(PassPlan& plan, const model::ComputeOp& gemm, const model::CommOp& comm,
                                 int cls, double compute_us, double total_us, double calls) {
  const double exposed_us = std::max(0.0, total_us - compute_us);
  plan.compute_us += compute_us;
  plan.blocking_us += exposed_us;
  plan.add_count(cls, calls);
  if (m_pricing.keep_segments) {
    plan.segments.push_back({gemm.name, -1, compute_us});
    plan.segments.push_back({comm.name + " (overlapped, exposed part)", cls, exposed_us});
  }
}

// Bus bytes per µs × 10^-3 of a call: what the interference model reads as the collective's HBM traffic.
double bus_GBps(model::Collective collective, std::int64_t bytes, int ranks, double us) {
  return us > 0 ? static_cast<double>(bytes) * model::busbw_factor(collective, ranks) / (us * 1e3) : 0.0;
}

void PassPlanner::add_te_ring(PassPlan& plan, const model::ComputeOp& gemm, const model::CommOp& comm) {
  const int tp = m_pricing.tp;
  const model::GemmShape chunk{std::max<std::int64_t>(1, gemm.gemm.m / tp), gemm.gemm.n, gemm.gemm.k, 1};
  const ChunkGemm piece = m_costs.gemm_beside(chunk, 0, 0.0);  // copy engines: no SMs taken
  const int send =
      m_classes.find_or_add(model::Collective::sendrecv, model::Group::tp, comm_bytes(comm) / tp);
  const double total = te_ring_exchange_us(tp, piece.us, m_classes.work_us(send, 1));
  add_decomposed(plan, gemm, comm, send, tp * piece.us, total, tp - 1);
}

void PassPlanner::add_te_pipelined(PassPlan& plan, const model::ComputeOp& gemm, const model::CommOp& comm) {
  const int splits = k_te_pipeline_splits;
  // An FP8 userbuffer (fp8_buf): the GEMM writes its output in FP8 and the reduce-scatter sums the peers'
  // FP8 chunks into the BF16 result (NVIDIA/TransformerEngine@3b2a7b00:transformer_engine/pytorch/module/
  // linear.py:201-206; common/comm_gemm_overlap/comm_gemm_overlap.cpp:311,407: reducescatter2_userbuff_
  // stridedoutput_fp8), 1 B per element on the wire.
  const bool fp8 = m_pricing.fp8_reduce_scatter && gemm.fp8;
  const std::int64_t bytes = comm_bytes(comm) / (fp8 ? m_pricing.element_bytes : 1) / splits;
  const int rs = m_classes.find_or_add(model::Collective::reducescatter, model::Group::tp, bytes);
  const double rs_us = m_classes.work_us(rs, 1);
  const model::GemmShape chunk{std::max<std::int64_t>(1, gemm.gemm.m / splits), gemm.gemm.n, gemm.gemm.k, 1};
  const ChunkGemm piece = m_costs.gemm_beside(
      chunk, k_te_comm_sms, bus_GBps(model::Collective::reducescatter, bytes, m_pricing.tp, rs_us));
  const double total = te_pipelined_us(splits, piece.us, piece.slowdown, rs_us);
  add_decomposed(plan, gemm, comm, rs, splits * piece.us, total, splits);
}

void PassPlanner::add_te_bulk(PassPlan& plan, const model::ComputeOp& gemm, const model::CommOp& comm) {
  const std::int64_t bytes = comm_bytes(comm);
  const int cls = m_classes.find_or_add(comm.collective, model::Group::tp, bytes);
  const double comm_us = m_classes.work_us(cls, 1);
  const ChunkGemm beside =
      m_costs.gemm_beside(gemm.gemm, k_te_comm_sms, bus_GBps(comm.collective, bytes, m_pricing.tp, comm_us));
  add_decomposed(plan, gemm, comm, cls, gemm.time_us, te_bulk_us(gemm.time_us, beside.slowdown, comm_us), 1);
}

Result<PassPlan> PassPlanner::to_plan(const std::vector<model::Step>& steps, bool recompute) {
  PassPlan plan;
  const bool overlap = m_pricing.tp > 1 && m_pricing.tp_overlap.kind != model::OverlapMethodKind::none;
  const bool te = overlap && m_pricing.tp_overlap.kind == model::OverlapMethodKind::te;
  auto is_tp = [](const model::Step& step, model::Collective collective) {
    return step.is_comm && step.comm.group == model::Group::tp && step.comm.collective == collective;
  };
  auto is_gemm = [](const model::Step& step) { return !step.is_comm && step.compute.is_weight_gemm(); };
  auto is_ring = [](const model::Step& step) {
    return step.is_comm && step.comm.group == model::Group::cp &&
           step.comm.collective == model::Collective::sendrecv;
  };
  auto is_attention = [](const model::Step& step) {
    return !step.is_comm && step.compute.kind == model::OpKind::attention;
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const model::Step& step = steps[i];
    // CP's ring: the attention then its exchange (forward, recompute), or the exchange then the attention's
    // backward (the model lists a pass's steps in issue order, the backward reversed).
    if (i + 1 < steps.size() && m_classes.ranks(model::Group::cp) > 1) {
      const model::Step& next = steps[i + 1];
      if (is_attention(step) && is_ring(next)) {
        add_ring(plan, step.compute, next.comm, false);
        ++i;
        continue;
      }
      if (is_ring(step) && is_attention(next)) {
        add_ring(plan, next.compute, step.comm, true);
        ++i;
        continue;
      }
    }
    // TE's userbuffers serve the transformer layer's linears, not the output layer (Megatron's own
    // ColumnParallelLinear): its all-gather stays a plain collective.
    if (te && i + 1 < steps.size() && !step.compute.name.starts_with("logits") &&
        !steps[i + 1].compute.name.starts_with("logits")) {
      const model::Step& next = steps[i + 1];
      // Bulk: dgrad GEMM ∥ the wgrad input's all-gather, then wgrad GEMM ∥ the dgrad reduce-scatter (the
      // backward of a TP region's entry, as the model lists it: dgrad, all-gather, wgrad, reduce-scatter).
      if (i + 3 < steps.size() && is_gemm(step) && is_tp(next, model::Collective::allgather) &&
          next.comm.phase == model::Phase::backward && is_gemm(steps[i + 2]) &&
          is_tp(steps[i + 3], model::Collective::reducescatter)) {
        add_te_bulk(plan, step.compute, next.comm);
        add_te_bulk(plan, steps[i + 2].compute, steps[i + 3].comm);
        i += 3;
        continue;
      }
      if (is_tp(step, model::Collective::allgather) && is_gemm(next)) {
        add_te_ring(plan, next.compute, step.comm);
        ++i;
        continue;
      }
      if (is_gemm(step) && is_tp(next, model::Collective::reducescatter)) {
        if (next.comm.phase == model::Phase::backward)
          add_te_bulk(plan, step.compute, next.comm);
        else
          add_te_pipelined(plan, step.compute, next.comm);
        ++i;
        continue;
      }
    }
    if (overlap && !te && i + 1 < steps.size()) {
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
  LAGOM_TRY(out.amax_forward, planner.to_plan(costs.amax_steps(model::Phase::forward)));
  LAGOM_TRY(out.amax_backward, planner.to_plan(costs.amax_steps(model::Phase::backward)));
  LAGOM_TRY(out.logits_forward, planner.to_plan(costs.logits_steps(model::Phase::forward)));
  const std::vector<model::Step> logits_backward = costs.logits_steps(model::Phase::backward);
  LAGOM_TRY(out.logits_backward, planner.to_plan(logits_backward));
  std::vector<model::Step> without_wgrad, wgrad;
  for (const model::Step& step : logits_backward)
    (!step.is_comm && step.compute.name == "logits.wgrad" ? wgrad : without_wgrad).push_back(step);
  LAGOM_TRY(out.logits_backward_deferred, planner.to_plan(without_wgrad));
  LAGOM_TRY(out.logits_wgrad, planner.to_plan(wgrad));
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
