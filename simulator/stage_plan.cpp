#include "simulator/stage_plan.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/cost_model.h"

namespace lagom::simulator {

namespace {

// Whether the first and last stage sum the tied embedding's gradient: Megatron does it when the output
// layer shares the embedding and they are on different stages; ZeRO-3 shards those gradients instead.
bool tied_embedding_sync(const model::WorkloadSpec& w, const model::Strategy& s) {
  return w.tied_embeddings && s.pp > 1 && s.zero < 3;
}

Status check_strategy(const model::WorkloadSpec& w, const model::Strategy& s, const CommAssignment& a,
                      const model::OverlapMethod& tp_overlap) {
  const double bucket_mb = a.bucket_mb.value_or(s.bucket_mb);
  if (!(bucket_mb > 0)) return make_error(ErrorCode::invalid_input, "bucket-mb must be a positive number");
  if (a.fsdp_prefetch < 1) return make_error(ErrorCode::invalid_input, "fsdp prefetch must be at least 1");
  if (tp_overlap.kind != model::OverlapMethodKind::none) {
    if (s.tp < 2) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("tp-overlap {} needs tp > 1", model::to_string(tp_overlap)));
    }
    if (!s.sp) {
      return make_error(
          ErrorCode::invalid_input,
          fmt::format("tp-overlap {} needs --sp (the overlapped kernels are all-gather+GEMM and "
                      "GEMM+reduce-scatter)",
                      model::to_string(tp_overlap)));
    }
  }
  if (s.dp < 1 || s.pp < 1 || s.vpp < 1 || s.micro_batch < 1 || s.global_batch < 1) {
    return make_error(ErrorCode::invalid_input, "simulate: the strategy is not resolved");
  }
  if (s.cp > 1 && s.cp_comm == model::CpCommType::a2a && (w.heads / s.tp) % s.cp != 0) {
    return make_error(
        ErrorCode::invalid_input,
        fmt::format("cp={} (Ulysses all-to-all over heads) does not divide the heads per tp rank ({})", s.cp,
                    w.heads / s.tp));
  }
  if (static_cast<int>(s.micro_batches()) < 1) {
    return make_error(ErrorCode::invalid_input, "simulate: the strategy is not resolved");
  }
  LAGOM_TRY_STATUS(model::check_pipeline_split(w, s));
  return {};
}

PassSpan make_span(const LayerPlans& plans, bool forward, int first_layer, int layers, bool embedding,
                   bool logits, bool chunk_end, bool wgrad_deferred = false) {
  PassSpan span{forward, first_layer, layers, embedding, logits, wgrad_deferred, chunk_end};
  double compute_us = 0, blocking_us = 0;
  for_each_part(span, plans, [&](const PassPlan& part) {
    compute_us += part.compute_us;
    blocking_us += part.blocking_us;
  });
  span.compute_us = compute_us;
  span.blocking_us = blocking_us;
  return span;
}

// Plans the stages of one iteration; the sizes and knobs every stage shares.
class StagePlanner {
 public:
  StagePlanner(const model::WorkloadSpec& workload, const model::Strategy& strategy,
               const IterationCosts& costs, const OpClassTable& classes, const LayerPlans& layers,
               double bucket_bytes, bool chunk_buckets)
      : m_workload(workload),
        m_strategy(strategy),
        m_costs(costs),
        m_classes(classes),
        m_layers(layers),
        m_split(model::pipeline_split(workload, strategy)),
        m_bucket_bytes(bucket_bytes),
        m_chunk_buckets(chunk_buckets),
        m_shard(model::zero_shard_group(strategy)),
        m_expert_shard(model::zero_expert_shard_group(strategy)) {
    m_param_elem = wire_element_bytes(strategy);
    // FP8 primary weights (TE's fp8_model_init) are all-gathered as FP8 bytes: Megatron-Core's buffers
    // hold them as uint8 (fp8_param_gather, NVIDIA/Megatron-LM@aa6207e2:megatron/core/distributed/
    // distributed_data_parallel.py:115-122, set by NVIDIA/NeMo@d2b21556:nemo/lightning/pytorch/plugins/
    // mixed_precision.py:125-131 and NVIDIA/NeMo@v2.1.0:…/megatron_gpt_model.py:598); NeMo's distributed
    // Adam syncs them "in UINT8" (NVIDIA/NeMo@v2.1.0:nemo/core/optim/distributed_adam.py:555-558).
    m_linear_elem = strategy.precision == model::Precision::fp8 && strategy.fp8_params ? 1.0 : m_param_elem;
    m_grad_elem = model::bytes_per_element(strategy.gradient_dtype());
    const bool dp_reduce = classes.ranks(model::Group::dp) > 1 || classes.ranks(model::Group::expert_dp) > 1;
    // ZeRO-3 and FSDP's ZeRO-2 reduce-scatter each layer's gradients after its backward, every micro-batch
    // (FSDP's post-backward hook; model::gathers_per_layer).
    m_sync = model::gathers_per_layer(strategy) ? GradientSync::every_backward
             : strategy.dp_overlap && dp_reduce ? GradientSync::last_backward
                                                : GradientSync::after_backward;
    m_grad_collective = strategy.zero >= 1 ? model::Collective::reducescatter : model::Collective::allreduce;
  }

