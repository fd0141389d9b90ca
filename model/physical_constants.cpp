#include "model/physical_constants.h"

#include <array>

namespace lagom::model {

namespace {

// Host-side dispatch time of one compute op (ClusterSpec::kernel_launch_us): an eager-mode framework's
// Python + launch path, 2-10 µs per kernel on current hosts (PyTorch's own dispatcher overhead is
// several µs); below 1 µs is a CUDA-graph replay, above 20 µs a host that could not keep up with any GPU.
const std::array k_constants{
    PhysicalConstant{"kernel_launch_us", "host dispatch time of one compute op, microseconds", 0.5, 20.0,
                     [](const ClusterSpec& c) { return c.kernel_launch_us; },
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
