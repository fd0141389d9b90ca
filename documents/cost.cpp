// The `cost --json` documents.
#include "documents/cost.h"

#include <optional>

#include <fmt/format.h>

#include "documents/kind.h"
#include "model/fabric.h"

namespace lagom::documents {

nlohmann::json to_json(const CostGemmDocument& document) {
  return stamp(Kind::cost, {{"m", document.m},
                            {"n", document.n},
                            {"k", document.k},
                            {"precision", document.precision},
                            {"cluster", document.cluster},
                            {"time_us", document.time_us},
                            {"tflops", document.tflops},
                            {"efficiency", document.efficiency}});
}

nlohmann::json to_json(const CostCollectiveDocument& document) {
  return stamp(Kind::cost, {{"collective", document.collective},
                            {"bytes", document.bytes},
                            {"ranks", document.ranks},
                            {"nodes", document.nodes},
                            {"cluster", document.cluster},
                            {"time_us", document.time_us},
                            {"algbw_GBps", document.algbw_GBps},
                            {"busbw_GBps", document.busbw_GBps},
                            {"algo", document.algo},
                            {"proto", document.proto},
                            {"channels", document.channels},
                            {"threads", document.threads},
                            {"chunk_bytes", document.chunk_bytes},
                            {"latency_us", document.latency_us},
                            {"cta_policy", document.cta_policy},
                            {"copy_engine", document.copy_engine},
                            {"nccl", document.nccl},
                            {"fabric", document.fabric}});
}

namespace {

model::FabricLoad load_of(const model::ClusterSpec& cluster, const model::CommGroup& group,
                          model::Collective collective, const model::CollConfig& config) {
  return model::fabric_load(cluster, group, model::traffic_pattern(collective, config.algo), config.channels);
}

std::optional<model::QpsRelief> relief_of(const model::ClusterSpec& cluster, const model::CommGroup& group,
                                          model::Collective collective, const model::CollConfig& config) {
  return model::qps_relief(cluster, group, model::traffic_pattern(collective, config.algo), config.channels);
}

}  // namespace

nlohmann::json fabric_json(const model::ClusterSpec& cluster, const model::CommGroup& group,
                           model::Collective collective, const model::CollConfig& config) {
  if (group.nodes <= 1) return nullptr;
  const model::FabricLoad load = load_of(cluster, group, collective, config);
  nlohmann::json relief = nullptr;
  if (const auto r = relief_of(cluster, group, collective, config)) {
    relief = {{"qps_per_connection", r->qps}, {"slowdown", r->slowdown}};
  }
  return {{"routing", to_string(model::resolved_routing(cluster))},
          {"placement", to_string(cluster.nic.fabric.placement)},
          {"leaf_nodes", cluster.nic.fabric.leaf_nodes},
          {"leaves", load.leaves},
          {"crossing_nics", load.crossing_nics},
          {"uplinks", load.uplinks},
          {"flows", load.flows},
          {"slowdown", load.slowdown},
          {"qps_relief", relief}};
}

std::string fabric_text(const model::ClusterSpec& cluster, const model::CommGroup& group,
                        model::Collective collective, const model::CollConfig& config) {
  if (group.nodes <= 1) return "";
  const model::FabricLoad load = load_of(cluster, group, collective, config);
  const std::string how = fmt::format("{} routing, {} nodes", to_string(model::resolved_routing(cluster)),
                                      to_string(cluster.nic.fabric.placement));
  if (load.leaves <= 1) {
    return fmt::format("# fabric: {}; all {} nodes under one leaf of {}: line rate", how, group.nodes,
                       cluster.nic.fabric.leaf_nodes);
  }
  std::string text = fmt::format(
      "# fabric: {} over {} leaves of {}: the busiest leaf sends {:.1f} NICs of traffic in {} flows "
      "to its {} uplinks: {:.2f}x the time at line rate",
      how, load.leaves, cluster.nic.fabric.leaf_nodes, load.crossing_nics, load.flows, load.uplinks,
      load.slowdown);
  if (const auto r = relief_of(cluster, group, collective, config)) {
    text += fmt::format("; with NCCL_IB_QPS_PER_CONNECTION={} {:.2f}x", r->qps, r->slowdown);
  }
  return text;
}

}  // namespace lagom::documents
