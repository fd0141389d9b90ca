// The setup a simulate or explore document records beside its results, as read back: the cluster object
// (name, nodes, GPUs per node, GPU) and the strategy object (model::to_json, model/specs.h), of the knobs a
// reader shows (the degrees of parallelism, ZeRO, the micro-batch, recomputation, TP overlap, sequence
// parallelism). documents/simulate.h and explore.h read them for their documents.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/error.h"
#include "core/json_fields.h"

namespace lagom::documents {

struct ClusterView {
  std::string name;  // the preset or spec file's name
  int nodes = 1, gpus_per_node = 1;
  std::string gpu;  // the GPU's name, e.g. "A100-SXM4-80GB"
};

struct StrategyView {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vpp = 1;
  int zero = 0;  // ZeRO stage
  std::int64_t micro_batch = 1;
  std::string recompute = "none";   // as written: "none", "selective", "full"
  std::string tp_overlap = "none";  // as written: "none", "slice:4", "flash", "te", ...
  // Sequence parallelism, "on" or "off": written as true/false, by older versions also as 1/0 or as the word
  // itself (a string is kept as written). None when absent or of another type: a reader shows it unknown.
  std::optional<std::string> sp;
};

// `cluster` reads the cluster object (its prefix names it in errors: "cluster.nodes: required").
Result<ClusterView> read_cluster_view(const FieldReader& cluster);
// `strategy` reads the strategy object; every knob of StrategyView but sp is required. `gpus` and
// `global_batch` are left to the document's reader (explore records them once, not per strategy).
Result<StrategyView> read_strategy_view(const FieldReader& strategy);

}  // namespace lagom::documents