  [[nodiscard]] StagePlan plan_stage(int stage) const;

 private:
  void add_chunk(StagePlan& plan, int chunk) const;
  void add_gradient_tasks(StagePlan& plan) const;
  void add_chunk_totals(StagePlan& plan, bool params, model::Collective dense,
                        model::Collective expert) const;
  void add_forward_gathers(StagePlan& plan) const;
  void add_buckets(StagePlan& plan, double& pending, double bucket_bytes, model::Group group,
                   model::Collective collective, bool flush) const;

  const model::WorkloadSpec& m_workload;
  const model::Strategy& m_strategy;
  const IterationCosts& m_costs;
  const OpClassTable& m_classes;
  const LayerPlans& m_layers;
  std::vector<std::vector<model::ChunkLayers>> m_split;  // [stage][chunk]
  double m_bucket_bytes = 0;
  bool m_chunk_buckets = false;  // one bucket per model chunk (bucket-mb chunk)
  double m_grad_elem = 2, m_param_elem = 2;
  double m_linear_elem = 2;  // a linear weight's bytes in the parameter all-gathers
  GradientSync m_sync = GradientSync::after_backward;
  model::Collective m_grad_collective = model::Collective::allreduce;
  // The groups of the gradients' and the parameters' collectives (model::zero_shard_group): dp and
  // expert_dp, or dp_shard for both under hybrid sharding.
  model::Group m_shard = model::Group::dp, m_expert_shard = model::Group::expert_dp;
};

// The tasks that `pending` bytes of gradients or parameters make: the full buckets of `bucket_bytes` as one
// task with a count, and with `flush` the rest (when >= 1 byte) as one more; none on a group of one rank.
// Takes them out of `pending`. Under hybrid sharding a reduce-scatter on the shard group is followed by the
// all-reduce of its output, 1/(dp_shard·cp) of its bytes, across the replicas (dp_replicate), the same
// count of calls (FSDP2's HSDP: the all-reduce of each reduce-scattered gradient, after every backward
// unless FSDPModule.set_requires_all_reduce(False), which torchtitan@e347b1e5 never calls); on the same
// stream after it, as it reads its output. A shard group of one rank reduces by the all-reduce alone.
void StagePlanner::add_buckets(StagePlan& plan, double& pending, double bucket_bytes, model::Group group,
                               model::Collective collective, bool flush) const {
  const int ranks = m_classes.ranks(group);
  const bool replicas = group == model::Group::dp_shard && collective == model::Collective::reducescatter &&
                        m_classes.ranks(model::Group::dp_replicate) > 1;
  if (ranks < 2 && !replicas) {
    pending = 0;
    return;
  }
  auto push = [&](std::int64_t bytes, double count) {
    if (ranks >= 2) plan.comm_tasks.push_back({collective, group, bytes, count});
    if (replicas) {
      const auto shard_bytes = static_cast<std::int64_t>(std::llround(static_cast<double>(bytes) / ranks));
      plan.comm_tasks.push_back(
          {model::Collective::allreduce, model::Group::dp_replicate, shard_bytes, count});
    }
  };
  const double full = std::floor(pending / bucket_bytes);
  if (full >= 1) {
    push(static_cast<std::int64_t>(bucket_bytes), full);
    pending -= full * bucket_bytes;
  }
  if (flush && pending >= 1) {
    push(static_cast<std::int64_t>(std::llround(pending)), 1);
    pending = 0;
  }
}

