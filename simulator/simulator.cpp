#include "simulator/simulator.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/units.h"
#include "simulator/engine.h"
#include "simulator/overlap.h"
#include "simulator/schedule.h"

namespace lagom::simulator {

namespace {

// Whether the first and last stage sum the tied embedding's gradient: Megatron does it when the output
// layer shares the embedding and they are on different stages; ZeRO-3 shards those gradients instead.
bool tied_embedding_sync(const model::WorkloadSpec& w, const model::Strategy& s) {
  return w.tied_embeddings && s.pp > 1 && s.zero < 3;
}

constexpr std::array<std::pair<Group, std::string_view>, 7> k_groups{{{Group::tp, "tp"},
                                                                      {Group::cp, "cp"},
                                                                      {Group::ep, "ep"},
                                                                      {Group::pp, "pp"},
                                                                      {Group::dp, "dp"},
                                                                      {Group::expert_dp, "edp"},
                                                                      {Group::embedding, "emb"}}};

enum StreamKind : int {
  k_compute_stream = 0,
  k_tp_stream,
  k_pp_stream,
  k_dp_stream,
  k_fsdp_stream,
  k_emb_stream,
  k_stream_kinds
};
constexpr std::array<std::string_view, k_stream_kinds> k_stream_names{"compute", "tp",   "pp",
                                                                      "dp",      "fsdp", "emb"};
// Engine link ids: the node's NICs, the node's NVLink/PCIe fabric.
constexpr int k_link_network = 0, k_link_fabric = 1;
// IssuePriority::critical_first, per stream kind (higher goes first): pp transfers, then ZeRO-3 parameter
// gathers, then TP/CP/EP collectives, then gradient reductions (the embedding's among them).
constexpr std::array<int, k_stream_kinds> k_critical_rank{0, 2, 4, 1, 3, 1};

// A piece of a pass as it appears in the trace: compute (op_class −1) or a blocking collective.
struct Segment {
  std::string name;
  int op_class = -1;
  double us = 0;
};

// A run of compute with blocking collectives inside it (one pass of one or more layers).
struct PassPlan {
  double compute_us = 0;
  double blocking_us = 0;
  std::vector<Segment> segments;                     // only when a timeline is recorded
  std::vector<std::pair<int, double>> class_counts;  // op class → calls

  void add_count(int op_class, double count) {
    for (auto& [cls, n] : class_counts) {
      if (cls == op_class) {
        n += count;
        return;
      }
    }
    class_counts.emplace_back(op_class, count);
  }
  void append(const PassPlan& other, bool keep_segments) {
    compute_us += other.compute_us;
    blocking_us += other.blocking_us;
    if (keep_segments) segments.insert(segments.end(), other.segments.begin(), other.segments.end());
    for (const auto& [cls, n] : other.class_counts) add_count(cls, n);
  }
  [[nodiscard]] double total_us() const { return compute_us + blocking_us; }
};

// What a task is, for trace names.
enum class What : std::uint8_t {
  forward,
  backward,
  optimizer,
  transfer_forward,
  transfer_backward,
  dp,
  fsdp_gather,
  embedding
};
struct TaskInfo {
  What what = What::forward;
  int chunk = 0, micro_batch = 0, layer_begin = 0, layer_end = 0;
  int op_class = -1;
  double count = 1;
  int plan = -1;
  int peer = -1;
};

// The tasks that `pending` bytes of gradients or parameters make, as the simulator issues them: the full
// buckets of `bucket_bytes` as one task with a count, and with `flush` the rest (when >= 1 byte) as one more.
// Takes them out of `pending`.
struct BucketTask {
  std::int64_t bytes = 0;
  double count = 0;
};
struct Buckets {
  std::array<BucketTask, 2> tasks{};
  int size = 0;
};
Buckets take_buckets(double& pending, double bucket_bytes, bool flush) {
  Buckets out;
  const double full = std::floor(pending / bucket_bytes);
  if (full >= 1) {
    out.tasks[static_cast<std::size_t>(out.size++)] = {static_cast<std::int64_t>(bucket_bytes), full};
    pending -= full * bucket_bytes;
  }
  if (flush && pending >= 1) {
    out.tasks[static_cast<std::size_t>(out.size++)] = {static_cast<std::int64_t>(std::llround(pending)), 1};
    pending = 0;
  }
  return out;
}

// Slack for rounding in the lower bounds: the engine and the bounds add the same durations in different
// orders (relative error ~1e-16 per addition, well below 1e-9 for any task count).
constexpr double k_rounding_margin = 1e-9;

class Builder {
 public:
  Builder(const model::WorkloadSpec& workload, const model::ClusterSpec& cluster,
          const model::Strategy& strategy, const IterationCosts& costs, const CommAssignment& assignment,
          const SimulateOptions& options)
      : m_w(workload), m_c(cluster), m_s(strategy), m_costs(costs), m_a(assignment), m_options(options) {}

  Status prepare();
  // After prepare(): the task graph of the iteration (engine tasks and dependencies).
  void build_graph();
  // After build_graph(): runs the graph.
  Result<SimulationResult> finish();
  // After build_graph(): the engine's critical path (every task alone), microseconds.
  [[nodiscard]] double critical_path_us() const { return m_engine.critical_path_us(); }
  // After prepare(), on a Builder that will not run: iteration_lower_bound_us (see there).
  [[nodiscard]] double lower_bound_us();
  std::vector<OpClass> classes() const { return m_classes; }

 private:
  struct ClassEntry {
    OpClassKey key;
    model::CommGroup shape;
    CollectivePrice price;
  };

  int op_class(model::Collective collective, Group group, std::int64_t bytes);
  [[nodiscard]] model::CommGroup shape_of(Group group) const;
  [[nodiscard]] int group_ranks(Group group) const;
  void add_compute(PassPlan& plan, const std::string& name, double us) const;
  void add_collective(PassPlan& plan, const std::string& name, model::Collective collective, Group group,
                      std::int64_t bytes, double count = 1);
  Status add_overlapped(PassPlan& plan, const Step& gemm, const Step& comm, OverlapPair kernel);
  Result<PassPlan> to_plan(const std::vector<Step>& steps, bool recompute = false);
  Status build_plans();
  int add_plan(PassPlan plan) {
    m_plans.push_back(std::move(plan));
    return static_cast<int>(m_plans.size()) - 1;
  }
  int add_task(int stage, StreamKind stream, const Task& task, const TaskInfo& info);
  int emit_compute(int stage, const PassPlan& plan, int plan_index, const TaskInfo& info);
  void emit_buckets(int stage, double& pending_bytes, double bucket_bytes, Group group,
                    model::Collective collective, bool flush, int after_task, std::vector<int>& dp_tasks);
  int emit_comm(int stage, StreamKind stream, int op_class, double count, int peer, const TaskInfo& info);
  void record_timeline(SimulationResult& result) const;

  const model::WorkloadSpec& m_w;
  const model::ClusterSpec& m_c;
  const model::Strategy& m_s;
  const IterationCosts& m_costs;
  const CommAssignment& m_a;
  const SimulateOptions& m_options;

