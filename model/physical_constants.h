// The cluster's physical constants that `lagom calibrate` may fit to measured runs: each is a field of the
// cluster spec (so a calibrated cluster is an ordinary cluster JSON that `simulate --cluster` takes), with
// its meaning and the range a real machine can reach. A fit that lands outside the range is refused: it
// would mean the model is missing a mechanism, not that the machine is unusual.
//
// Adding a constant: a field in ClusterSpec/GpuSpec (0 = "by architecture" when it has a default that
// depends on the GPU, resolved by the cost model), its JSON key in specs.cpp, and one entry in
// physical_constants() (physical_constants.cpp) with its source.
#pragma once

#include <span>
#include <string_view>

#include "model/specs.h"

namespace lagom::model {

struct PhysicalConstant {
  std::string_view key;      // the cluster JSON path, e.g. "kernel_launch_us" or "gpu.hbm_efficiency"
  std::string_view meaning;  // one line: what the number is, in its unit
  double min = 0, max = 0;   // the range a real GPU/host can reach (fits outside are refused)
  // The value the cost model uses for this cluster (the field, or its by-architecture default when 0).
  double (*get)(const ClusterSpec& cluster) = nullptr;
  void (*set)(ClusterSpec& cluster, double value) = nullptr;
};

// Every constant calibrate knows, in a fixed order.
std::span<const PhysicalConstant> physical_constants();
// The entry with this key, or nullptr.
const PhysicalConstant* find_physical_constant(std::string_view key);

}  // namespace lagom::model