void StagePlanner::add_chunk(StagePlan& plan, int c) const {
  const int s = plan.stage;
  const model::ChunkLayers& split = m_split[static_cast<std::size_t>(s)][static_cast<std::size_t>(c)];
  const int first = split.first_layer, layers = split.layers;
  ChunkPlan chunk;
  chunk.first_layer = first;
  chunk.layers = layers;
  chunk.embedding = split.embedding;
  chunk.logits = split.logits;
  // A chunk of no transformer layer (the embedding or the output layer counted as its one layer) is one
  // piece of no layer.
  chunk.pieces = std::max(layers, 1);
  const bool has_layers = layers > 0;
  chunk.forward = make_span(m_layers, true, first, layers, chunk.embedding, chunk.logits, has_layers);
  chunk.backward = make_span(m_layers, false, first, layers, chunk.embedding, chunk.logits, has_layers);
  if (chunk.logits)
    chunk.backward_deferred =
        make_span(m_layers, false, first, layers, chunk.embedding, true, has_layers, true);
  chunk.first_piece = static_cast<int>(plan.pieces.size());
  const bool gathers = model::gathers_per_layer(m_strategy) && m_classes.ranks(m_shard) > 1;
  for (int j = 0; j < chunk.pieces; ++j) {
    const int layer = first + j;
    const int span_layers = layers > 0 ? 1 : 0;
    const bool embedding = chunk.embedding && j == 0, logits = chunk.logits && j == chunk.pieces - 1;
    LayerPiece piece;
    piece.layer = layer;
    // The chunk's layers end after the last piece's forward and after the first piece's backward.
    const bool forward_end = has_layers && j == chunk.pieces - 1, backward_end = has_layers && j == 0;
    piece.forward = make_span(m_layers, true, layer, span_layers, embedding, logits, forward_end);
    piece.backward = make_span(m_layers, false, layer, span_layers, embedding, logits, backward_end);
    if (logits)
      piece.backward_deferred =
          make_span(m_layers, false, layer, span_layers, embedding, true, backward_end, true);
    const LayerParams lp =
        span_layers > 0 ? m_layers.parameters[static_cast<std::size_t>(layer)] : LayerParams{};
    double params = lp.dense;
    if (embedding) params += m_costs.embedding_params();
    if (logits) params += m_costs.logits_params();
    piece.grad_bytes = params * m_grad_elem;
    piece.expert_grad_bytes = lp.expert * m_grad_elem;
    piece.param_bytes = (params - lp.dense_linear) * m_param_elem + lp.dense_linear * m_linear_elem;
    piece.expert_param_bytes = lp.expert * m_linear_elem;
    if (gathers) {
      piece.gather = CommTask{model::Collective::allgather, m_shard,
                              static_cast<std::int64_t>(piece.param_bytes + piece.expert_param_bytes), 1};
    }
    plan.grad_bytes += piece.grad_bytes;
    plan.expert_grad_bytes += piece.expert_grad_bytes;
    plan.expert_params += lp.expert;
    plan.pieces.push_back(piece);
  }
  plan.chunks.push_back(chunk);
}