  model::TpOverlap m_tp_overlap;
  double m_bucket_bytes = 0;
  int m_micro_batches = 0, m_layers_per_chunk = 0;
  double m_elem = 2, m_grad_elem = 2, m_param_elem = 2;

  std::vector<ClassEntry> m_entries;
  std::vector<OpClass> m_classes;
  std::vector<LayerParams> m_layer_params;
  std::vector<std::pair<OverlapQuery, double>> m_overlap_cache;
  // Per layer variant (IterationCosts::layer_variant); bwd includes the recomputation.
  std::vector<PassPlan> m_variant_fwd, m_variant_bwd;
  std::vector<int> m_layer_slot;  // per layer: its index in m_variant_fwd/bwd
  [[nodiscard]] const PassPlan& layer_fwd(int layer) const {
    return m_variant_fwd[static_cast<std::size_t>(m_layer_slot[static_cast<std::size_t>(layer)])];
  }
  [[nodiscard]] const PassPlan& layer_bwd(int layer) const {
    return m_variant_bwd[static_cast<std::size_t>(m_layer_slot[static_cast<std::size_t>(layer)])];
  }
  PassPlan m_emb_fwd, m_emb_bwd, m_logits_fwd, m_logits_bwd;
  std::vector<PassPlan> m_plans;

  Engine m_engine;
  std::vector<std::array<int, k_stream_kinds>> m_streams;  // per stage, stream index per kind (−1 none)
  std::vector<TaskInfo> m_info;
};

int Builder::group_ranks(Group group) const {
  switch (group) {
    case Group::tp:
      return m_s.tp;
    case Group::cp:
      return m_s.cp;
    case Group::ep:
      return m_s.ep;
    case Group::pp:
      return m_s.pp > 1 ? 2 : 1;
    case Group::dp:
      return m_s.dp * m_s.cp;
    case Group::expert_dp:
      return m_s.dp * m_s.cp / m_s.ep;
    case Group::embedding:
      return tied_embedding_sync(m_w, m_s) ? 2 : 1;
  }
  return 1;
}

model::CommGroup Builder::shape_of(Group group) const {
  return communicator_shape(group, m_s, m_c.gpus_per_node);
}

int Builder::op_class(model::Collective collective, Group group, std::int64_t bytes) {
  const OpClassKey key{collective, group, bytes};
  for (std::size_t i = 0; i < m_entries.size(); ++i) {
    if (m_entries[i].key == key) return static_cast<int>(i);
  }
  ClassEntry entry{key, shape_of(group), {}};
  std::optional<model::CollConfig> knobs;
  for (const auto& [k, config] : m_a.per_class) {
    if (k == key) knobs = config;
  }
  int ctas = 0;
  for (const auto& [g, n] : m_a.comm_ctas) {
    if (g == group) ctas = n;
  }
  // A communicator's CTA count caps the channels of every call on it (NCCL: channels at or below the
  // communicator's count per call).
  if (knobs && ctas > 0 && (knobs->channels == 0 || knobs->channels > ctas)) knobs->channels = ctas;
  entry.price = m_costs.collective({collective, entry.shape, bytes, ctas}, knobs);
  m_entries.push_back(entry);
  m_classes.push_back(OpClass{key, entry.shape, 0, entry.price.time_us});
  return static_cast<int>(m_entries.size()) - 1;
}

void Builder::add_compute(PassPlan& plan, const std::string& name, double us) const {
  plan.compute_us += us;
  if (m_options.timeline) plan.segments.push_back({name, -1, us});
}

void Builder::add_collective(PassPlan& plan, const std::string& name, model::Collective collective,
                             Group group, std::int64_t bytes, double count) {
  if (group_ranks(group) < 2 || bytes <= 0) return;
  const int cls = op_class(collective, group, bytes);
  const double us = m_entries[static_cast<std::size_t>(cls)].price.time_us * count;
  plan.blocking_us += us;
  plan.add_count(cls, count);
  if (m_options.timeline) plan.segments.push_back({name, cls, us});
}

Status Builder::add_overlapped(PassPlan& plan, const Step& gemm, const Step& comm, OverlapPair kernel) {
  const int cls = op_class(comm.collective, Group::tp, comm.bytes);
  const ClassEntry& entry = m_entries[static_cast<std::size_t>(cls)];
  OverlapQuery query;
  query.kernel = kernel;
  query.method = m_tp_overlap;
  query.ranks = m_s.tp;
  // The per-GPU GEMM is one rank's share of the global problem: column-parallel (ag-gemm) splits n,
  // row-parallel (gemm-rs) splits k.
  query.m = gemm.gemm_m;
  query.n = kernel == OverlapPair::ag_gemm ? gemm.gemm_n * m_s.tp : gemm.gemm_n;
  query.k = kernel == OverlapPair::gemm_rs ? gemm.gemm_k * m_s.tp : gemm.gemm_k;
  query.element_bytes = static_cast<int>(m_elem);
  query.gemm_us = gemm.time_us;
  query.collective = entry.price;
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
  if (m_options.timeline) {
    plan.segments.push_back({gemm.name, -1, gemm.time_us});
    plan.segments.push_back({comm.name + " (overlapped, exposed part)", cls, exposed_us});
  }
  return {};
}

Result<PassPlan> Builder::to_plan(const std::vector<Step>& steps, bool recompute) {
  PassPlan plan;
  const bool overlap = m_s.tp > 1 && m_tp_overlap.kind != model::TpOverlap::Kind::none;
  auto is_tp = [](const Step& step, model::Collective collective) {
    return step.is_comm && step.group == Group::tp && step.collective == collective;
  };
  auto is_gemm = [](const Step& step) { return !step.is_comm && step.gemm_m > 0; };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    if (overlap && i + 1 < steps.size()) {
      // FlashOverlap's pairs: an all-gather feeding a column-parallel GEMM, a row-parallel GEMM feeding a
      // reduce-scatter (both directions of the pass; the model orders the steps as Megatron issues them).
      if (is_tp(step, model::Collective::allgather) && is_gemm(steps[i + 1])) {
        LAGOM_TRY_STATUS(add_overlapped(plan, steps[i + 1], step, OverlapPair::ag_gemm));
        ++i;
        continue;
      }
      if (is_gemm(step) && is_tp(steps[i + 1], model::Collective::reducescatter)) {
        LAGOM_TRY_STATUS(add_overlapped(plan, step, steps[i + 1], OverlapPair::gemm_rs));
        ++i;
        continue;
      }
    }
    if (step.is_comm) {
      add_collective(plan, step.name, step.collective, step.group, step.bytes);
    } else {
      add_compute(plan, recompute ? "recompute " + step.name : step.name, step.time_us);
    }
  }
  return plan;
}

Status Builder::prepare() {
  m_tp_overlap = m_a.tp_overlap.value_or(m_s.tp_overlap);
  const double bucket_mb = m_a.bucket_mb.value_or(m_s.bucket_mb);
  if (!(bucket_mb > 0)) return make_error(ErrorCode::invalid_input, "bucket-mb must be a positive number");
  if (m_a.fsdp_prefetch < 1) return make_error(ErrorCode::invalid_input, "fsdp prefetch must be at least 1");
  m_bucket_bytes = bucket_mb * 1e6;
  if (m_tp_overlap.kind != model::TpOverlap::Kind::none) {
    if (m_s.tp < 2) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("tp-overlap {} needs tp > 1", model::to_string(m_tp_overlap)));
    }
    if (!m_s.sp) {
      return make_error(
          ErrorCode::invalid_input,
          fmt::format("tp-overlap {} needs --sp (the overlapped kernels are all-gather+GEMM and "
                      "GEMM+reduce-scatter)",
                      model::to_string(m_tp_overlap)));
    }
  }
  if (m_s.dp < 1 || m_s.pp < 1 || m_s.vpp < 1 || m_s.micro_batch < 1 || m_s.global_batch < 1) {
    return make_error(ErrorCode::invalid_input, "simulate: the strategy is not resolved");
  }
  if (m_s.cp > 1 && (m_w.heads / m_s.tp) % m_s.cp != 0) {
    return make_error(
        ErrorCode::invalid_input,
        fmt::format("cp={} (Ulysses all-to-all over heads) does not divide the heads per tp rank ({})",
                    m_s.cp, m_w.heads / m_s.tp));
  }
  m_micro_batches = static_cast<int>(m_s.micro_batches());
  m_layers_per_chunk = m_w.layers / (m_s.pp * m_s.vpp);
  if (m_micro_batches < 1 || m_layers_per_chunk < 1) {
    return make_error(ErrorCode::invalid_input, "simulate: the strategy is not resolved");
  }
  const bool wide = m_s.precision == model::Precision::fp32 || m_s.precision == model::Precision::tf32;
  // Activations travel in 16-bit (fp8 GEMMs still exchange bf16 activations); fp32/tf32 runs use 4 bytes.
  m_elem = wide ? 4 : 2;
  m_grad_elem = wide ? 4 : 2;  // gradients reduced in the parameters' dtype (Megatron's default)
  m_param_elem = wide ? 4 : 2;
  return build_plans();
}

