// A tuning problem built from presets, as `lagom tune` builds it (cost model without calibration).
#pragma once

#include <memory>
#include <string>

#include "model/presets.h"
#include "search/search.h"
#include "simulator/model_costs.h"
#include "simulator/scenario.h"

namespace lagom::test {

// The scenario is built by simulator::Scenario::make, as the commands build theirs (inputs/scenario.h); the
// fields below refer into it, so a test may edit the cluster and rebuild `model` and `costs`.
struct TuneFixture {
  std::unique_ptr<simulator::Scenario> scenario;
  model::WorkloadSpec& workload;
  model::ClusterSpec& cluster;
  model::Strategy& strategy;
  std::unique_ptr<model::CostModel>& model;
  std::unique_ptr<simulator::ModelCosts>& costs;
  search::Problem problem;

  // `edit` adjusts the unresolved strategy (gpus already set).
  template <typename Edit>
  TuneFixture(const std::string& model_name, const std::string& cluster_name, int gpus, Edit&& edit,
              model::Runtime runtime = model::Runtime::nccl)
      : scenario(make(model_name, cluster_name, gpus, edit)),
        workload(scenario->workload),
        cluster(scenario->cluster),
        strategy(scenario->strategy),
        model(scenario->model),
        costs(scenario->costs) {
    problem.workload = &workload;
    problem.cluster = &cluster;
    problem.costs = costs.get();
    problem.space.model = model.get();
    problem.space.strategy = strategy;
    problem.space.runtime = runtime;
  }

  // A cost model of this fixture's cluster under another NCCL release (model::nccl_emulation): point a
  // search space's model at it to search what that release lets a deployment set.
  [[nodiscard]] model::CostModel model_with_nccl(const std::string& version) const {
    model::ClusterSpec c = cluster;
    c.nccl_version = version;
    return model::CostModel(c);
  }

 private:
  template <typename Edit>
  static std::unique_ptr<simulator::Scenario> make(const std::string& model_name,
                                                   const std::string& cluster_name, int gpus, Edit& edit) {
    model::WorkloadSpec workload = model::workload_preset(model_name).value();
    model::ClusterSpec cluster = model::cluster_preset(cluster_name).value();
    cluster.nodes = (gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
    model::Strategy s;
    s.gpus = gpus;
    edit(s, workload);
    return simulator::Scenario::make(std::move(workload), std::move(cluster), s).value();
  }
};

}  // namespace lagom::test