void StagePlanner::add_gradient_tasks(StagePlan& plan) const {
  auto begin = [&] { return static_cast<int>(plan.comm_tasks.size()); };
  switch (plan.sync) {
    case GradientSync::every_backward:
      // One reduce-scatter of the layer's gradients after its backward, every micro-batch.
      for (LayerPiece& piece : plan.pieces) {
        piece.grads.begin = begin();
        double bytes = piece.grad_bytes, expert = piece.expert_grad_bytes;
        add_buckets(plan, bytes, std::max(bytes, 1.0), m_shard, model::Collective::reducescatter, true);
        add_buckets(plan, expert, std::max(expert, 1.0), m_expert_shard, model::Collective::reducescatter,
                    true);
        piece.grads.end = begin();
      }
      break;
    case GradientSync::last_backward:
      // Buckets fill in the order the last backward runs the chunk's layers (last layer first); the
      // chunk's first layer flushes the rest.
      for (const ChunkPlan& chunk : plan.chunks) {
        double pending = 0, pending_expert = 0;
        // One bucket per chunk: it fills with the chunk's last piece.
        double bucket = m_bucket_bytes, expert_bucket = m_bucket_bytes;
        if (m_chunk_buckets) {
          bucket = expert_bucket = 0;
          for (int j = 0; j < chunk.pieces; ++j) {
            bucket += plan.piece(chunk, j).grad_bytes;
            expert_bucket += plan.piece(chunk, j).expert_grad_bytes;
          }
          bucket = std::max(bucket, 1.0);
          expert_bucket = std::max(expert_bucket, 1.0);
        }
        for (int k = 0; k < chunk.pieces; ++k) {
          LayerPiece& piece = plan.pieces[static_cast<std::size_t>(chunk.first_piece + chunk.pieces - 1 - k)];
          piece.grads.begin = begin();
          pending += piece.grad_bytes;
          pending_expert += piece.expert_grad_bytes;
          const bool flush = k == chunk.pieces - 1;
          add_buckets(plan, pending, bucket, m_shard, m_grad_collective, flush);
          add_buckets(plan, pending_expert, expert_bucket, m_expert_shard, m_grad_collective, flush);
          piece.grads.end = begin();
        }
      }
      break;
    case GradientSync::after_backward: {
      plan.grads_after_backward.begin = begin();
      if (m_chunk_buckets) {
        add_chunk_totals(plan, false, m_grad_collective, m_grad_collective);
      } else {
        double dense = plan.grad_bytes, expert = plan.expert_grad_bytes;
        add_buckets(plan, dense, m_bucket_bytes, m_shard, m_grad_collective, true);
        add_buckets(plan, expert, m_bucket_bytes, m_expert_shard, m_grad_collective, true);
      }
      plan.grads_after_backward.end = begin();
      break;
    }
  }
}

// One task per chunk of its dense and one of its expert gradients or parameters (`params`).
void StagePlanner::add_chunk_totals(StagePlan& plan, bool params, model::Collective dense,
                                    model::Collective expert) const {
  for (const ChunkPlan& chunk : plan.chunks) {
    double bytes = 0, expert_bytes = 0;
    for (int j = 0; j < chunk.pieces; ++j) {
      const LayerPiece& piece = plan.piece(chunk, j);
      bytes += params ? piece.param_bytes : piece.grad_bytes;
      expert_bytes += params ? piece.expert_param_bytes : piece.expert_grad_bytes;
    }
    add_buckets(plan, bytes, std::max(bytes, 1.0), m_shard, dense, true);
    add_buckets(plan, expert_bytes, std::max(expert_bytes, 1.0), m_expert_shard, expert, true);
  }
}

