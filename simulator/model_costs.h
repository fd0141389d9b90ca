// IterationCosts backed by model::CostModel: the real cost model behind the simulator's seam.
//
// Choices made here (docs/simulator.md): every rank of a node takes part in one of the symmetric groups
// (one per tp·cp coordinate for dp, per rank for pp), and they communicate at the same time, so a group with
// p ranks per node gets nic.count·p / gpus_per_node of the node's NICs (model::CostModel prices a group
// alone, as nccl-tests measures it, with min(nic.count, p) NICs); layers of the same kind (dense or MoE) are
// priced once and reused; the interference of a collective with compute is evaluated against the layer's
// longest forward compute op (the GEMM that a concurrent collective meets most of the time); the optimizer
// time scales linearly with the parameters it updates (Adam is memory-bound); per-layer parameters come from
// the workload's shapes (QKV, projection, MLP or experts, router, norms) divided by tp (and ep for experts).
//
// Thread safety: immutable after construction; the CostModel must outlive it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "model/cost_model.h"
#include "simulator/costs.h"
#include "simulator/simulator.h"

namespace lagom::simulator {

// The prices that depend only on the cluster and the call, shared by the ModelCosts of one CostModel and
// remembered: collective calls with NCCL's default knobs (priced with the shared-NIC rule above) and TP
// overlap pairs. Both are pure functions of their arguments, and explore asks for the same ones across
// thousands of strategies.
//
// Thread safety: every method may be called from any number of threads (the memos are guarded by a
// mutex); the CostModel must outlive it.
class SharedPrices {
 public:
  explicit SharedPrices(const model::CostModel& model);

  [[nodiscard]] const model::CostModel& model() const { return m_model; }
  // The call's cost with `knobs` (nullopt: NCCL's default choice, with call.comm_ctas channels if set).
  // Precondition: call.group.ranks >= 2 and call.bytes > 0.
  [[nodiscard]] model::CollectiveCost collective(const CollectiveCall& call,
                                                 const std::optional<model::CollConfig>& knobs) const;
  // price_overlap(query) (overlap.h).
  [[nodiscard]] Result<OverlapCost> overlap(const OverlapQuery& query) const;

 private:
  struct CallKey {
    model::Collective collective;
    std::int64_t bytes;
    int ranks, nodes, comm_ctas;
    bool operator==(const CallKey&) const = default;
  };
  struct Hash {
    std::size_t operator()(const CallKey& key) const;
    std::size_t operator()(const OverlapQuery& query) const;
  };
  struct SameQuery {
    bool operator()(const OverlapQuery& a, const OverlapQuery& b) const;
  };
  // `group` with its share of the node's NICs (model::CommGroup::nic_share): inter-node collectives of
  // symmetric groups share the node's NICs (the rule above).
  [[nodiscard]] model::CommGroup sharing_nics(model::CommGroup group) const;

  const model::CostModel& m_model;
  mutable std::mutex m_mutex;
  mutable std::unordered_map<CallKey, model::CollectiveCost, Hash> m_collectives;
  mutable std::unordered_map<OverlapQuery, OverlapCost, Hash, SameQuery> m_overlaps;
};

class ModelCosts final : public IterationCosts {
 public:
  // `strategy` resolved against `workload` and model.cluster(). `prices`, when given, must be bound to
  // `model` (explore shares one across strategies); otherwise this object makes its own.
  ModelCosts(const model::CostModel& model, model::WorkloadSpec workload, model::Strategy strategy,
             std::shared_ptr<const SharedPrices> prices = nullptr);

  [[nodiscard]] std::vector<model::Step> layer_steps(int layer, model::Phase phase) const override;
  // Dense or MoE, recomputed or keeping its activations (recompute full with recompute_layers).
  [[nodiscard]] int layer_variant(int layer) const override {
    return kind_of(layer) + (m_kept[static_cast<std::size_t>(layer)] ? 2 : 0);
  }
  [[nodiscard]] std::vector<model::Step> embedding_steps(model::Phase phase) const override;
  [[nodiscard]] std::vector<model::Step> logits_steps(model::Phase phase) const override;
  [[nodiscard]] std::vector<model::Step> amax_steps(model::Phase phase) const override;
  [[nodiscard]] LayerParams layer_params(int layer) const override;
  [[nodiscard]] double embedding_params() const override;
  [[nodiscard]] double logits_params() const override;
  [[nodiscard]] std::int64_t pp_message_bytes() const override;
  [[nodiscard]] double optimizer_us(double params) const override;
  [[nodiscard]] Result<OverlapCost> overlap_cost(const OverlapQuery& query) const override;
  [[nodiscard]] ChunkGemm gemm_beside(const model::GemmShape& shape, int comm_sms,
                                      double comm_GBps) const override;
  [[nodiscard]] CollectivePrice collective(const CollectiveCall& call,
                                           const std::optional<model::CollConfig>& knobs) const override;
  [[nodiscard]] MemoryGib memory() const override;
  [[nodiscard]] double memory_capacity_gib() const override;
  [[nodiscard]] IterationFlops flops() const override;
  [[nodiscard]] double peak_tflops() const override;

  // Checks a user-given knob assignment against NCCL's rules for every op class it names (shapes from
  // this strategy); invalid_input naming the class and the reason.
  [[nodiscard]] Status validate(const CommAssignment& assignment) const;

 private:
  [[nodiscard]] int kind_of(int layer) const { return m_workload.is_moe_layer(layer) ? 1 : 0; }

  const model::CostModel& m_model;
  std::shared_ptr<const SharedPrices> m_prices;
  model::WorkloadSpec m_workload;
  model::Strategy m_strategy;
  static constexpr int k_layer_variants = 4;
  std::vector<bool> m_kept;  // per layer: keeps its activations (no recompute) under the block method
  // [dense, moe, dense kept, moe kept][forward, backward, recompute]
  std::array<std::array<std::vector<model::Step>, 3>, k_layer_variants> m_layer_steps;
  std::array<LayerParams, 2> m_layer_params{};
  std::array<std::vector<model::Step>, 3> m_embedding_steps, m_logits_steps, m_amax_steps;
  // What the compute stream runs while a collective is in flight: a dense layer's forward ops (an MoE
  // layer's when every layer is one), each with its time alone.
  std::vector<model::ComputeOp> m_compute_mix;
  double m_optimizer_us = 0, m_optimizer_params = 0;
  IterationFlops m_flops;
  MemoryGib m_memory;
};

}  // namespace lagom::simulator