Status Builder::build_plans() {
  const auto layers = static_cast<std::size_t>(m_w.layers);
  m_layer_params.resize(layers);
  m_layer_slot.assign(layers, -1);
  std::vector<std::pair<int, int>> slots;  // (variant, slot), in order of first appearance
  for (int l = 0; l < m_w.layers; ++l) {
    const auto i = static_cast<std::size_t>(l);
    const int variant = m_costs.layer_variant(l);
    const auto known =
        std::find_if(slots.begin(), slots.end(), [&](const auto& e) { return e.first == variant; });
    m_layer_params[i] = m_costs.layer_params(l);
    if (known != slots.end()) {
      m_layer_slot[i] = known->second;
      continue;
    }
    m_layer_slot[i] = static_cast<int>(m_variant_fwd.size());
    slots.emplace_back(variant, m_layer_slot[i]);
    LAGOM_TRY(PassPlan forward, to_plan(m_costs.layer_steps(l, Pass::forward)));
    // The backward pass first reruns what recomputation drops (full: the forward with its collectives).
    LAGOM_TRY(PassPlan backward, to_plan(m_costs.layer_steps(l, Pass::recompute), true));
    LAGOM_TRY(const PassPlan rest, to_plan(m_costs.layer_steps(l, Pass::backward)));
    backward.append(rest, m_options.timeline);
    m_variant_fwd.push_back(std::move(forward));
    m_variant_bwd.push_back(std::move(backward));
  }
  LAGOM_TRY(m_emb_fwd, to_plan(m_costs.embedding_steps(Pass::forward)));
  LAGOM_TRY(m_emb_bwd, to_plan(m_costs.embedding_steps(Pass::backward)));
  LAGOM_TRY(m_logits_fwd, to_plan(m_costs.logits_steps(Pass::forward)));
  LAGOM_TRY(m_logits_bwd, to_plan(m_costs.logits_steps(Pass::backward)));
  for (const auto* plans : {&m_variant_fwd, &m_variant_bwd}) {
    for (const PassPlan& plan : *plans) {
      if (!std::isfinite(plan.total_us()) || plan.total_us() < 0) {
        return make_error(ErrorCode::failure, "simulate: the cost model priced a layer as not finite");
      }
    }
  }
  return {};
}

int Builder::add_task(int stage, StreamKind kind, const Task& task, const TaskInfo& info) {
  auto& streams = m_streams[static_cast<std::size_t>(stage)];
  if (streams[kind] < 0) streams[kind] = m_engine.add_stream(stage, kind == k_compute_stream);
  Task t = task;
  t.stream = streams[kind];
  t.label = static_cast<int>(m_info.size());
  m_info.push_back(info);
  return m_engine.add_task(t);
}

int Builder::emit_compute(int stage, const PassPlan& plan, int plan_index, const TaskInfo& info) {
  assert(std::isfinite(plan.total_us()) && plan.total_us() >= 0);
  Task task;
  task.kind = TaskKind::compute;
  task.work_us = plan.total_us();
  task.blocking_fraction = task.work_us > 0 ? plan.blocking_us / task.work_us : 0.0;
  for (const auto& [cls, n] : plan.class_counts) m_classes[static_cast<std::size_t>(cls)].count += n;
  TaskInfo i = info;
  i.plan = plan_index;
  return add_task(stage, k_compute_stream, task, i);
}

int Builder::emit_comm(int stage, StreamKind stream, int cls, double count, int peer, const TaskInfo& info) {
  const ClassEntry& entry = m_entries[static_cast<std::size_t>(cls)];
  Task task;
  task.kind = TaskKind::comm;
  task.work_us = entry.price.time_us * count;
  task.compute_slowdown = entry.price.compute_slowdown;
  task.comm_slowdown = entry.price.comm_slowdown;
  task.peer_stage = peer;
  // The link its bandwidth goes through: the node's NICs when the communicator spans nodes, else the
  // node's fabric. Concurrent collectives on the same link split it (engine.h).
  task.link = entry.shape.nodes > 1 ? k_link_network : k_link_fabric;
  if (m_a.priority == IssuePriority::critical_first) task.priority = k_critical_rank[stream];
  m_classes[static_cast<std::size_t>(cls)].count += count;
  TaskInfo i = info;
  i.op_class = cls;
  i.count = count;
  i.peer = peer;
  return add_task(stage, stream, task, i);
}

// Issues the full buckets in `pending_bytes` (and, with `flush`, the rest) after `after_task`.
void Builder::emit_buckets(int stage, double& pending_bytes, double bucket_bytes, Group group,
                           model::Collective collective, bool flush, int after_task,
                           std::vector<int>& dp_tasks) {
  if (group_ranks(group) < 2) {
    pending_bytes = 0;
    return;
  }
  const Buckets buckets = take_buckets(pending_bytes, bucket_bytes, flush);
  for (int b = 0; b < buckets.size; ++b) {
    const int cls = op_class(collective, group, buckets.tasks[static_cast<std::size_t>(b)].bytes);
    TaskInfo info;
    info.what = What::dp;
    const int task =
        emit_comm(stage, k_dp_stream, cls, buckets.tasks[static_cast<std::size_t>(b)].count, -1, info);
    if (after_task >= 0) m_engine.add_dependency(after_task, task);
    dp_tasks.push_back(task);
  }
}

