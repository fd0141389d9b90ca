// A tuning problem built from presets, as `lagom tune` builds it (cost model without calibration).
#pragma once

#include <memory>
#include <string>

#include "model/presets.h"
#include "search/search.h"
#include "simulator/model_costs.h"

namespace lagom::test {

struct TuneFixture {
  model::WorkloadSpec workload;
  model::ClusterSpec cluster;
  model::Strategy strategy;
  std::unique_ptr<model::CostModel> model;
  std::unique_ptr<simulator::ModelCosts> costs;
  search::Problem problem;

  // `edit` adjusts the unresolved strategy (gpus already set).
  template <typename Edit>
  TuneFixture(const std::string& model_name, const std::string& cluster_name, int gpus, Edit&& edit,
              model::Runtime runtime = model::Runtime::nccl) {
    workload = model::workload_preset(model_name).value();
    cluster = model::cluster_preset(cluster_name).value();
    cluster.nodes = (gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
    model::Strategy s;
    s.gpus = gpus;
    edit(s, workload);
    strategy = model::resolve_strategy(s, workload, cluster).value();
    model = std::make_unique<model::CostModel>(cluster);
    costs = std::make_unique<simulator::ModelCosts>(*model, workload, strategy);
    problem.workload = &workload;
    problem.cluster = &cluster;
    problem.costs = costs.get();
    problem.space.model = model.get();
    problem.space.strategy = strategy;
    problem.space.runtime = runtime;
  }
};

}  // namespace lagom::test
