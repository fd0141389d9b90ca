#include "simulator/graph.h"

#include <cassert>
#include <cmath>

#include "simulator/schedule.h"

namespace lagom::simulator {

namespace {

// Engine link ids: the node's NICs, the node's NVLink/PCIe fabric.
constexpr int k_link_network = 0, k_link_fabric = 1;
// IssuePriority::critical_first, per stream kind (higher goes first): pp transfers, then ZeRO-3 parameter
// gathers, then TP/CP/EP collectives, then gradient reductions (the embedding's among them).
constexpr std::array<int, k_stream_kinds> k_critical_rank{0, 2, 4, 1, 3, 1};

class Emitter {
 public:
  Emitter(const IterationPlan& plan, const model::Strategy& strategy, const CommAssignment& assignment,
          bool keep_segments, OpClassTable& classes, Graph& graph)
      : m_plan(plan),
        m_strategy(strategy),
        m_assignment(assignment),
        m_keep_segments(keep_segments),
        m_classes(classes),
        m_graph(graph) {}

  void emit();

 private:
  // The first and the last compute task of one pass (chunk, micro-batch, direction) of a stage.
  struct OpTasks {
    int first = -1, last = -1;
  };
  // Per stage, what the cross-stage tasks attach to.
  struct StageTasks {
    int grads_synced = -1;  // the last gradient task, else the last compute task
    int optimizer = -1;
  };
  // What a stage's passes emitted so far.
  struct StageState {
    std::vector<int> compute_tasks;  // in stream order (for FSDP prefetch)
    std::vector<int> dp_tasks;       // gradient tasks, in stream order
    int last_fsdp = -1;              // the last per-layer gather (ZeRO-3, FSDP ZeRO-2)
  };

  [[nodiscard]] std::size_t op_index(int stage, int chunk, int micro_batch, bool forward) const {
    const int v = m_strategy.vpp, m = m_plan.micro_batches;
    return static_cast<std::size_t>(((stage * v + chunk) * m + micro_batch) * 2 + (forward ? 0 : 1));
  }
  int add_task(int stage, StreamKind kind, const Task& task, TaskInfo info);
  int emit_compute(int stage, const PassSpan& span, int& pass, TaskInfo info);
  int emit_comm(int stage, StreamKind stream, int op_class, double count, int peer, TaskInfo info);
  void emit_dp_tasks(int stage, std::span<const CommTask> tasks, int after_task, std::vector<int>& out);
  void emit_layer_by_layer(const StagePlan& stage, const PipelineOp& op, TaskInfo info, StageState& state);
  void emit_stage(const StagePlan& stage);
  void emit_embedding_sync();
  void emit_transfers();

  const IterationPlan& m_plan;
  const model::Strategy& m_strategy;
  const CommAssignment& m_assignment;
  const bool m_keep_segments;
  OpClassTable& m_classes;
  Graph& m_graph;