void Builder::build_graph() {
  using model::Collective;
  const int p = m_s.pp, v = m_s.vpp, m = m_micro_batches, lpc = m_layers_per_chunk;
  const bool zero3 = m_s.zero == 3;
  const bool dp_reduce = group_ranks(Group::dp) > 1 || group_ranks(Group::expert_dp) > 1;
  const Collective grad_collective = m_s.zero >= 1 ? Collective::reducescatter : Collective::allreduce;
  m_streams.assign(static_cast<std::size_t>(p), {-1, -1, -1, -1, -1, -1});
  // Per stage: the task after which its gradients are synced (last gradient task, else last compute) and its
  // optimizer step: the tied embedding's all-reduce goes between them on the first and last stage.
  std::vector<int> grads_synced_of(static_cast<std::size_t>(p), -1),
      optimizer_of(static_cast<std::size_t>(p), -1);

  auto first_layer = [&](int stage, int chunk) { return (chunk * p + stage) * lpc; };
  auto has_embedding = [&](int stage, int chunk) { return stage == 0 && chunk == 0; };
  auto has_logits = [&](int stage, int chunk) { return stage == p - 1 && chunk == v - 1; };

  // Plans per (stage, chunk): whole-chunk forward and backward, and per-layer pieces.
  struct ChunkPlans {
    int forward = -1, backward = -1;
    std::vector<int> layer_forward,
        layer_backward;  // piece j covers layer first+j (head attached at the ends)
    std::vector<double> grad_bytes, expert_grad_bytes, param_bytes;  // per layer piece
  };
  const bool keep = m_options.timeline;
  std::vector<ChunkPlans> chunk_plans(static_cast<std::size_t>(p * v));
  for (int s = 0; s < p; ++s) {
    for (int c = 0; c < v; ++c) {
      ChunkPlans& cp = chunk_plans[static_cast<std::size_t>(s * v + c)];
      const int first = first_layer(s, c);
      PassPlan fwd, bwd;
      if (has_embedding(s, c)) fwd.append(m_emb_fwd, keep);
      for (int j = 0; j < lpc; ++j) fwd.append(layer_fwd(first + j), keep);
      if (has_logits(s, c)) fwd.append(m_logits_fwd, keep), bwd.append(m_logits_bwd, keep);
      for (int j = lpc - 1; j >= 0; --j) bwd.append(layer_bwd(first + j), keep);
      if (has_embedding(s, c)) bwd.append(m_emb_bwd, keep);
      cp.forward = add_plan(std::move(fwd));
      cp.backward = add_plan(std::move(bwd));
      for (int j = 0; j < lpc; ++j) {
        const int layer = first + j;
        const LayerParams& lp = m_layer_params[static_cast<std::size_t>(layer)];
        PassPlan f, b;
        double params = lp.dense;
        if (j == 0 && has_embedding(s, c)) f.append(m_emb_fwd, keep), params += m_costs.embedding_params();
        f.append(layer_fwd(layer), keep);
        if (j == lpc - 1 && has_logits(s, c)) {
          f.append(m_logits_fwd, keep), b.append(m_logits_bwd, keep);
          params += m_costs.logits_params();
        }
        b.append(layer_bwd(layer), keep);
        if (j == 0 && has_embedding(s, c)) b.append(m_emb_bwd, keep);
        cp.layer_forward.push_back(add_plan(std::move(f)));
        cp.layer_backward.push_back(add_plan(std::move(b)));
        cp.grad_bytes.push_back(params * m_grad_elem);
        cp.expert_grad_bytes.push_back(lp.expert * m_grad_elem);
        cp.param_bytes.push_back((params + lp.expert) * m_param_elem);
      }
    }
  }

  // Phase 1: compute tasks per stage in schedule order, DP/FSDP traffic, optimizer.
  struct OpTasks {
    int first = -1, last = -1;
  };
  // op index: ((stage·v + chunk)·m + micro_batch)·2 + (forward ? 0 : 1)
  auto op_index = [&](int stage, int chunk, int mb, bool forward) {
    return static_cast<std::size_t>(((stage * v + chunk) * m + mb) * 2 + (forward ? 0 : 1));
  };
  std::vector<OpTasks> op_tasks(static_cast<std::size_t>(p * v * m * 2));
  std::vector<std::vector<PipelineOp>> orders(static_cast<std::size_t>(p));
  m_engine.reserve(static_cast<std::size_t>(p * v * m * 4 + 64),
                   static_cast<std::size_t>(p * v * m * 6 + 64));

  for (int s = 0; s < p; ++s) {
    orders[static_cast<std::size_t>(s)] = stage_schedule(m_s.schedule, p, s, v, m);
    std::vector<int> compute_tasks;  // in stream order (for FSDP prefetch)
    std::vector<int> dp_tasks;
    double stage_grad = 0, stage_expert_grad = 0, stage_params = 0, stage_expert_params = 0;
    for (int c = 0; c < v; ++c) {
      const ChunkPlans& cp = chunk_plans[static_cast<std::size_t>(s * v + c)];
      for (int j = 0; j < lpc; ++j) {
        stage_grad += cp.grad_bytes[static_cast<std::size_t>(j)];
        stage_expert_grad += cp.expert_grad_bytes[static_cast<std::size_t>(j)];
        stage_expert_params += m_layer_params[static_cast<std::size_t>(first_layer(s, c) + j)].expert;
      }
    }
    stage_params = stage_grad / m_grad_elem;
    int last_fsdp = -1;
    for (const PipelineOp& op : orders[static_cast<std::size_t>(s)]) {
      const ChunkPlans& cp = chunk_plans[static_cast<std::size_t>(s * v + op.chunk)];
      OpTasks& tasks = op_tasks[op_index(s, op.chunk, op.micro_batch, op.forward)];
      TaskInfo info;
      info.what = op.forward ? What::forward : What::backward;
      info.chunk = op.chunk;
      info.micro_batch = op.micro_batch;
      const int first = first_layer(s, op.chunk);
      const bool split_for_buckets = !op.forward && op.micro_batch == m - 1 && m_s.dp_overlap && dp_reduce;
      if (zero3 || split_for_buckets) {
        double pending = 0, pending_expert = 0;
        for (int k = 0; k < lpc; ++k) {
          const int j = op.forward ? k : lpc - 1 - k;
          const int plan = op.forward ? cp.layer_forward[static_cast<std::size_t>(j)]
                                      : cp.layer_backward[static_cast<std::size_t>(j)];
          info.layer_begin = first + j;
          info.layer_end = first + j + 1;
          int gather = -1;
          if (zero3 && group_ranks(Group::dp) > 1) {
            const auto bytes = static_cast<std::int64_t>(cp.param_bytes[static_cast<std::size_t>(j)]);
            TaskInfo g;
            g.what = What::fsdp_gather;
            g.layer_begin = info.layer_begin;
            g.layer_end = info.layer_end;
            gather = emit_comm(s, k_fsdp_stream, op_class(Collective::allgather, Group::dp, bytes), 1, -1, g);
            // Prefetch: the gather for the n-th compute task may start once task n − prefetch has started,
            // i.e. once task n − prefetch − 1 has finished.
            const auto n = static_cast<int>(compute_tasks.size());
            if (n - m_a.fsdp_prefetch - 1 >= 0) {
              m_engine.add_dependency(compute_tasks[static_cast<std::size_t>(n - m_a.fsdp_prefetch - 1)],
                                      gather);
            }
            last_fsdp = gather;
          }
          const int task = emit_compute(s, m_plans[static_cast<std::size_t>(plan)], plan, info);
          if (gather >= 0) m_engine.add_dependency(gather, task);
          compute_tasks.push_back(task);
          if (tasks.first < 0) tasks.first = task;
          tasks.last = task;
          if (!op.forward && zero3) {
            // FSDP: one reduce-scatter of the layer's gradients after its backward, every micro-batch.
            double bytes = cp.grad_bytes[static_cast<std::size_t>(j)];
            double expert = cp.expert_grad_bytes[static_cast<std::size_t>(j)];
            emit_buckets(s, bytes, std::max(bytes, 1.0), Group::dp, Collective::reducescatter, true, task,
                         dp_tasks);
            emit_buckets(s, expert, std::max(expert, 1.0), Group::expert_dp, Collective::reducescatter, true,
                         task, dp_tasks);
          } else if (split_for_buckets) {
            pending += cp.grad_bytes[static_cast<std::size_t>(j)];
            pending_expert += cp.expert_grad_bytes[static_cast<std::size_t>(j)];
            emit_buckets(s, pending, m_bucket_bytes, Group::dp, grad_collective, k == lpc - 1, task,
                         dp_tasks);
            emit_buckets(s, pending_expert, m_bucket_bytes, Group::expert_dp, grad_collective, k == lpc - 1,
                         task, dp_tasks);
          }
        }
      } else {
        info.layer_begin = first;
        info.layer_end = first + lpc;
        const int plan = op.forward ? cp.forward : cp.backward;
        const int task = emit_compute(s, m_plans[static_cast<std::size_t>(plan)], plan, info);
        compute_tasks.push_back(task);
        tasks.first = tasks.last = task;
      }
    }
    const int last_compute = compute_tasks.back();
    if (!zero3 && (!m_s.dp_overlap || !dp_reduce)) {
      emit_buckets(s, stage_grad, m_bucket_bytes, Group::dp, grad_collective, true, last_compute, dp_tasks);
      emit_buckets(s, stage_expert_grad, m_bucket_bytes, Group::expert_dp, grad_collective, true,
                   last_compute, dp_tasks);
    }
    // Optimizer step on this GPU's share of the parameters.
    double optimizer_params = stage_params + stage_expert_params;
    if (m_s.zero >= 1) {
      optimizer_params =
          stage_params / group_ranks(Group::dp) + stage_expert_params / group_ranks(Group::expert_dp);
    }
    Task opt;
    opt.kind = TaskKind::optimizer;
    opt.work_us = m_costs.optimizer_us(optimizer_params);
    TaskInfo opt_info;
    opt_info.what = What::optimizer;
    const int optimizer = add_task(s, k_compute_stream, opt, opt_info);
    if (!dp_tasks.empty()) m_engine.add_dependency(dp_tasks.back(), optimizer);
    if (last_fsdp >= 0) m_engine.add_dependency(last_fsdp, optimizer);
    grads_synced_of[static_cast<std::size_t>(s)] = dp_tasks.empty() ? last_compute : dp_tasks.back();
    optimizer_of[static_cast<std::size_t>(s)] = optimizer;
    // ZeRO 1/2: gather the updated parameter shards.
    if (m_s.zero == 1 || m_s.zero == 2) {
      double bytes = stage_params * m_param_elem;
      double expert = stage_expert_params * m_param_elem;
      std::vector<int> gathers;
      emit_buckets(s, bytes, m_bucket_bytes, Group::dp, Collective::allgather, true, optimizer, gathers);
      emit_buckets(s, expert, m_bucket_bytes, Group::expert_dp, Collective::allgather, true, optimizer,
                   gathers);
    }
  }

  // The tied embedding's gradient: summed over the first and last stage after their gradient sync and
  // before their optimizer steps (Megatron's embedding group all-reduce), one task occupying both stages.
  if (tied_embedding_sync(m_w, m_s)) {
    const auto cls =
        op_class(Collective::allreduce, Group::embedding,
                 static_cast<std::int64_t>(std::llround(m_costs.embedding_params() * m_grad_elem)));
    TaskInfo info;
    info.what = What::embedding;
    const int task = emit_comm(0, k_emb_stream, cls, 1, p - 1, info);
    for (const int s : {0, p - 1}) {
      m_engine.add_dependency(grads_synced_of[static_cast<std::size_t>(s)], task);
      m_engine.add_dependency(task, optimizer_of[static_cast<std::size_t>(s)]);
    }
  }

  // Phase 2: pipeline transfers (activations forward, gradients backward), on the sender's pp stream;
  // Megatron's p2p is synchronous, so the sender's next compute waits for its send.
  if (p > 1) {
    const auto cls = op_class(Collective::sendrecv, Group::pp, m_costs.pp_message_bytes());
    for (int s = 0; s < p; ++s) {
      const auto& order = orders[static_cast<std::size_t>(s)];
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
        const OpTasks& from = op_tasks[op_index(s, op.chunk, op.micro_batch, op.forward)];
        const OpTasks& to = op_tasks[op_index(to_stage, to_chunk, op.micro_batch, op.forward)];
        TaskInfo info;
        info.what = op.forward ? What::transfer_forward : What::transfer_backward;
        info.chunk = op.chunk;
        info.micro_batch = op.micro_batch;
        const int transfer = emit_comm(s, k_pp_stream, cls, 1, to_stage, info);
        m_engine.add_dependency(from.last, transfer);
        m_engine.add_dependency(transfer, to.first);
        if (k + 1 < order.size()) {
          const PipelineOp& next = order[k + 1];
          m_engine.add_dependency(transfer,
                                  op_tasks[op_index(s, next.chunk, next.micro_batch, next.forward)].first);
        }
      }
    }
  }
}

