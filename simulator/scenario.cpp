#include "simulator/scenario.h"

#include <utility>

namespace lagom::simulator {

Result<std::unique_ptr<Scenario>> Scenario::make(model::WorkloadSpec workload, model::ClusterSpec cluster,
                                                 const model::Strategy& requested,
                                                 std::optional<model::Calibration> calibration) {
  auto scenario = std::make_unique<Scenario>();
  scenario->workload = std::move(workload);
  scenario->cluster = std::move(cluster);
  LAGOM_TRY(scenario->strategy, model::resolve_strategy(requested, scenario->workload, scenario->cluster));
  scenario->model =
      std::make_unique<model::CostModel>(scenario->cluster, std::move(calibration), scenario->strategy.stack);
  scenario->costs = std::make_unique<ModelCosts>(*scenario->model, scenario->workload, scenario->strategy);
  return scenario;
}

}  // namespace lagom::simulator