  std::vector<std::array<int, k_stream_kinds>> m_streams;  // per stage, stream index per kind (−1 none)
  std::vector<std::vector<PipelineOp>> m_orders;           // per stage, its schedule
  std::vector<OpTasks> m_op_tasks;                         // op_index → tasks
  std::vector<StageTasks> m_stage_tasks;
  // Per stage: Graph::passes index of each chunk's forward and backward (2c, 2c + 1) and of each piece's
  // (2j, 2j + 1), composed on first use; −1 before.
  std::vector<std::vector<int>> m_chunk_pass, m_piece_pass;
};

int Emitter::add_task(int stage, StreamKind kind, const Task& task, TaskInfo info) {
  const auto k = static_cast<std::size_t>(kind);
  auto& streams = m_streams[static_cast<std::size_t>(stage)];
  if (streams[k] < 0) streams[k] = m_graph.engine.add_stream(stage, kind == StreamKind::compute);
  Task t = task;
  t.stream = streams[k];
  t.label = static_cast<int>(m_graph.info.size());
  info.stream = kind;
  m_graph.info.push_back(info);
  return m_graph.engine.add_task(t);
}

// A compute task running `span` (its work the plan's total); `pass` caches its composed plan.
int Emitter::emit_compute(int stage, const PassSpan& span, int& pass, TaskInfo info) {
  assert(std::isfinite(span.total_us()) && span.total_us() >= 0);
  if (pass < 0) {
    PassPlan composed;
    for_each_part(span, m_plan.layers, [&](const PassPlan& part) { composed.append(part, m_keep_segments); });
    pass = static_cast<int>(m_graph.passes.size());
    m_graph.passes.push_back(std::move(composed));
  }
  Task task;
  task.kind = TaskKind::compute;
  task.work_us = span.total_us();
  task.blocking_fraction = task.work_us > 0 ? span.blocking_us / task.work_us : 0.0;
  for (const auto& [cls, n] : m_graph.passes[static_cast<std::size_t>(pass)].class_counts)
    m_classes.count(cls, n);
  info.pass = pass;
  return add_task(stage, StreamKind::compute, task, info);
}

int Emitter::emit_comm(int stage, StreamKind stream, int cls, double count, int peer, TaskInfo info) {
  const CollectivePrice& price = m_classes.price(cls);
  Task task;
  task.kind = TaskKind::comm;
  task.work_us = m_classes.work_us(cls, count);
  task.compute_slowdown = price.compute_slowdown;
  task.comm_slowdown = price.comm_slowdown;
  task.peer_stage = peer;
  // The link its bandwidth goes through: the node's NICs when the communicator spans nodes, else the
  // node's fabric. Concurrent collectives on the same link split it (engine.h).
  task.link = m_classes.shape(cls).nodes > 1 ? k_link_network : k_link_fabric;
  if (m_assignment.priority == IssuePriority::critical_first)
    task.priority = k_critical_rank[static_cast<std::size_t>(stream)];
  m_classes.count(cls, count);
  info.op_class = cls;
  info.count = count;
  info.peer = peer;
  return add_task(stage, stream, task, info);
}

// The plan's gradient or parameter tasks on the dp stream, each after `after_task`.
void Emitter::emit_dp_tasks(int stage, std::span<const CommTask> tasks, int after_task,
                            std::vector<int>& out) {
  for (const CommTask& t : tasks) {
    TaskInfo info;
    info.what = TaskWhat::dp;
    const int task = emit_comm(stage, StreamKind::dp, m_classes.find_or_add(t.collective, t.group, t.bytes),
                               t.count, -1, info);
    if (after_task >= 0) m_graph.engine.add_dependency(after_task, task);
    out.push_back(task);
  }
}

// One pass as a task per layer: its parameter gather before each (ZeRO-3, FSDP ZeRO-2; with prefetch),
// gradient tasks after each backward layer.
void Emitter::emit_layer_by_layer(const StagePlan& stage, const PipelineOp& op, TaskInfo info,
                                  StageState& state) {
  const int s = stage.stage;
  const ChunkPlan& chunk = stage.chunks[static_cast<std::size_t>(op.chunk)];
  OpTasks& tasks = m_op_tasks[op_index(s, op.chunk, op.micro_batch, op.forward)];
  for (int k = 0; k < chunk.pieces; ++k) {
    const int j = op.forward ? k : chunk.pieces - 1 - k;
    const LayerPiece& piece = stage.piece(chunk, j);
    info.layer_begin = piece.layer;
    info.layer_end = piece.layer + piece.forward.layers;
    int gather = -1;
    if (piece.gather && (op.forward || stage.backward_gathers)) {
      TaskInfo g;
      g.what = TaskWhat::fsdp_gather;
      g.layer_begin = info.layer_begin;
      g.layer_end = info.layer_end;
      const CommTask& t = *piece.gather;
      gather = emit_comm(s, StreamKind::fsdp, m_classes.find_or_add(t.collective, t.group, t.bytes), t.count,
                         -1, g);
      // Prefetch: the gather for the n-th compute task may start once task n − prefetch has started, i.e.
      // once task n − prefetch − 1 has finished.
      const auto n = static_cast<int>(state.compute_tasks.size());
      if (n - m_plan.fsdp_prefetch - 1 >= 0) {
        m_graph.engine.add_dependency(
            state.compute_tasks[static_cast<std::size_t>(n - m_plan.fsdp_prefetch - 1)], gather);
      }
      state.last_fsdp = gather;
    }
    // param-gather-overlap: the buckets this piece uses first, gathered on the dp stream in forward order.
    std::vector<int> param_gathers;
    if (op.forward && op.micro_batch == 0 && stage.forward_param_gathers)
      emit_dp_tasks(s, stage.tasks(piece.params_before), -1, param_gathers);
    auto& passes = m_piece_pass[static_cast<std::size_t>(s)];
    const bool deferred = !op.forward && piece.backward.logits && op.micro_batch < stage.deferred_wgrads;
    const auto slot = deferred ? 2 * stage.pieces.size()
                               : static_cast<std::size_t>(2 * (chunk.first_piece + j) + (op.forward ? 0 : 1));
    const PassSpan& span = op.forward ? piece.forward : (deferred ? piece.backward_deferred : piece.backward);
    const int task = emit_compute(s, span, passes[slot], info);
    if (gather >= 0) m_graph.engine.add_dependency(gather, task);
    for (const int g : param_gathers) m_graph.engine.add_dependency(g, task);
    state.compute_tasks.push_back(task);
    if (tasks.first < 0) tasks.first = task;
    tasks.last = task;
    if (!op.forward) emit_dp_tasks(s, stage.tasks(piece.grads), task, state.dp_tasks);
  }
}

// A stage's compute tasks in schedule order, its gradient tasks, its optimizer step and ZeRO-1/2's
// parameter all-gathers after it.
void Emitter::emit_stage(const StagePlan& stage) {
  const int s = stage.stage;
  const auto si = static_cast<std::size_t>(s);
  const int m = m_plan.micro_batches;
  m_orders[si] = stage_schedule(m_strategy.schedule, m_strategy.pp, s, m_strategy.vpp, m);
  // One more slot each for the output layer's chunk / piece backward without its deferred wgrad.
  m_chunk_pass[si].assign(2 * stage.chunks.size() + 1, -1);
  m_piece_pass[si].assign(2 * stage.pieces.size() + 1, -1);
  StageState state;
  for (const PipelineOp& op : m_orders[si]) {
    TaskInfo info;
    info.what = op.forward ? TaskWhat::forward : TaskWhat::backward;
    info.chunk = op.chunk;
    info.micro_batch = op.micro_batch;
    const bool layer_by_layer =
        stage.sync == GradientSync::every_backward ||
        (stage.sync == GradientSync::last_backward && !op.forward && op.micro_batch == m - 1) ||
        (stage.forward_param_gathers && op.forward && op.micro_batch == 0);
    if (layer_by_layer) {
      emit_layer_by_layer(stage, op, info, state);
      continue;
    }
    const ChunkPlan& chunk = stage.chunks[static_cast<std::size_t>(op.chunk)];
    info.layer_begin = chunk.first_layer;
    info.layer_end = chunk.first_layer + chunk.layers;
    const bool deferred = !op.forward && chunk.logits && op.micro_batch < stage.deferred_wgrads;
    const auto slot =
        deferred ? 2 * stage.chunks.size() : static_cast<std::size_t>(2 * op.chunk + (op.forward ? 0 : 1));
    const PassSpan& span = op.forward ? chunk.forward : (deferred ? chunk.backward_deferred : chunk.backward);
    const int task = emit_compute(s, span, m_chunk_pass[si][slot], info);
    state.compute_tasks.push_back(task);
    m_op_tasks[op_index(s, op.chunk, op.micro_batch, op.forward)] = {task, task};
  }
  int last_compute = state.compute_tasks.back();
  if (stage.deferred_wgrads > 0) {
    // The deferred output-layer wgrad GEMMs, one after another after the stage's last backward.
    PassPlan drained;
    for (int i = 0; i < stage.deferred_wgrads; ++i)
      drained.append(m_plan.layers.logits_wgrad, m_keep_segments);
    Task task;
    task.kind = TaskKind::compute;
    task.work_us = drained.total_us();
    task.blocking_fraction = task.work_us > 0 ? drained.blocking_us / task.work_us : 0.0;
    TaskInfo info;
    info.what = TaskWhat::backward;
    info.chunk = static_cast<int>(stage.chunks.size()) - 1;
    info.micro_batch = m - 1;
    info.pass = static_cast<int>(m_graph.passes.size());
    m_graph.passes.push_back(std::move(drained));
    last_compute = add_task(s, StreamKind::compute, task, info);
    state.compute_tasks.push_back(last_compute);
  }
  if (stage.sync == GradientSync::after_backward)
    emit_dp_tasks(s, stage.tasks(stage.grads_after_backward), last_compute, state.dp_tasks);
  // The optimizer step; with param-gather-with-optimizer chunk 0's share first, its gathers beside the rest.
  Task optimizer;
  optimizer.kind = TaskKind::optimizer;
  optimizer.work_us = stage.optimizer_first_us > 0 ? stage.optimizer_first_us : stage.optimizer_us;
  TaskInfo info;
  info.what = TaskWhat::optimizer;
  const int opt = add_task(s, StreamKind::compute, optimizer, info);
  if (!state.dp_tasks.empty()) m_graph.engine.add_dependency(state.dp_tasks.back(), opt);
  if (state.last_fsdp >= 0) m_graph.engine.add_dependency(state.last_fsdp, opt);
  m_stage_tasks[si] = {state.dp_tasks.empty() ? last_compute : state.dp_tasks.back(), opt};
  std::vector<int> gathers;
  emit_dp_tasks(s, stage.tasks(stage.param_gathers), opt, gathers);
  if (stage.optimizer_first_us > 0 && stage.optimizer_us > stage.optimizer_first_us) {
    Task rest = optimizer;
    rest.work_us = stage.optimizer_us - stage.optimizer_first_us;
    const int second = add_task(s, StreamKind::compute, rest, info);
    m_graph.engine.add_dependency(opt, second);
  }
}

// The tied embedding's gradient: summed over the first and last stage after their gradient sync and
// before their optimizer steps, one task occupying both stages.
void Emitter::emit_embedding_sync() {
  if (!m_plan.embedding_sync) return;
  const CommTask& t = *m_plan.embedding_sync;
  const int cls = m_classes.find_or_add(t.collective, t.group, t.bytes);
  TaskInfo info;
  info.what = TaskWhat::embedding;
  const int last = m_strategy.pp - 1;
  const int task = emit_comm(0, StreamKind::emb, cls, t.count, last, info);
  for (const int s : {0, last}) {
    m_graph.engine.add_dependency(m_stage_tasks[static_cast<std::size_t>(s)].grads_synced, task);
    m_graph.engine.add_dependency(task, m_stage_tasks[static_cast<std::size_t>(s)].optimizer);
  }
}

// Pipeline transfers (activations forward, gradients backward), on the sender's pp stream; Megatron's p2p
// is synchronous, so the sender's next compute waits for its send, unless p2p-overlap (below). A stack
// that splits the transfer over TP has the receiver all-gather it before its pass.
void Emitter::emit_transfers() {
  if (!m_plan.transfer) return;
  const int p = m_strategy.pp, v = m_strategy.vpp;
  const CommTask& t = *m_plan.transfer;
  const int cls = m_classes.find_or_add(t.collective, t.group, t.bytes);
  const int gather_cls = m_plan.transfer_gather ? m_classes.find_or_add(m_plan.transfer_gather->collective,
                                                                        m_plan.transfer_gather->group,
                                                                        m_plan.transfer_gather->bytes)
                                                : -1;
  // Megatron overlaps p2p only in the interleaved schedule (overlap_p2p_comm).
  const bool overlap = m_strategy.p2p_overlap && m_strategy.schedule == model::Schedule::interleaved;
  for (int s = 0; s < p; ++s) {
    const auto& order = m_orders[static_cast<std::size_t>(s)];
    for (std::size_t k = 0; k < order.size(); ++k) {
      const PipelineOp& op = order[k];
      const int vstage = op.chunk * p + s;
      int to_stage = -1, to_chunk = 0;
      if (op.forward && vstage < p * v - 1) {
        to_stage = (s + 1) % p;
        to_chunk = s == p - 1 ? op.chunk + 1 : op.chunk;
      } else if (!op.forward && vstage > 0) {
        to_stage = (s + p - 1) % p;
        to_chunk = s == 0 ? op.chunk - 1 : op.chunk;
      }
      if (to_stage < 0) continue;
      const OpTasks& from = m_op_tasks[op_index(s, op.chunk, op.micro_batch, op.forward)];
      const OpTasks& to = m_op_tasks[op_index(to_stage, to_chunk, op.micro_batch, op.forward)];
      TaskInfo info;
      info.what = op.forward ? TaskWhat::transfer_forward : TaskWhat::transfer_backward;
      info.chunk = op.chunk;
      info.micro_batch = op.micro_batch;
      const int transfer = emit_comm(s, StreamKind::pp, cls, t.count, to_stage, info);
      m_graph.engine.add_dependency(from.last, transfer);
      int arrived = transfer;
      if (gather_cls >= 0) {
        // The receiver gathers the split tensor over its TP ranks before its pass. Queued behind the send on
        // the sender's pp stream, whose order is the passes' (a stream runs its tasks in order; the
        // receiver's streams hold its own passes' tasks in another order).
        arrived = emit_comm(s, StreamKind::pp, gather_cls, m_plan.transfer_gather->count, to_stage, info);
        m_graph.engine.add_dependency(transfer, arrived);
      }
      m_graph.engine.add_dependency(arrived, to.first);
      // The pass its sending stage waits for it before: blocking, the next one; with p2p-overlap, the one
      // after the next send in the same direction was issued (schedules.py waits for the previous send's
      // handle right after issuing the next: NVIDIA/Megatron-LM@aa6207e2:
      // megatron/core/pipeline_parallel/schedules.py:1089-1113,1213-1229,1259-1275).
      std::size_t waits = k + 1;
      if (overlap) {
        std::size_t next_same = k + 1;
        while (next_same < order.size() && order[next_same].forward != op.forward) ++next_same;
        waits = next_same + 1;
      }
      if (waits < order.size()) {
        const PipelineOp& next = order[waits];
        m_graph.engine.add_dependency(
            transfer, m_op_tasks[op_index(s, next.chunk, next.micro_batch, next.forward)].first);
      }
    }
  }
}

void Emitter::emit() {
  const int p = m_strategy.pp, v = m_strategy.vpp, m = m_plan.micro_batches;
  const auto stages = static_cast<std::size_t>(p);
  std::array<int, k_stream_kinds> none{};
  none.fill(-1);
  m_streams.assign(stages, none);
  m_orders.assign(stages, {});
  m_op_tasks.assign(static_cast<std::size_t>(p * v * m * 2), {});
  m_stage_tasks.assign(stages, {});
  m_chunk_pass.assign(stages, {});
  m_piece_pass.assign(stages, {});
  m_graph.engine.reserve(static_cast<std::size_t>(p * v * m * 4 + 64),
                         static_cast<std::size_t>(p * v * m * 6 + 64));
  for (const StagePlan& stage : m_plan.stages) emit_stage(stage);
  emit_embedding_sync();
  emit_transfers();
}

}  // namespace

void emit_graph(const IterationPlan& plan, const model::Strategy& strategy, const CommAssignment& assignment,
                bool keep_segments, OpClassTable& classes, Graph& graph) {
  Emitter(plan, strategy, assignment, keep_segments, classes, graph).emit();
}

}  // namespace lagom::simulator
