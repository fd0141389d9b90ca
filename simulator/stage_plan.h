// The plan of one simulated iteration, per pipeline stage, as plain data: which layers each model chunk
// holds, what every compute task runs and how long it takes alone, which gradient and parameter
// collectives follow which task (the bucket schedule, ZeRO's reduce-scatters and gathers), the optimizer's
// share and the cross-stage collectives. Built once (plan_iteration) and read twice: graph.h emits the
// task graph from it, lower_bound.h sums its chains. A new kind of task is added here, to the emitter and to
// the bound; nothing else restates what the tasks are. Internal to simulator/.
//
// Layers are assigned per chunk (ChunkPlan::first_layer, layers) by model/pipeline_split.h (Megatron-Core's
// even, uneven and embedding/loss-counted splits); the readers never assume layers/(pp·vpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/error.h"
#include "model/groups.h"
#include "model/pipeline_split.h"
#include "model/specs.h"
#include "simulator/costs.h"
#include "simulator/op_classes.h"
#include "simulator/pass_plan.h"
#include "simulator/simulator.h"

namespace lagom::simulator {

// One communication task: `count` calls of `bytes` (nccl-tests bytes) on `group`, one engine task lasting
// count × the call's time alone (equal buckets ready at once are one task).
struct CommTask {
  model::Collective collective = model::Collective::allreduce;
  model::Group group = model::Group::dp;
  std::int64_t bytes = 0;
  double count = 1;
};

// A compute task's pass: layers [first_layer, first_layer + layers) in one direction, with the embedding
// (before the first layer's forward, after its backward) and the output layer (after the last layer's
// forward, before its backward) where the span holds them, and what ends the chunk's layers (after its last
// layer's forward, after its first layer's backward) where the span holds that end. Its parts run in that
// order; compute_us and blocking_us are their plans' sums in that order (for_each_part), which is also the
// order the emitter composes the task's trace segments and op class calls in.
struct PassSpan {
  bool forward = true;
  int first_layer = 0, layers = 0;
  bool embedding = false, logits = false;
  bool wgrad_deferred = false;  // backward with logits: the output layer's wgrad GEMM left for the flush
  // It ends its chunk's transformer layers (forward: holds the chunk's last layer; backward: its first):
  // LayerPlans::amax_forward / amax_backward follow them.
  bool chunk_end = false;
  double compute_us = 0, blocking_us = 0;
  [[nodiscard]] double total_us() const { return compute_us + blocking_us; }
};

// Calls visit(const PassPlan&) for each part of `span`, in issue order.
template <typename Visit>
void for_each_part(const PassSpan& span, const LayerPlans& plans, Visit&& visit) {
  const int last = span.first_layer + span.layers - 1;
  if (span.forward) {
    if (span.embedding) visit(plans.embedding_forward);
    for (int l = span.first_layer; l <= last; ++l) visit(plans.forward(l));
    if (span.chunk_end) visit(plans.amax_forward);
    if (span.logits) visit(plans.logits_forward);
  } else {
    if (span.logits) visit(span.wgrad_deferred ? plans.logits_backward_deferred : plans.logits_backward);
    for (int l = last; l >= span.first_layer; --l) visit(plans.backward(l));
    if (span.chunk_end) visit(plans.amax_backward);
    if (span.embedding) visit(plans.embedding_backward);
  }
}

// A run of StagePlan::comm_tasks.
struct TaskRange {
  int begin = 0, end = 0;
  [[nodiscard]] bool empty() const { return begin == end; }
};

// One layer of a chunk: the unit ZeRO-3's gathers and dp-overlap's buckets follow. A chunk of no transformer
// layer has one piece of no layer (forward.layers == 0): its embedding or output layer alone.
struct LayerPiece {
  int layer = 0;
  PassSpan forward, backward;    // the layer alone (with the embedding / output layer at the chunk's ends)
  PassSpan backward_deferred;    // with the output layer: its backward without the output layer's wgrad
  double grad_bytes = 0;         // its dense gradients (with the embedding's / output layer's), bytes
  double expert_grad_bytes = 0;  // its expert gradients, bytes
  // Its parameters as the distributed optimizer all-gathers them, bytes: 16-bit, or with FP8 primary
  // weights the linear weights in FP8 (1 B) beside the 16-bit rest (grad_bytes has them all 16-bit).
  double param_bytes = 0;
  double expert_param_bytes = 0;
  // ZeRO-3 and FSDP's ZeRO-2: its parameters, before its forward every micro-batch, and under ZeRO-3
  // before its backward too (StagePlan::backward_gathers).
  std::optional<CommTask> gather;
  TaskRange grads;  // gradient tasks issued after its backward (GradientSync says which backward)
  // StagePlan::forward_param_gathers: the parameter all-gathers its first forward (micro-batch 0) waits for.
  TaskRange params_before;
};

// Model chunk `chunk` of the stage (virtual stage chunk·pp + stage).
struct ChunkPlan {
  int first_layer = 0, layers = 0;
  bool embedding = false, logits = false;  // the first / the last virtual stage
  PassSpan forward, backward;              // the whole chunk as one task
  PassSpan backward_deferred;              // with logits: the backward whose output-layer wgrad is deferred
  int first_piece = 0;                     // StagePlan::pieces[first_piece + j] is layer first_layer + j
  int pieces = 0;                          // max(layers, 1)
};

// When a stage's gradients are reduced.
enum class GradientSync {
  after_backward,  // every bucket after the stage's last compute task (dp-overlap off, or nothing to reduce)
  last_backward,   // dp-overlap: the last micro-batch's backward runs layer by layer, buckets as they fill
  every_backward,  // ZeRO-3, FSDP's ZeRO-2: every pass runs layer by layer (gathers before, reduce-scatters
                   // after)
};

struct StagePlan {
  int stage = 0;
  std::vector<ChunkPlan> chunks;
  std::vector<LayerPiece> pieces;    // every chunk's, chunk by chunk
  std::vector<CommTask> comm_tasks;  // indexed by the ranges here and in the pieces
  GradientSync sync = GradientSync::after_backward;
  TaskRange grads_after_backward;  // GradientSync::after_backward: after the stage's last compute task
  // The stage's parameters on one GPU (dense with the embedding / output layer; experts) and their
  // gradient bytes, summed layer by layer.
  double params = 0, expert_params = 0;
  double grad_bytes = 0, expert_grad_bytes = 0;
  double optimizer_params = 0;  // what its optimizer step updates (ZeRO >= 1: a 1/dp shard)
  double optimizer_us = 0;
  TaskRange param_gathers;  // ZeRO-1, DeepSpeed's ZeRO-2: the updated shards, after the optimizer
  // LayerPiece::gather runs before the backward piece too (ZeRO-3), not only the forward (FSDP's ZeRO-2).
  bool backward_gathers = false;
  // ZeRO-1/2 with param-gather-overlap (Megatron's overlap_param_gather): the updated shards are gathered
  // bucket by bucket before the forward of the piece that first uses each (LayerPiece::params_before), in
  // the iteration they serve, overlapping the forward of the pieces before. With
  // param-gather-with-optimizer, chunk 0's are param_gathers, after optimizer_first_us, chunk 0's share of
  // the optimizer step (the rest of the step runs beside them).
  bool forward_param_gathers = false;
  double optimizer_first_us = 0;  // > 0: the optimizer step is two tasks, chunk 0's share first
  bool embedding_sync = false;    // takes part in IterationPlan::embedding_sync
  // defer-embedding-wgrad on the stage holding the output layer (pp > 1): the backward of its first
  // `deferred_wgrads` micro-batches leaves out the output layer's wgrad GEMM, which runs that many times
  // after the stage's last backward (Megatron's finish_embedding_wgrad_compute, before the gradients'
  // final reduction).
  int deferred_wgrads = 0;