Result<SimulationResult> Builder::finish() {
  LAGOM_TRY_STATUS(m_engine.run());

  const int p = m_s.pp;
  SimulationResult result;
  const double t_us = m_engine.makespan_us();
  result.iteration_time_s = t_us * 1e-6;
  for (int s = 0; s < p; ++s) {
    const StageTotals& totals = m_engine.totals(s);
    Breakdown b{totals.compute_us * 1e-6, totals.exposed_comm_us * 1e-6, totals.bubble_us * 1e-6,
                totals.optimizer_us * 1e-6};
    result.stages.push_back(b);
    result.breakdown.compute_s += b.compute_s / p;
    result.breakdown.exposed_comm_s += b.exposed_comm_s / p;
    result.breakdown.pipeline_bubble_s += b.pipeline_bubble_s / p;
    result.breakdown.optimizer_s += b.optimizer_s / p;
  }
  if (t_us > 0) {
    const IterationFlops flops = m_costs.flops();
    result.tokens_per_s =
        static_cast<double>(m_s.global_batch) * static_cast<double>(m_w.seq) / result.iteration_time_s;
    result.model_tflops_per_gpu = flops.model_flops / result.iteration_time_s / m_s.gpus / 1e12;
    result.hardware_tflops_per_gpu = flops.hardware_flops / result.iteration_time_s / m_s.gpus / 1e12;
    const double peak = m_costs.peak_tflops();
    result.mfu = peak > 0 ? result.model_tflops_per_gpu / peak : 0;
    result.hfu = peak > 0 ? result.hardware_tflops_per_gpu / peak : 0;
  }
  result.memory = m_costs.memory();
  result.fits_in_memory = result.memory.total <= m_costs.memory_capacity_gib();
  result.op_classes = m_classes;
  result.tasks = m_engine.task_count();
  if (m_options.timeline) record_timeline(result);
  return result;
}

