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
    // Compute efficiencies (GpuSpec, 0 = by architecture; sources and defaults in model/cost_compute.cpp
    // and docs/model.md "Compute"). Ranges: what a tuned kernel library reaches on a current GPU at its
    // sustained clock; below them a fit would be hiding a missing mechanism.
    PhysicalConstant{
        "gpu.gemm_fraction_16",
        "sustained fraction of the bf16/fp16 dense peak of a large GEMM (clock under load included)", 0.55,
        0.95, [](const ClusterSpec& c) { return resolved_gemm_fraction(c.gpu, Precision::bf16); },
        [](ClusterSpec& c, double v) { c.gpu.gemm_fraction_16 = v; }},
    PhysicalConstant{"gpu.gemm_fraction_fp8", "sustained fraction of the fp8 dense peak of a large GEMM",
                     0.45, 0.90,
                     [](const ClusterSpec& c) { return resolved_gemm_fraction(c.gpu, Precision::fp8); },
                     [](ClusterSpec& c, double v) { c.gpu.gemm_fraction_fp8 = v; }},
    PhysicalConstant{"gpu.gemm_fraction_32", "sustained fraction of the tf32/fp32 dense peak of a large GEMM",
                     0.55, 0.95,
                     [](const ClusterSpec& c) { return resolved_gemm_fraction(c.gpu, Precision::tf32); },
                     [](ClusterSpec& c, double v) { c.gpu.gemm_fraction_32 = v; }},
    PhysicalConstant{"gpu.hbm_efficiency",
                     "fraction of the datasheet HBM bandwidth a streaming kernel reaches", 0.6, 0.95,
                     [](const ClusterSpec& c) { return resolved_hbm_efficiency(c.gpu); },
                     [](ClusterSpec& c, double v) { c.gpu.hbm_efficiency = v; }},
    PhysicalConstant{
        "gpu.attention_fwd_fraction",
        "fused attention forward, fraction of the 16-bit peak at its hardware FLOPs (head dim 128)", 0.45,
        0.80, [](const ClusterSpec& c) { return resolved_attention_fraction(c.gpu, false); },
        [](ClusterSpec& c, double v) { c.gpu.attention_fwd_fraction = v; }},
    PhysicalConstant{
        "gpu.attention_bwd_fraction",
        "fused attention backward, fraction of the 16-bit peak at its hardware FLOPs (head dim 128)", 0.35,
        0.70, [](const ClusterSpec& c) { return resolved_attention_fraction(c.gpu, true); },
        [](ClusterSpec& c, double v) { c.gpu.attention_bwd_fraction = v; }},
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
