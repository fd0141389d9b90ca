// One scenario of the iteration model: a workload on a cluster under a resolved strategy, with the cost
// model and the simulator's costs built for it. The commands that price one strategy (simulate, tune,
// validate) and the tests build it here, so the set-up exists once.
//
// Thread safety: immutable after make(); `model` and `costs` refer to the other members, so a Scenario
// lives behind the unique_ptr make() returns and is neither copied nor moved.
#pragma once

#include <memory>
#include <optional>

#include "core/error.h"
#include "model/calibration.h"
#include "model/cost_model.h"
#include "model/specs.h"
#include "simulator/model_costs.h"

namespace lagom::simulator {

struct Scenario {
  model::WorkloadSpec workload;
  model::ClusterSpec cluster;
  model::Strategy strategy;  // resolved (model::resolve_strategy)
  std::unique_ptr<model::CostModel> model;
  std::unique_ptr<ModelCosts> costs;

  Scenario() = default;
  Scenario(const Scenario&) = delete;
  Scenario& operator=(const Scenario&) = delete;

  // Resolves `requested` for the workload on the cluster (invalid_input when it does not fit the shapes
  // or the GPUs), then builds the cost model (with the profile's calibration, if any) and the costs.
  // `cluster` must already have its node count for the strategy's GPUs.
  static Result<std::unique_ptr<Scenario>> make(model::WorkloadSpec workload, model::ClusterSpec cluster,
                                                const model::Strategy& requested,
                                                std::optional<model::Calibration> calibration = std::nullopt);
};

}  // namespace lagom::simulator
