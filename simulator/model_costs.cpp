#include "simulator/model_costs.h"

#include <bit>
#include <cassert>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/units.h"
#include "model/nccl_topology.h"
#include "model/pipeline_split.h"
#include "simulator/overlap.h"

namespace lagom::simulator {

namespace {

void sum_flops(const std::vector<model::Step>& steps, double& flops, double& model_flops) {
  for (const auto& step : steps) {
    if (step.is_comm) continue;
    flops += step.compute.flops;
    model_flops += step.compute.model_flops;
  }
}

}  // namespace

SharedPrices::SharedPrices(const model::CostModel& model) : m_model(model) {}

namespace {

void hash_combine(std::size_t& h, std::uint64_t value) {
  h ^= std::hash<std::uint64_t>{}(value) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
}

}  // namespace

std::size_t SharedPrices::Hash::operator()(const CallKey& key) const {
  std::size_t h = 0;
  for (const std::int64_t part :
       {static_cast<std::int64_t>(key.collective), key.bytes, static_cast<std::int64_t>(key.ranks),
        static_cast<std::int64_t>(key.nodes), static_cast<std::int64_t>(key.comm_ctas)}) {
    hash_combine(h, static_cast<std::uint64_t>(part));
  }
  return h;
}

std::size_t SharedPrices::Hash::operator()(const OverlapQuery& q) const {
  std::size_t h = 0;
  for (const std::int64_t part :
       {static_cast<std::int64_t>(q.kernel), static_cast<std::int64_t>(q.method.kind),
        static_cast<std::int64_t>(q.method.slices), static_cast<std::int64_t>(q.ranks), q.m, q.n, q.k,
        static_cast<std::int64_t>(q.element_bytes)}) {
    hash_combine(h, static_cast<std::uint64_t>(part));
  }
  for (const double part : {q.gemm_us, q.collective.time_us, q.collective.latency_us,
                            q.collective.compute_slowdown, q.collective.comm_slowdown}) {
    hash_combine(h, std::bit_cast<std::uint64_t>(part));
  }
  return h;
}

bool SharedPrices::SameQuery::operator()(const OverlapQuery& a, const OverlapQuery& b) const {
  return a.kernel == b.kernel && a.method == b.method && a.ranks == b.ranks && a.m == b.m && a.n == b.n &&
         a.k == b.k && a.element_bytes == b.element_bytes && a.gemm_us == b.gemm_us &&
         a.collective.time_us == b.collective.time_us && a.collective.latency_us == b.collective.latency_us &&
         a.collective.compute_slowdown == b.collective.compute_slowdown &&
         a.collective.comm_slowdown == b.collective.comm_slowdown;
}

model::CommGroup SharedPrices::sharing_nics(model::CommGroup group) const {
  const model::ClusterSpec& cluster = m_model.cluster();
  if (group.nodes <= 1 || cluster.nic.count < 1) return group;
  const int gpn = std::max(1, cluster.gpus_per_node);
  const int ppn = std::max(1, group.ranks_per_node());
  if (ppn > gpn) return group;
  // The node's NICs split over its gpn / ppn symmetric copies of the group: nic.count·ppn/gpn NICs for
  // this one, against the model::usable_nics that the cost model assumes for a group alone.
  const double share = static_cast<double>(cluster.nic.count) * ppn / gpn;
  const double assumed = model::usable_nics(cluster, ppn);
  if (share < assumed) group.nic_share = share / assumed;
  return group;
}

model::CollectiveCost SharedPrices::collective(const CollectiveCall& call,
                                               const std::optional<model::CollConfig>& knobs) const {
  const double bytes = static_cast<double>(call.bytes);
  const model::CostModel& model = m_model;
  const model::CommGroup group = sharing_nics(call.group);
  if (knobs) return model.collective_cost(call.collective, bytes, group, *knobs);
  const CallKey key{call.collective, call.bytes, call.group.ranks, call.group.nodes, call.comm_ctas};
  {
    const std::lock_guard lock(m_mutex);
    if (const auto it = m_collectives.find(key); it != m_collectives.end()) return it->second;
  }
  model::CollConfig config = model.nccl_default(call.collective, bytes, group);
  if (call.comm_ctas > 0) config.channels = call.comm_ctas;
  const model::CollectiveCost cost = model.collective_cost(call.collective, bytes, group, config);
  const std::lock_guard lock(m_mutex);
  m_collectives.emplace(key, cost);
  return cost;
}

Result<OverlapCost> SharedPrices::overlap(const OverlapQuery& query) const {
  {
    const std::lock_guard lock(m_mutex);
    if (const auto it = m_overlaps.find(query); it != m_overlaps.end()) return it->second;
  }
  LAGOM_TRY(const OverlapCost cost, price_overlap(query));
  const std::lock_guard lock(m_mutex);
  m_overlaps.emplace(query, cost);
  return cost;
}

ModelCosts::ModelCosts(const model::CostModel& model, model::WorkloadSpec workload, model::Strategy strategy,
                       std::shared_ptr<const SharedPrices> prices)
    : m_model(model),
      m_prices(prices ? std::move(prices) : std::make_shared<const SharedPrices>(model)),
      m_workload(std::move(workload)),
      m_strategy(std::move(strategy)) {
  assert(&m_prices->model() == &m_model);
  // The model's FLOPs count the vocabulary as given; every op, parameter and byte the padded one.
  const long model_vocab = m_workload.vocab;
  m_workload.vocab = model::padded_vocab(m_workload, m_strategy);
  const auto& w = m_workload;
  const auto& s = m_strategy;
  // Layers past the first recompute_layers of their model chunk (the block method), or all but every
  // recompute_every-th (torchtitan's layer policy), keep their activations: their steps are those of a
  // strategy without recompute.
  m_kept.assign(static_cast<std::size_t>(w.layers), false);
  if (s.recompute == model::Recompute::full && (s.recompute_layers > 0 || s.recompute_every > 0)) {
    for (const auto& stage : model::pipeline_split(w, s)) {
      for (const model::ChunkLayers& chunk : stage) {
        for (int i = 0; i < chunk.layers; ++i)
          m_kept[static_cast<std::size_t>(chunk.first_layer + i)] = !s.recomputes_layer(i);
      }
    }
  }
  model::Strategy kept = s;
  kept.recompute = model::Recompute::none;
  double hw_flops = 0, mdl_flops = 0;
  bool dense_mix = false;  // m_compute_mix is a dense layer's
  double fp8_gemms = 0;    // FP8 GEMMs of every layer (for the amax reduction)
  for (int variant = 0; variant < k_layer_variants; ++variant) {
    // The first layer of this variant (MoE layers exist only in MoE models, kept ones only with the block
    // method), and how many there are.
    int layer = -1, count = 0;
    for (int l = 0; l < w.layers; ++l) {
      if (layer_variant(l) != variant) continue;
      if (layer < 0) layer = l;
      ++count;
    }
    if (layer < 0) continue;
    for (int pass = 0; pass < 3; ++pass) {
      auto steps = m_model.layer_steps(w, variant >= 2 ? kept : s, static_cast<model::Phase>(pass), layer);
      double f = 0, mf = 0;
      sum_flops(steps, f, mf);
      hw_flops += f * count;
      mdl_flops += mf * count;
      if (pass == 0 && (m_compute_mix.empty() || (kind_of(layer) == 0 && !dense_mix))) {
        m_compute_mix.clear();
        for (const auto& step : steps) {
          if (!step.is_comm && step.compute.time_us > 0) m_compute_mix.push_back(step.compute);
        }
        dense_mix = kind_of(layer) == 0;
      }
      if (pass == 0) fp8_gemms += model::CostModel::fp8_gemms(steps) * count;
      m_layer_steps[static_cast<std::size_t>(variant)][static_cast<std::size_t>(pass)] = std::move(steps);
    }
  }
  for (int kind = 0; kind < 2; ++kind) {
    if (kind == 1 && !w.moe) continue;
    // Parameters of one layer on one GPU, from the workload's shapes.
    const double h = static_cast<double>(w.hidden);
    const double head_dim = static_cast<double>(w.head_dim());
    const double attention = h * (w.heads + 2.0 * w.kv_heads) * head_dim + w.heads * head_dim * h;
    const double mlp_mats = model::ffn_matrices(w.ffn_type);
    LayerParams params;
    params.dense_linear = attention / s.tp;
    if (kind == 1) {
      const double expert = mlp_mats * h * static_cast<double>(w.moe->expert_ffn_hidden);
      params.expert = expert / s.expert_tp * w.moe->experts / s.ep;
      params.dense_linear += expert / s.tp * w.moe->shared_experts;  // shared experts
      params.dense = params.dense_linear + h * w.moe->experts;       // + the router
    } else {
      params.dense_linear += mlp_mats * h * static_cast<double>(w.ffn_hidden) / s.tp;
      params.dense = params.dense_linear;
    }
    params.dense += 2.0 * h;  // + two norms
    m_layer_params[static_cast<std::size_t>(kind)] = params;
  }
  for (int pass = 0; pass < 3; ++pass) {
    const auto phase = static_cast<model::Phase>(pass);
    auto emb = m_model.embedding_steps(w, s, phase);
    auto logits = m_model.head_steps(w, s, phase);
    sum_flops(emb, hw_flops, mdl_flops);
    sum_flops(logits, hw_flops, mdl_flops);
    m_embedding_steps[static_cast<std::size_t>(pass)] = std::move(emb);
    m_logits_steps[static_cast<std::size_t>(pass)] = std::move(logits);
    m_amax_steps[static_cast<std::size_t>(pass)] = m_model.amax_steps(s, phase, fp8_gemms / s.pp);
  }
  const model::ComputeOp optimizer = m_model.optimizer_op(w, s);
  m_optimizer_us = optimizer.time_us;
  m_optimizer_params =
      m_model.parameters_per_gpu(w, s) / (s.zero >= 1 ? static_cast<double>(s.zero_shard_ranks()) : 1.0);
  model::WorkloadSpec unpadded = w;
  unpadded.vocab = model_vocab;
  m_flops.model_flops = model::CostModel::model_flops_per_iteration(unpadded, s.global_batch);
  m_flops.hardware_flops = mdl_flops > 0 ? m_flops.model_flops * hw_flops / mdl_flops : m_flops.model_flops;
  const model::MemoryBreakdown memory = m_model.memory_per_gpu(w, s);
  m_memory = {units::bytes_to_gib(memory.weights_bytes),   units::bytes_to_gib(memory.grads_bytes),
              units::bytes_to_gib(memory.optimizer_bytes), units::bytes_to_gib(memory.activations_bytes),
              units::bytes_to_gib(memory.total_bytes()),   memory.stage,
              units::bytes_to_gib(memory.step_bytes)};
}

std::vector<model::Step> ModelCosts::layer_steps(int layer, model::Phase phase) const {
  return m_layer_steps[static_cast<std::size_t>(layer_variant(layer))][static_cast<std::size_t>(phase)];
}
std::vector<model::Step> ModelCosts::embedding_steps(model::Phase phase) const {
  return m_embedding_steps[static_cast<std::size_t>(phase)];
}
std::vector<model::Step> ModelCosts::logits_steps(model::Phase phase) const {
  return m_logits_steps[static_cast<std::size_t>(phase)];
}
std::vector<model::Step> ModelCosts::amax_steps(model::Phase phase) const {
  return m_amax_steps[static_cast<std::size_t>(phase)];
}
LayerParams ModelCosts::layer_params(int layer) const {
  return m_layer_params[static_cast<std::size_t>(kind_of(layer))];
}

double ModelCosts::embedding_params() const {
  return static_cast<double>(m_workload.vocab) * static_cast<double>(m_workload.hidden) / m_strategy.tp;
}
double ModelCosts::logits_params() const {
  // Tied output layer: one copy when the first and last stage coincide, a second copy on the last stage
  // otherwise (Megatron keeps it there and sums its gradient with the first stage's). An untied output
  // layer is its own vocab·hidden/tp matrix on the last stage.
  return m_strategy.pp > 1 || !m_workload.tied_embeddings ? embedding_params() : 0.0;
}

std::int64_t ModelCosts::pp_message_bytes() const {
  return static_cast<std::int64_t>(std::llround(m_model.pp_message_bytes(m_workload, m_strategy)));
}

double ModelCosts::optimizer_us(double params) const {
  return m_optimizer_params > 0 ? m_optimizer_us * params / m_optimizer_params : 0.0;
}

CollectivePrice ModelCosts::collective(const CollectiveCall& call,
                                       const std::optional<model::CollConfig>& knobs) const {
  if (call.group.ranks < 2 || call.bytes <= 0) return {};
  const model::CollectiveCost cost = m_prices->collective(call, knobs);
  CollectivePrice price;
  price.time_us = cost.time_us;
  price.latency_us = cost.latency_us;
  // A collective in flight runs beside whatever the compute stream runs, a layer's whole mix of kernels:
  // GEMMs lose the SMs its CTAs hold, memory-bound kernels the HBM bandwidth it moves, and it loses what
  // they take of HBM (CostModel::interference). Both factors are the mix's, each op weighted by its time
  // alone. (Against the layer's longest GEMM alone, as before issue 26's session 22, the HBM share never
  // reached the simulator: a GEMM is compute-bound.) An approximation: an op held at the host's launch floor
  // (CostModel::op_time_us) is weighted by that time and charged its GPU factor, though only its GPU time
  // slows; it needs the op's GPU time alone, which CostModel::interference does not return yet.
  double weight = 0, compute = 0, comm = 0;
  for (const model::ComputeOp& op : m_compute_mix) {
    const model::Interference i = m_model.interference(op, m_strategy.precision, cost, call.collective);
    weight += op.time_us;
    compute += op.time_us * std::max(1.0, i.compute_factor);
    comm += op.time_us * std::max(1.0, i.comm_factor);
  }
  price.compute_slowdown = weight > 0 ? compute / weight : 1.0;
  price.comm_slowdown = weight > 0 ? comm / weight : 1.0;
  return price;
}

ChunkGemm ModelCosts::gemm_beside(const model::GemmShape& shape, int comm_sms, double comm_GBps) const {
  model::ComputeOp op;
  op.kind = model::OpKind::gemm;
  op.gemm = shape;
  op.flops = shape.flops();
  const double e = model::bytes_per_element(m_strategy.precision);
  op.bytes = e * static_cast<double>(shape.batch) *
             (static_cast<double>(shape.m) * shape.k + static_cast<double>(shape.k) * shape.n +
              static_cast<double>(shape.m) * shape.n);
  ChunkGemm out;
  out.us = m_model.gemm_time_us(shape, m_strategy.precision);
  // The communication kernel as the interference model sees a collective: CTAs on SMs (one per SM), bus
  // traffic through HBM; no NCCL chunks in L2 (userbuffers write straight into the peer's buffer).
  model::CollectiveCost comm;
  comm.config.channels = comm_sms;
  comm.config.chunk_bytes = 0;
  comm.busbw_GBps = comm_GBps;
  out.slowdown =
      m_model.interference(op, m_strategy.precision, comm, model::Collective::reducescatter).compute_factor;
  return out;
}

Result<OverlapCost> ModelCosts::overlap_cost(const OverlapQuery& query) const {
  return m_prices->overlap(query);
}

MemoryGib ModelCosts::memory() const {
  return m_memory;
}
double ModelCosts::memory_capacity_gib() const {
  return m_model.cluster().gpu.memory_budget_gib();
}
IterationFlops ModelCosts::flops() const {
  return m_flops;
}
double ModelCosts::peak_tflops() const {
  return m_model.cluster().gpu.peak_tflops(m_strategy.precision);
}

Status ModelCosts::validate(const CommAssignment& assignment) const {
  for (const auto& [key, config] : assignment.per_class) {
    const model::CommGroup group =
        model::communicator_shape(key.group, m_strategy, m_model.cluster().gpus_per_node);
    if (group.ranks < 2) continue;
    const Status status =
        m_model.validate_config(key.collective, static_cast<double>(key.bytes), group, config);
    if (!status.ok()) return status.error().with_context(op_class_name(key));
  }
  return {};
}

}  // namespace lagom::simulator