// param-gather-overlap: each chunk's buckets as the gradient buckets cut them (in backward order, last
// layer first); a bucket's all-gather goes before the forward of the piece that completes it, its first
// layer in forward order (Megatron's forward pre-hook waits for it and dispatches the next bucket's,
// NVIDIA/Megatron-LM@aa6207e2:megatron/core/distributed/distributed_data_parallel.py:332-358,
// param_and_grad_buffer.py:217-253). With param-gather-with-optimizer, chunk 0's shards are gathered right
// after its own optimizer step instead (megatron/core/optimizer/__init__.py:398-404: chunk 0 has its own
// optimizer; distributed_data_parallel.py:419).
void StagePlanner::add_forward_gathers(StagePlan& plan) const {
  plan.forward_param_gathers = true;
  const bool with_optimizer = m_strategy.param_gather_with_optimizer;
  plan.param_gathers.begin = static_cast<int>(plan.comm_tasks.size());
  if (with_optimizer) {
    const ChunkPlan& chunk = plan.chunks.front();
    double bytes = 0, expert = 0, params = 0;
    for (int j = 0; j < chunk.pieces; ++j) {
      const LayerPiece& piece = plan.piece(chunk, j);
      bytes += piece.param_bytes;
      expert += piece.expert_param_bytes;
      params += (piece.grad_bytes + piece.expert_grad_bytes) / m_grad_elem;
    }
    const double bucket = m_chunk_buckets ? std::max(bytes, 1.0) : m_bucket_bytes;
    const double expert_bucket = m_chunk_buckets ? std::max(expert, 1.0) : m_bucket_bytes;
    add_buckets(plan, bytes, bucket, m_shard, model::Collective::allgather, true);
    add_buckets(plan, expert, expert_bucket, m_expert_shard, model::Collective::allgather, true);
    const double stage_params = plan.params + plan.expert_params;
    plan.optimizer_first_us = stage_params > 0 ? plan.optimizer_us * params / stage_params : 0.0;
  }
  plan.param_gathers.end = static_cast<int>(plan.comm_tasks.size());
  for (std::size_t c = with_optimizer ? 1 : 0; c < plan.chunks.size(); ++c) {
    const ChunkPlan& chunk = plan.chunks[c];
    double bucket = m_bucket_bytes, expert_bucket = m_bucket_bytes;
    if (m_chunk_buckets) {
      bucket = expert_bucket = 0;
      for (int j = 0; j < chunk.pieces; ++j) {
        bucket += plan.piece(chunk, j).param_bytes;
        expert_bucket += plan.piece(chunk, j).expert_param_bytes;
      }
      bucket = std::max(bucket, 1.0);
      expert_bucket = std::max(expert_bucket, 1.0);
    }
    double pending = 0, pending_expert = 0;
    for (int k = 0; k < chunk.pieces; ++k) {
      LayerPiece& piece = plan.pieces[static_cast<std::size_t>(chunk.first_piece + chunk.pieces - 1 - k)];
      piece.params_before.begin = static_cast<int>(plan.comm_tasks.size());
      pending += piece.param_bytes;
      pending_expert += piece.expert_param_bytes;
      const bool flush = k == chunk.pieces - 1;
      add_buckets(plan, pending, bucket, m_shard, model::Collective::allgather, flush);
      add_buckets(plan, pending_expert, expert_bucket, m_expert_shard, model::Collective::allgather, flush);
      piece.params_before.end = static_cast<int>(plan.comm_tasks.size());
    }
  }
}