  [[nodiscard]] std::span<const CommTask> tasks(TaskRange range) const {
    return {comm_tasks.data() + range.begin, static_cast<std::size_t>(range.end - range.begin)};
  }
  [[nodiscard]] const LayerPiece& piece(const ChunkPlan& chunk, int j) const {
    return pieces[static_cast<std::size_t>(chunk.first_piece + j)];
  }
};

struct IterationPlan {
  int micro_batches = 0;
  int fsdp_prefetch = 1;  // ZeRO-3: layers gathered ahead of the running one
  LayerPlans layers;
  std::vector<StagePlan> stages;
  std::optional<CommTask> transfer;  // pp > 1: one pipeline send/recv (activations or their gradients)
  // A stack that splits the transfer over TP (model::pipeline_splits_over_tp): the receiver's all-gather
  // of the whole tensor over its TP group, before its pass.
  std::optional<CommTask> transfer_gather;
  // Tied embedding over stages: the all-reduce of its gradient between the first and the last stage, after
  // their gradient sync and before their optimizer steps (Megatron's embedding group).
  std::optional<CommTask> embedding_sync;
};

// Bytes per element on the wire of activations and parameters: 16-bit (fp8 GEMMs still exchange bf16
// activations, parameters stay bf16); fp32/tf32 runs 4 bytes. Gradients are reduced in
// Strategy::gradient_dtype() (grad-reduce-dtype; the parameters' dtype by default, Megatron's).
int wire_element_bytes(const model::Strategy& strategy);

// The plan of one iteration: `strategy` resolved against `workload`, `costs` bound to them, `classes` on the
// same strategy and `assignment` (which gains the classes of the layers' blocking collectives). invalid_input
// for strategies the simulator cannot run, with the reason (simulator.h).
Result<IterationPlan> plan_iteration(const model::WorkloadSpec& workload, const model::Strategy& strategy,
                                     const IterationCosts& costs, const CommAssignment& assignment,
                                     OpClassTable& classes, bool keep_segments);

}  // namespace lagom::simulator
