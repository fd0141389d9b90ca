// The `cost --json` documents (kind "cost", docs/cli.md#lagom-cost): the cost model's price of one
// collective call or one GEMM on a cluster.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "model/collectives.h"
#include "model/specs.h"

namespace lagom::documents {

// `cost --gemm M,N,K --json`.
struct CostGemmDocument {
  std::int64_t m = 0, n = 0, k = 0;
  std::string precision, cluster;
  double time_us = 0, tflops = 0;
  double efficiency = 0;  // of the GPU's peak at this precision
};

// `cost --collective ... --json`: the call priced with the knobs used (given, or NCCL's choice).
struct CostCollectiveDocument {
  std::string collective;  // as given
  std::int64_t bytes = 0;  // nccl-tests' size
  int ranks = 0, nodes = 0;
  std::string cluster;
  double time_us = 0, algbw_GBps = 0, busbw_GBps = 0;
  std::string algo, proto;
  int channels = 0, threads = 0;
  std::int64_t chunk_bytes = 0;
  double latency_us = 0;
  std::string cta_policy = "default";  // the communicator's CTA policy (default | zero)
  // On the copy engines (policy zero, an eligible call): algo "ce", proto "none", channels, threads and
  // chunk 0 (no SM held).
  bool copy_engine = false;
  // documents/nccl.h nccl_json: the NCCL release whose defaults priced the call.
  nlohmann::json nccl = nullptr;
  // Across nodes (model/fabric.h): the fabric's routing and placement, the leaves the call spans and what
  // its busiest leaf sends to the spine, and the slowdown it costs; null on one node.
  nlohmann::json fabric = nullptr;
};
// The `fabric` object of a call of `group` (null for one node) and its human line ("" for one node).
nlohmann::json fabric_json(const model::ClusterSpec& cluster, const model::CommGroup& group,
                           model::Collective collective, const model::CollConfig& config);
std::string fabric_text(const model::ClusterSpec& cluster, const model::CommGroup& group,
                        model::Collective collective, const model::CollConfig& config);

// Each stamped with its kind and version.
nlohmann::json to_json(const CostGemmDocument& document);
nlohmann::json to_json(const CostCollectiveDocument& document);

}  // namespace lagom::documents
