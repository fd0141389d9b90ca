// The cluster and strategy objects of simulate and explore documents, read back.
#include "documents/setup.h"

#include <limits>

namespace lagom::documents {

Result<ClusterView> read_cluster_view(const FieldReader& cluster) {
  ClusterView c;
  LAGOM_TRY(c.name, cluster.string("name", std::nullopt));
  LAGOM_TRY(c.gpu, cluster.string("gpu", std::nullopt));
  LAGOM_TRY(c.nodes, cluster.integer("nodes", std::nullopt));
  LAGOM_TRY(c.gpus_per_node, cluster.integer("gpus_per_node", std::nullopt));
  return c;
}

Result<StrategyView> read_strategy_view(const FieldReader& strategy) {
  StrategyView s;
  LAGOM_TRY(s.tp, strategy.integer("tp", std::nullopt));
  LAGOM_TRY(s.pp, strategy.integer("pp", std::nullopt));
  LAGOM_TRY(s.dp, strategy.integer("dp", std::nullopt));
  LAGOM_TRY(s.cp, strategy.integer("cp", std::nullopt));
  LAGOM_TRY(s.ep, strategy.integer("ep", std::nullopt));
  LAGOM_TRY(s.vpp, strategy.integer("vpp", std::nullopt));
  LAGOM_TRY(s.zero, strategy.integer("zero", std::nullopt, 0));
  LAGOM_TRY(s.micro_batch,
            strategy.integer("micro_batch", std::nullopt, 1, std::numeric_limits<std::int64_t>::max()));
  LAGOM_TRY(s.recompute, strategy.string("recompute", std::nullopt));
  LAGOM_TRY(s.tp_overlap, strategy.string("tp_overlap", std::nullopt));
  if (strategy.has("sp")) {
    const nlohmann::json& sp = strategy.at("sp");
    if (sp.is_boolean()) {
      s.sp = sp.get<bool>() ? "on" : "off";
    } else if (sp.is_number()) {
      s.sp = sp.get<double>() != 0 ? "on" : "off";
    } else if (sp.is_string()) {
      s.sp = sp.get<std::string>();
    }
  }
  return s;
}

}  // namespace lagom::documents