// Chains of the task graph build_graph() would make, summed from the plans without building it (the proof
// is at iteration_lower_bound_us in simulator.h). Everything below mirrors build_graph(): the same plans,
// bucket sizes, class prices and optimizer shares; every chain named is one of its paths.
double Builder::lower_bound_us() {
  using model::Collective;
  const int p = m_s.pp, v = m_s.vpp, lpc = m_layers_per_chunk;
  const double m = m_micro_batches;
  const bool zero3 = m_s.zero == 3;
  const bool dp_reduce = group_ranks(Group::dp) > 1 || group_ranks(Group::expert_dp) > 1;
  const Collective grad_collective = m_s.zero >= 1 ? Collective::reducescatter : Collective::allreduce;
  // Work alone of one task of `count` calls (0 where build_graph issues no task).
  auto call_us = [&](Collective collective, Group group, std::int64_t bytes, double count = 1) {
    if (group_ranks(group) < 2 || bytes <= 0) return 0.0;
    return m_entries[static_cast<std::size_t>(op_class(collective, group, bytes))].price.time_us * count;
  };
  // Work alone of the tasks emit_buckets issues for `pending` (which it consumes the same way).
  auto buckets_us = [&](double& pending, double bucket_bytes, Group group, Collective collective,
                        bool flush) {
    if (group_ranks(group) < 2) {
      pending = 0;
      return 0.0;
    }
    const Buckets buckets = take_buckets(pending, bucket_bytes, flush);
    double us = 0;
    for (int b = 0; b < buckets.size; ++b) {
      const BucketTask& task = buckets.tasks[static_cast<std::size_t>(b)];
      us += call_us(collective, group, task.bytes, task.count);
    }
    return us;
  };
  // One pipeline transfer (the sender's pp stream; its next pass waits for it).
  const double transfer_us =
      p > 1 ? call_us(Collective::sendrecv, Group::pp, m_costs.pp_message_bytes()) : 0.0;
  const bool gathers = zero3 && group_ranks(Group::dp) > 1;
  // Whether every gradient task runs on the dp group's link (emit_comm: the NICs when the group spans nodes).
  const bool one_grad_link =
      !m_w.moe || (shape_of(Group::expert_dp).nodes > 1) == (shape_of(Group::dp).nodes > 1);
  const bool pp_on_grad_link = p > 1 && (shape_of(Group::pp).nodes > 1) == (shape_of(Group::dp).nodes > 1);

  double best = 0;
  double head_us = 0;        // earliest start of micro-batch 0's chunk-0 forward on this stage
  double tail_us = 0;        // sum over the stages before this one of (transfer + chunk-0 backward)
  double stage0_end_us = 0;  // stage 0: what follows its last backward (gradient tasks, optimizer, gather)
  for (int s = 0; s < p; ++s) {
    double work_us = 0;  // every pass of every micro-batch: plan totals, m times
    double first_forward_us = 0, first_backward_us = 0;  // chunk 0, one micro-batch
    double first_gather_us = 0;  // ZeRO-3: the gather the stage's first compute task waits for
    double gathers_us = 0;       // ZeRO-3: the fsdp stream's work
    double grads_us = 0;         // the dp stream's gradient tasks (before the optimizer)
    double last_grads_us = 0;    // of those, the ones issued after the stage's last compute task
    double stage_grad = 0, stage_expert_grad = 0, stage_expert_params = 0;
    for (int c = 0; c < v; ++c) {
      const int first = (c * p + s) * lpc;
      const bool embedding = s == 0 && c == 0, logits = s == p - 1 && c == v - 1;
      double forward_us = 0, backward_us = 0;
      if (embedding) forward_us += m_emb_fwd.total_us(), backward_us += m_emb_bwd.total_us();
      if (logits) forward_us += m_logits_fwd.total_us(), backward_us += m_logits_bwd.total_us();
      double pending = 0, pending_expert = 0;  // dp-overlap: the last micro-batch's backward of this chunk
      double chunk_scatters_us = 0;            // ZeRO-3: one backward's reduce-scatters
      for (int j = 0; j < lpc; ++j) {
        forward_us += layer_fwd(first + j).total_us();
        backward_us += layer_bwd(first + j).total_us();
        // The stage's gradient and parameter totals, summed in build_graph()'s order.
        const LayerParams& lp = m_layer_params[static_cast<std::size_t>(first + j)];
        double params = lp.dense;
        if (j == 0 && embedding) params += m_costs.embedding_params();
        if (j == lpc - 1 && logits) params += m_costs.logits_params();
        stage_grad += params * m_grad_elem;
        stage_expert_grad += lp.expert * m_grad_elem;
        stage_expert_params += lp.expert;
      }
      // Per layer piece, in the order the last micro-batch's backward issues them (j = lpc−1 … 0).
      for (int k = 0; k < lpc; ++k) {
        const int j = lpc - 1 - k;
        const LayerParams& lp = m_layer_params[static_cast<std::size_t>(first + j)];
        double params = lp.dense;
        if (j == 0 && embedding) params += m_costs.embedding_params();
        if (j == lpc - 1 && logits) params += m_costs.logits_params();
        const double grad_bytes = params * m_grad_elem, expert_grad_bytes = lp.expert * m_grad_elem;
        if (gathers) {
          const double gather_us = call_us(Collective::allgather, Group::dp,
                                           static_cast<std::int64_t>((params + lp.expert) * m_param_elem));
          gathers_us += 2 * m * gather_us;  // before the forward and the backward piece of every micro-batch
          if (c == 0 && j == 0) first_gather_us = gather_us;
        }
        double piece_us = 0;  // gradient tasks issued right after this piece
        if (zero3) {
          double bytes = grad_bytes, expert = expert_grad_bytes;
          piece_us += buckets_us(bytes, std::max(bytes, 1.0), Group::dp, Collective::reducescatter, true);
          piece_us +=
              buckets_us(expert, std::max(expert, 1.0), Group::expert_dp, Collective::reducescatter, true);
          chunk_scatters_us += piece_us;
        } else if (m_s.dp_overlap && dp_reduce) {
          pending += grad_bytes;
          pending_expert += expert_grad_bytes;
          piece_us += buckets_us(pending, m_bucket_bytes, Group::dp, grad_collective, k == lpc - 1);
          piece_us +=
              buckets_us(pending_expert, m_bucket_bytes, Group::expert_dp, grad_collective, k == lpc - 1);
          grads_us += piece_us;
        }
        // The stage's last compute task is chunk 0's first layer piece of the last backward.
        if (c == 0 && j == 0 && (zero3 || (m_s.dp_overlap && dp_reduce))) last_grads_us = piece_us;
      }
      if (zero3) grads_us += m * chunk_scatters_us;
      work_us += m * (forward_us + backward_us);
      if (c == 0) first_forward_us = forward_us, first_backward_us = backward_us;
    }
    if (!zero3 && (!m_s.dp_overlap || !dp_reduce)) {
      // Every bucket after the backward.
      double dense = stage_grad, expert = stage_expert_grad;
      grads_us = buckets_us(dense, m_bucket_bytes, Group::dp, grad_collective, true) +
                 buckets_us(expert, m_bucket_bytes, Group::expert_dp, grad_collective, true);
      last_grads_us = grads_us;
    }
    const double stage_params = stage_grad / m_grad_elem;
    double optimizer_params = stage_params + stage_expert_params;
    if (m_s.zero >= 1) {
      optimizer_params =
          stage_params / group_ranks(Group::dp) + stage_expert_params / group_ranks(Group::expert_dp);
    }
    const double optimizer_us = m_costs.optimizer_us(optimizer_params);
    double param_gathers_us = 0;  // ZeRO-1/2: after the optimizer
    if (m_s.zero == 1 || m_s.zero == 2) {
      double bytes = stage_params * m_param_elem, expert = stage_expert_params * m_param_elem;
      param_gathers_us = buckets_us(bytes, m_bucket_bytes, Group::dp, Collective::allgather, true) +
                         buckets_us(expert, m_bucket_bytes, Group::expert_dp, Collective::allgather, true);
    }
    // Sends: every forward but the last virtual stage's, every backward but the first's; each but possibly
    // the stage's last pass delays the next pass on the compute stream.
    double sends = 0;
    if (p > 1) sends = std::max(0.0, 2 * m * v - (s == p - 1 ? m : 0) - (s == 0 ? m : 0) - 1);
    const double start_us = std::max(head_us, first_gather_us);
    const double last_pass_end_us = start_us + work_us + sends * transfer_us;
    const double end_us = last_grads_us + optimizer_us + param_gathers_us;
    if (s == 0) stage0_end_us = end_us;
    best = std::max(best, last_pass_end_us + end_us);
    // The last backward's gradient still crosses the stages before this one, then stage 0 finishes.
    if (s > 0) best = std::max(best, last_pass_end_us + tail_us + stage0_end_us);
    // The communication streams alone: gradients then the optimizer; ZeRO-3's gathers then the optimizer.
    best = std::max(best, grads_us + optimizer_us + param_gathers_us);
    best = std::max(best, gathers_us + optimizer_us);
    // ZeRO-3's gathers and reduce-scatters share the dp group's link, which serves at most one unit of
    // work alone per unit of time however it is shared (engine.h), and all of it precedes the optimizer.
    if (gathers && one_grad_link) {
      best = std::max(best, gathers_us + grads_us + optimizer_us);
      // With the stage's own sends too when they cross the same link (not followed by the optimizer: its
      // last send runs beside it).
      if (pp_on_grad_link)
        best = std::max(best, gathers_us + grads_us + (sends + (p > 1 ? 1 : 0)) * transfer_us);
    }
    head_us = start_us + first_forward_us + transfer_us;
    tail_us += transfer_us + first_backward_us;
  }
  return best * (1 - k_rounding_margin);
}

