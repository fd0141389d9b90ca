// IterationCosts backed by model::CostModel: the real cost model behind the simulator's seam.
//
// Choices made here (docs/simulator.md): layers of the same kind (dense or MoE) are priced once and
// reused; the interference of a collective with compute is evaluated against the layer's longest forward
// compute op (the GEMM that a concurrent collective meets most of the time); the optimizer time scales
// linearly with the parameters it updates (Adam is memory-bound); per-layer parameters come from the
// workload's shapes (QKV, projection, MLP or experts, router, norms) divided by tp (and ep for experts).
//
// Thread safety: immutable after construction; the CostModel must outlive it.
#pragma once

#include <array>
#include <vector>

#include "model/cost_model.h"
#include "simulator/costs.h"
#include "simulator/simulator.h"

namespace lagom::simulator {

class ModelCosts final : public IterationCosts {
 public:
  // `strategy` resolved against `workload` and model.cluster().
  ModelCosts(const model::CostModel& model, model::WorkloadSpec workload, model::Strategy strategy);

  [[nodiscard]] std::vector<Step> layer_steps(int layer, Pass pass) const override;
  [[nodiscard]] double layer_compute_us(int layer) const override;
  [[nodiscard]] LayerBound layer_bound(int layer) const override;
  [[nodiscard]] std::vector<Step> embedding_steps(Pass pass) const override;
  [[nodiscard]] std::vector<Step> logits_steps(Pass pass) const override;
  [[nodiscard]] LayerParams layer_params(int layer) const override;
  [[nodiscard]] double embedding_params() const override;
  [[nodiscard]] double logits_params() const override;
  [[nodiscard]] std::int64_t pp_message_bytes() const override;
  [[nodiscard]] double optimizer_us(double params) const override;
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
  [[nodiscard]] std::vector<Step> convert(const std::vector<model::Step>& steps) const;
  [[nodiscard]] int kind_of(int layer) const { return m_workload.is_moe_layer(layer) ? 1 : 0; }

  const model::CostModel& m_model;
  model::WorkloadSpec m_workload;
  model::Strategy m_strategy;
  // [dense, moe][forward, backward, recompute]
  std::array<std::array<std::vector<Step>, 3>, 2> m_layer_steps;
  std::array<LayerParams, 2> m_layer_params{};
  std::array<double, 2> m_layer_compute_us{};
  std::array<LayerBound, 2> m_layer_bound{};
  std::array<std::vector<Step>, 3> m_embedding_steps, m_logits_steps;
  model::ComputeOp m_representative_op;
  double m_optimizer_us = 0, m_optimizer_params = 0;
  IterationFlops m_flops;
  MemoryGib m_memory;
};

}  // namespace lagom::simulator
