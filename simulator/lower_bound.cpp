#include "simulator/lower_bound.h"

#include <algorithm>

namespace lagom::simulator {

namespace {

// Work alone of the tasks the emitter makes of the plan's calls.
class Prices {
 public:
  explicit Prices(OpClassTable& classes) : m_classes(classes) {}
  double operator()(const CommTask& task) const {
    return m_classes.work_us(m_classes.find_or_add(task.collective, task.group, task.bytes), task.count);
  }
  double operator()(std::span<const CommTask> tasks) const {
    double us = 0;
    for (const CommTask& task : tasks) us += (*this)(task);
    return us;
  }

 private:
  OpClassTable& m_classes;
};

// One stage's streams, summed from its plan in the order the emitter issues them.
StageWork stage_work(const IterationPlan& plan, const StagePlan& stage, const Prices& prices,
                     const model::Strategy& strategy) {
  const double m = plan.micro_batches;
  StageWork w;
  bool last_gradient_tasks = false, any_gradient_tasks = false;
  for (std::size_t c = 0; c < stage.chunks.size(); ++c) {
    const ChunkPlan& chunk = stage.chunks[c];
    const double forward_us = chunk.forward.total_us(), backward_us = chunk.backward.total_us();
    w.passes_us += m * (forward_us + backward_us);
    if (c == 0) w.first_forward_us = forward_us, w.first_backward_us = backward_us;
    double chunk_scatters_us = 0;  // per-layer gathers: one backward's reduce-scatters
    // Per layer piece, in the order the last micro-batch's backward issues them (the last layer first).
    for (int k = 0; k < chunk.pieces; ++k) {
      const int j = chunk.pieces - 1 - k;
      const LayerPiece& piece = stage.piece(chunk, j);
      if (piece.gather) {
        const double gather_us = prices(*piece.gather);
        // Before the forward piece of every micro-batch, and under ZeRO-3 before the backward piece too.
        w.gathers_us += (stage.backward_gathers ? 2 : 1) * m * gather_us;
        if (c == 0 && j == 0) w.first_gather_us = gather_us;
      }
      if (stage.forward_param_gathers) {
        // The first micro-batch's forward waits piece by piece; the first piece's go first on the dp stream.
        const double before_us = prices(stage.tasks(piece.params_before));
        w.forward_gathers_us += before_us;
        if (c == 0 && j == 0) w.first_gather_us = std::max(w.first_gather_us, before_us);
      }
      const double piece_us = prices(stage.tasks(piece.grads));
      any_gradient_tasks = any_gradient_tasks || !piece.grads.empty();
      if (stage.sync == GradientSync::every_backward) chunk_scatters_us += piece_us;
      if (stage.sync == GradientSync::last_backward) w.gradients_us += piece_us;
      // The stage's last compute task is chunk 0's first layer piece of the last backward.
      if (c == 0 && j == 0 && stage.sync != GradientSync::after_backward) {
        w.last_gradients_us = piece_us;
        last_gradient_tasks = !piece.grads.empty();
      }
    }
    if (stage.sync == GradientSync::every_backward) w.gradients_us += m * chunk_scatters_us;
  }
  if (stage.sync == GradientSync::after_backward) {
    w.gradients_us = w.last_gradients_us = prices(stage.tasks(stage.grads_after_backward));
    last_gradient_tasks = any_gradient_tasks = !stage.grads_after_backward.empty();
  }
  // The drained wgrads are part of passes_us already (the deferred backwards leave them out).
  w.deferred_us = stage.deferred_wgrads * plan.layers.logits_wgrad.total_us();
  w.optimizer_us = stage.optimizer_us;
  w.optimizer_first_us = stage.optimizer_first_us;
  w.parameter_gathers_us = prices(stage.tasks(stage.param_gathers));
  if (stage.embedding_sync && plan.embedding_sync) {
    w.embedding_us = prices(*plan.embedding_sync);
    // It waits for the stage's last gradient task, which follows the last compute task when it was issued
    // after it (or when there is none: then it waits for the last compute task itself).
    w.embedding_follows_passes = last_gradient_tasks || !any_gradient_tasks;
  }
  // Sends: every forward but the last virtual stage's, every backward but the first's; each but possibly
  // the stage's last pass delays the next pass on the compute stream.
  const int p = strategy.pp, s = stage.stage;
  const double v = strategy.vpp;
  if (p > 1) w.sends = std::max(0.0, 2 * m * v - (s == p - 1 ? m : 0) - (s == 0 ? m : 0) - 1);
  // p2p-overlap: a send delays a pass only past the next send's pass, which this sum does not chain.
  const bool overlap = strategy.p2p_overlap && strategy.schedule == model::Schedule::interleaved;
  w.blocking_sends = overlap ? 0.0 : w.sends;
  return w;
}

}  // namespace

// Chains of the task graph graph.h emits from the same plan (the proof is at iteration_lower_bound_us in
// simulator.h); every chain named is one of its paths.
LowerBound lower_bound(const model::WorkloadSpec& workload, const model::Strategy& strategy,
                       const IterationPlan& plan, OpClassTable& classes) {
  const Prices prices(classes);
  const int p = strategy.pp;
  // One pipeline transfer (the sender's pp stream; its next pass waits for it).
  const double transfer_us = plan.transfer ? prices(*plan.transfer) : 0.0;
  // Whether every gradient task runs on the shard group's link (graph.h: the NICs when the group spans
  // nodes): the expert gradients' group and, under hybrid sharding, the replicas' all-reduces too.
  auto spans_nodes = [&](model::Group group) { return classes.shape_of(group).nodes > 1; };
  const model::Group shard = model::zero_shard_group(strategy);
  const bool one_grad_link =
      (!workload.moe || spans_nodes(model::zero_expert_shard_group(strategy)) == spans_nodes(shard)) &&
      (classes.ranks(model::Group::dp_replicate) < 2 ||
       spans_nodes(model::Group::dp_replicate) == spans_nodes(shard));
  const bool pp_on_grad_link = p > 1 && spans_nodes(model::Group::pp) == spans_nodes(shard);
  // Per-layer gathers (ZeRO-3, FSDP's ZeRO-2) where the plan placed them (StagePlanner::add_chunk).
  const bool gathers = std::any_of(plan.stages.begin(), plan.stages.end(), [](const StagePlan& stage) {
    return std::any_of(stage.pieces.begin(), stage.pieces.end(),
                       [](const LayerPiece& piece) { return piece.gather.has_value(); });
  });

  LowerBound out;
  double best = 0;
  double head_us = 0;        // earliest start of micro-batch 0's chunk-0 forward on this stage
  double tail_us = 0;        // sum over the stages before this one of (transfer + chunk-0 backward)
  double stage0_end_us = 0;  // stage 0: what follows its last backward (gradient tasks, optimizer, gather)
  for (const StagePlan& stage : plan.stages) {
    const StageWork w = stage_work(plan, stage, prices, strategy);
    const double start_us = std::max(head_us, w.first_gather_us);
    const double last_pass_end_us = start_us + w.passes_us + w.blocking_sends * transfer_us;
    // The optimizer then its gathers; with param-gather-with-optimizer they follow its first part only.
    const double step_us = w.optimizer_first_us > 0
                               ? std::max(w.optimizer_us, w.optimizer_first_us + w.parameter_gathers_us)
                               : w.optimizer_us + w.parameter_gathers_us;
    // The gradient tasks issued after the stage's last compute task, then the embedding's all-reduce.
    const double gradients_us = w.last_gradients_us + (w.embedding_follows_passes ? w.embedding_us : 0.0);
    if (stage.stage == 0) stage0_end_us = gradients_us + step_us;
    // With deferred wgrads the last backward ends before them: its gradient tasks (dp-overlap) and its
    // send start there, the optimizer waits for both the drain and the gradients.
    const double last_backward_end_us = last_pass_end_us - w.deferred_us;
    const double gradients_from_us =
        stage.sync == GradientSync::after_backward ? last_pass_end_us : last_backward_end_us;
    best = std::max(best, std::max(gradients_from_us + gradients_us, last_pass_end_us) + step_us);
    // The last backward's gradient still crosses the stages before this one, then stage 0 finishes.
    if (stage.stage > 0) best = std::max(best, last_backward_end_us + tail_us + stage0_end_us);
    // The communication streams alone: gradients then the embedding's all-reduce and the optimizer;
    // the per-layer gathers (ZeRO-3, FSDP ZeRO-2) then the optimizer.
    best = std::max(best, w.forward_gathers_us + w.gradients_us + w.embedding_us + step_us);
    best = std::max(best, w.gathers_us + w.optimizer_us);
    // Per-layer gathers and reduce-scatters share the dp group's link, which serves at most one unit of
    // work alone per unit of time however it is shared (engine.h), and all of it precedes the optimizer.
    if (gathers && one_grad_link) {
      best = std::max(best, w.gathers_us + w.gradients_us + w.optimizer_us);
      // With the stage's own sends too when they cross the same link (not followed by the optimizer: its
      // last send runs beside it).
      if (pp_on_grad_link)
        best = std::max(best, w.gathers_us + w.gradients_us + (w.sends + (p > 1 ? 1 : 0)) * transfer_us);
    }
    head_us = start_us + w.first_forward_us + transfer_us;
    tail_us += transfer_us + w.first_backward_us;
    out.stages.push_back(w);
  }
  out.us = best * (1 - k_rounding_margin);
  return out;
}

Result<LowerBound> iteration_lower_bound(const model::WorkloadSpec& workload,
                                         const model::ClusterSpec& cluster, const model::Strategy& strategy,
                                         const IterationCosts& costs) {
  const CommAssignment defaults;
  OpClassTable classes(costs, strategy, cluster, defaults);
  LAGOM_TRY(const IterationPlan plan, plan_iteration(workload, strategy, costs, defaults, classes, false));
  return lower_bound(workload, strategy, plan, classes);
}

}  // namespace lagom::simulator