void Builder::record_timeline(SimulationResult& result) const {
  auto class_name = [&](int cls, double count) {
    const OpClassKey& key = m_entries[static_cast<std::size_t>(cls)].key;
    std::string name = fmt::format("{} {} {}", to_string(key.group), model::to_string(key.collective),
                                   units::format_size(key.bytes));
    if (count != 1) name += fmt::format(" ×{}", count);
    return name;
  };
  std::vector<std::vector<std::pair<double, double>>> busy_comm(
      static_cast<std::size_t>(m_engine.stage_count()));
  std::vector<std::vector<std::pair<double, double>>> busy_compute(
      static_cast<std::size_t>(m_engine.stage_count()));
  for (int t = 0; t < static_cast<int>(m_engine.task_count()); ++t) {
    const Task& task = m_engine.task(t);
    const TaskInfo& info = m_info[static_cast<std::size_t>(task.label)];
    const int stage = m_engine.stream_stage(task.stream);
    const double start = m_engine.start_us(t), end = m_engine.end_us(t);
    const double duration = end - start;
    switch (info.what) {
      case What::forward:
      case What::backward: {
        busy_compute[static_cast<std::size_t>(stage)].emplace_back(start, end);
        const std::string base =
            fmt::format("{} mb{} c{} L{}-{}", info.what == What::forward ? "F" : "B", info.micro_batch,
                        info.chunk, info.layer_begin, info.layer_end - 1);
        result.timeline.push_back({stage, "compute", base, "compute", start, duration});
        const PassPlan& plan = m_plans[static_cast<std::size_t>(info.plan)];
        const double alone = plan.total_us();
        const double scale = alone > 0 ? duration / alone : 0;
        double at = start;
        for (const Segment& segment : plan.segments) {
          const double d = segment.us * scale;
          if (segment.op_class >= 0) {
            result.timeline.push_back({stage, "tp",
                                       std::string(segment.name) + " " + class_name(segment.op_class, 1),
                                       "comm", at, d});
          }
          at += d;
        }
        break;
      }
      case What::optimizer:
        busy_compute[static_cast<std::size_t>(stage)].emplace_back(start, end);
        result.timeline.push_back({stage, "compute", "optimizer step", "optimizer", start, duration});
        break;
      case What::transfer_forward:
      case What::transfer_backward:
        busy_comm[static_cast<std::size_t>(stage)].emplace_back(start, end);
        busy_comm[static_cast<std::size_t>(info.peer)].emplace_back(start, end);
        result.timeline.push_back(
            {stage, "pp",
             fmt::format("send {} mb{} c{} → stage {}",
                         info.what == What::transfer_forward ? "activations" : "gradients", info.micro_batch,
                         info.chunk, info.peer),
             "comm", start, duration});
        break;
      case What::dp:
        busy_comm[static_cast<std::size_t>(stage)].emplace_back(start, end);
        result.timeline.push_back(
            {stage, "dp", class_name(info.op_class, info.count), "comm", start, duration});
        break;
      case What::embedding:
        busy_comm[static_cast<std::size_t>(stage)].emplace_back(start, end);
        busy_comm[static_cast<std::size_t>(info.peer)].emplace_back(start, end);
        result.timeline.push_back(
            {stage, "emb",
             fmt::format("embedding grads {} ↔ stage {}", class_name(info.op_class, 1), info.peer), "comm",
             start, duration});
        break;
      case What::fsdp_gather:
        busy_comm[static_cast<std::size_t>(stage)].emplace_back(start, end);
        result.timeline.push_back(
            {stage, "fsdp", fmt::format("gather L{} {}", info.layer_begin, class_name(info.op_class, 1)),
             "comm", start, duration});
        break;
    }
  }
  // Idle gaps of each compute stream: "bubble" where no communication of the stage is in flight, "wait for
  // communication" where some is.
  const double end_us = m_engine.makespan_us();
  for (int s = 0; s < m_engine.stage_count(); ++s) {
    auto& compute = busy_compute[static_cast<std::size_t>(s)];
    auto& comm = busy_comm[static_cast<std::size_t>(s)];
    std::sort(compute.begin(), compute.end());
    std::sort(comm.begin(), comm.end());
    std::vector<std::pair<double, double>> merged;
    for (const auto& iv : comm) {
      if (!merged.empty() && iv.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, iv.second);
      } else {
        merged.push_back(iv);
      }
    }
    std::vector<std::pair<double, double>> gaps;
    double at = 0;
    for (const auto& iv : compute) {
      if (iv.first > at) gaps.emplace_back(at, iv.first);
      at = std::max(at, iv.second);
    }
    if (end_us > at) gaps.emplace_back(at, end_us);
    std::size_t k = 0;
    for (const auto& [g0, g1] : gaps) {
      double cursor = g0;
      while (k < merged.size() && merged[k].second <= g0) ++k;
      for (std::size_t j = k; j < merged.size() && merged[j].first < g1; ++j) {
        const double a = std::max(g0, merged[j].first), b = std::min(g1, merged[j].second);
        if (a > cursor) result.timeline.push_back({s, "compute", "bubble", "bubble", cursor, a - cursor});
        if (b > a) result.timeline.push_back({s, "compute", "wait for communication", "bubble", a, b - a});
        cursor = std::max(cursor, b);
      }
      if (g1 > cursor) result.timeline.push_back({s, "compute", "bubble", "bubble", cursor, g1 - cursor});
    }
  }
}

}  // namespace