StagePlan StagePlanner::plan_stage(int stage) const {
  StagePlan plan;
  plan.stage = stage;
  plan.sync = m_sync;
  const auto chunks = static_cast<std::size_t>(m_strategy.vpp);
  const auto layers = static_cast<std::size_t>(m_workload.layers / m_strategy.pp + 1);  // a hint
  plan.chunks.reserve(chunks);
  plan.pieces.reserve(layers);
  plan.comm_tasks.reserve(2 * layers + 4);
  for (int c = 0; c < m_strategy.vpp; ++c) add_chunk(plan, c);
  plan.params = plan.grad_bytes / m_grad_elem;
  add_gradient_tasks(plan);
  // The optimizer step on this GPU's share of the parameters.
  plan.optimizer_params = plan.params + plan.expert_params;
  if (m_strategy.zero >= 1) {
    plan.optimizer_params =
        plan.params / m_classes.ranks(m_shard) + plan.expert_params / m_classes.ranks(m_expert_shard);
  }
  plan.optimizer_us = m_costs.optimizer_us(plan.optimizer_params);
  // ZeRO 1 and DeepSpeed's ZeRO 2: gather the updated parameter shards (FSDP's ZeRO 2 gathers each layer
  // before its next forward instead: LayerPiece::gather).
  const bool gathers = m_classes.ranks(m_shard) > 1 || m_classes.ranks(m_expert_shard) > 1;
  const bool after_step = m_strategy.zero == 1 || (m_strategy.zero == 2 && !model::zero2_as_fsdp(m_strategy));
  plan.backward_gathers = m_strategy.zero == 3;
  if (after_step && m_strategy.param_gather_overlap && gathers) {
    add_forward_gathers(plan);
  } else if (after_step) {
    double bytes = 0, expert = 0;
    for (const LayerPiece& piece : plan.pieces) {
      bytes += piece.param_bytes;
      expert += piece.expert_param_bytes;
    }
    plan.param_gathers.begin = static_cast<int>(plan.comm_tasks.size());
    if (m_chunk_buckets) {
      add_chunk_totals(plan, true, model::Collective::allgather, model::Collective::allgather);
    } else {
      add_buckets(plan, bytes, m_bucket_bytes, m_shard, model::Collective::allgather, true);
      add_buckets(plan, expert, m_bucket_bytes, m_expert_shard, model::Collective::allgather, true);
    }
    plan.param_gathers.end = static_cast<int>(plan.comm_tasks.size());
  }
  plan.embedding_sync =
      tied_embedding_sync(m_workload, m_strategy) && (stage == 0 || stage == m_strategy.pp - 1);
  // Only the pipelined schedules drain the deferred GEMMs (NVIDIA/Megatron-LM@aa6207e2:megatron/core/
  // pipeline_parallel/schedules.py:528-545, called at :1470 and in the 1F1B schedule; the no-pipeline
  // schedule never does).
  const bool holds_logits = !plan.chunks.empty() && plan.chunks.back().logits;
  if (m_strategy.pp > 1 && holds_logits && m_strategy.defer_embedding_wgrad > 0) {
    plan.deferred_wgrads =
        std::min(m_strategy.defer_embedding_wgrad, static_cast<int>(m_strategy.micro_batches()));
  }
  return plan;
}

}  // namespace

int wire_element_bytes(const model::Strategy& s) {
  return s.precision == model::Precision::fp32 || s.precision == model::Precision::tf32 ? 4 : 2;
}

Result<IterationPlan> plan_iteration(const model::WorkloadSpec& workload, const model::Strategy& strategy,
                                     const IterationCosts& costs, const CommAssignment& assignment,
                                     OpClassTable& classes, bool keep_segments) {
  const model::OverlapMethod tp_overlap = assignment.tp_overlap.value_or(strategy.tp_overlap);
  LAGOM_TRY_STATUS(check_strategy(workload, strategy, assignment, tp_overlap));
  IterationPlan plan;
  plan.micro_batches = static_cast<int>(strategy.micro_batches());
  plan.fsdp_prefetch = assignment.fsdp_prefetch;
  const PassPricing pricing{strategy.tp, tp_overlap, wire_element_bytes(strategy), keep_segments,
                            strategy.precision == model::Precision::fp8 && strategy.tp_overlap_fp8_rs};
  LAGOM_TRY(plan.layers, plan_layers(workload.layers, costs, pricing, classes));
  const double bucket_bytes = assignment.bucket_mb.value_or(strategy.bucket_mb) * 1e6;
  // bucket-mb chunk, unless the assignment (tune) sets a bucket size.
  const bool chunk_buckets = strategy.bucket_per_chunk && !assignment.bucket_mb;
  const StagePlanner planner(workload, strategy, costs, classes, plan.layers, bucket_bytes, chunk_buckets);
  for (int s = 0; s < strategy.pp; ++s) plan.stages.push_back(planner.plan_stage(s));
  if (strategy.pp > 1) {
    plan.transfer = CommTask{model::Collective::sendrecv, model::Group::pp, costs.pp_message_bytes(), 1};
    if (model::pipeline_splits_over_tp(strategy)) {
      plan.transfer_gather =
          CommTask{model::Collective::allgather, model::Group::tp, costs.pp_message_bytes() * strategy.tp, 1};
    }
  }
  if (tied_embedding_sync(workload, strategy)) {
    plan.embedding_sync =
        CommTask{model::Collective::allreduce, model::Group::embedding,
                 static_cast<std::int64_t>(std::llround(costs.embedding_params() *
                                                        model::bytes_per_element(strategy.gradient_dtype()))),
                 1};
  }
  return plan;
}

}  // namespace lagom::simulator
