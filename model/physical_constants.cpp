#include "model/physical_constants.h"

#include <array>

namespace lagom::model {

namespace {

// Host-side dispatch time of one modelled compute op (ClusterSpec::kernel_launch_us): an eager-mode
// framework's Python + dispatcher + launch path, 2-15 µs per kernel on current hosts, and a modelled op
// (a norm, a softmax with its dropout, a residual add) stands for 1-10 framework kernels: 0.5 µs (a
// CUDA-graph replay of one kernel) to 150 µs (ten kernels at the slow end of eager dispatch).
const std::array k_constants{
    PhysicalConstant{"kernel_launch_us", "host dispatch time of one modelled compute op, microseconds", 0.5,
                     150.0, [](const ClusterSpec& c) { return c.kernel_launch_us; },
                     [](ClusterSpec& c, double v) { c.kernel_launch_us = v; }},
};

}  // namespace

std::span<const PhysicalConstant> physical_constants() {
  return k_constants;
}

const PhysicalConstant* find_physical_constant(std::string_view key) {
  for (const auto& constant : k_constants) {
    if (constant.key == key) return &constant;
  }
  return nullptr;
}

}  // namespace lagom::model