std::string_view to_string(Group group) {
  for (const auto& [g, name] : k_groups) {
    if (g == group) return name;
  }
  return "?";
}

std::string_view to_string(IssuePriority priority) {
  return priority == IssuePriority::critical_first ? "critical-first" : "as-scheduled";
}

std::optional<IssuePriority> parse_issue_priority(std::string_view name) {
  if (name == "as-scheduled") return IssuePriority::as_scheduled;
  if (name == "critical-first") return IssuePriority::critical_first;
  return std::nullopt;
}

std::optional<Group> parse_group(std::string_view name) {
  for (const auto& [g, n] : k_groups) {
    if (n == name) return g;
  }
  return std::nullopt;
}

std::string op_class_name(const OpClassKey& key) {
  return fmt::format("{}.{}.{}", to_string(key.group), model::to_string(key.collective), key.bytes);
}

model::CommGroup communicator_shape(Group group, const model::Strategy& s, int gpn) {
  switch (group) {
    case Group::tp:
      return group_shape(s.tp, 1, gpn);
    case Group::cp:
      return group_shape(s.cp, s.tp, gpn);
    case Group::ep:
      return group_shape(s.ep, s.tp, gpn);
    case Group::dp:
      return group_shape(s.dp * s.cp, s.tp, gpn);
    case Group::expert_dp:
      return group_shape(s.dp * s.cp / s.ep, s.tp * s.ep, gpn);
    case Group::pp:
      return group_shape(s.pp > 1 ? 2 : 1, s.tp * s.cp * s.dp, gpn);
    case Group::embedding:
      return group_shape(s.pp > 1 ? 2 : 1, s.tp * s.cp * s.dp * (s.pp - 1), gpn);
  }
  return {};
}

model::CommGroup group_shape(int ranks, int stride, int gpus_per_node) {
  if (ranks <= 1) return model::CommGroup{1, 1};
  const int per_node = stride >= gpus_per_node ? 1 : std::max(1, std::min(ranks, gpus_per_node / stride));
  return model::CommGroup{ranks, (ranks + per_node - 1) / per_node};
}

Result<SimulationResult> simulate(const model::WorkloadSpec& workload, const model::ClusterSpec& cluster,
                                  const model::Strategy& strategy, const IterationCosts& costs,
                                  const CommAssignment& assignment, const SimulateOptions& options) {
  Builder builder(workload, cluster, strategy, costs, assignment, options);
  LAGOM_TRY_STATUS(builder.prepare());
  builder.build_graph();
  return builder.finish();
}

Result<std::vector<OpClass>> op_classes(const model::WorkloadSpec& workload,
                                        const model::ClusterSpec& cluster, const model::Strategy& strategy,
                                        const IterationCosts& costs, const CommAssignment& assignment) {
  LAGOM_TRY(SimulationResult result, simulate(workload, cluster, strategy, costs, assignment));
  return std::move(result.op_classes);
}

Result<double> iteration_lower_bound_us(const model::WorkloadSpec& workload,
                                        const model::ClusterSpec& cluster, const model::Strategy& strategy,
                                        const IterationCosts& costs) {
  const CommAssignment defaults;
  const SimulateOptions options;
  Builder builder(workload, cluster, strategy, costs, defaults, options);
  LAGOM_TRY_STATUS(builder.prepare());
  return builder.lower_bound_us();
}

Result<double> iteration_critical_path_us(const model::WorkloadSpec& workload,
                                          const model::ClusterSpec& cluster, const model::Strategy& strategy,
                                          const IterationCosts& costs) {
  const CommAssignment defaults;
  const SimulateOptions options;
  Builder builder(workload, cluster, strategy, costs, defaults, options);
  LAGOM_TRY_STATUS(builder.prepare());
  builder.build_graph();
  return builder.critical_path_us() * (1 - k_rounding_margin);
}

Result<std::optional<SimulationResult>> simulate_unless_slower(const model::WorkloadSpec& workload,
                                                               const model::ClusterSpec& cluster,
                                                               const model::Strategy& strategy,
                                                               const IterationCosts& costs, double limit_us) {
  const CommAssignment defaults;
  const SimulateOptions options;
  Builder builder(workload, cluster, strategy, costs, defaults, options);
  LAGOM_TRY_STATUS(builder.prepare());
  builder.build_graph();
  if (builder.critical_path_us() * (1 - k_rounding_margin) > limit_us)
    return std::optional<SimulationResult>{};
  LAGOM_TRY(SimulationResult result, builder.finish());
  return std::optional<SimulationResult>(std::move(result));
}

}  // namespace lagom::simulator
