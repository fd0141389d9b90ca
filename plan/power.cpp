#include "plan/power.h"

#include <array>

namespace lagom::plan {

namespace {

struct PowerRow {
  std::string_view gpu;    // GpuSpec::name
  double full_w;           // datasheet maximum board power (TDP)
  double idle_w;           // unverified: no datasheet states it
  double node_overhead_w;  // 0 = not known
  std::string_view source;
};

// full_w: NVIDIA datasheets' maximum thermal design power (A100 SXM4 400 W; H100 SXM5 and H200 SXM "up to
// 700 W"; A40 300 W). node_overhead_w: the DGX datasheets' maximum system power less eight GPUs at TDP
// (DGX A100 6.5 kW − 8·400 W = 3.3 kW; DGX H100 and DGX H200 about 10.2 kW − 8·700 W = 4.6 kW): an upper
// figure (CPUs, NICs and fans at their maximum); no datasheet gives one for A40 servers. idle_w: unverified
// assumptions (no datasheet states an idle power), about a seventh of TDP; plausible 10–25 % of TDP.
constexpr std::array<PowerRow, 4> k_rows{{
    {"A100-SXM4-80GB", 400, 60, 3300, "A100 datasheet TDP, DGX A100 datasheet system power"},
    {"H100-SXM5-80GB", 700, 100, 4600, "H100 datasheet TDP, DGX H100 datasheet system power"},
    {"H200-SXM-141GB", 700, 100, 4600, "H200 datasheet TDP, DGX H200 datasheet system power"},
    {"A40-48GB", 300, 40, 0, "A40 datasheet maximum power"},
}};

}  // namespace

PowerFigures power_figures(const model::ClusterSpec& cluster) {
  const model::OperationsSpec& o = cluster.operations;
  PowerFigures p{o.gpu_idle_w, o.gpu_full_w, o.node_overhead_w, ""};
  for (const PowerRow& row : k_rows) {
    if (row.gpu != cluster.gpu.name) continue;
    const bool used = !p.gpu_full_w || !p.gpu_idle_w || (!p.node_overhead_w && row.node_overhead_w > 0);
    if (!p.gpu_full_w) p.gpu_full_w = row.full_w;
    if (!p.gpu_idle_w) p.gpu_idle_w = row.idle_w;
    if (!p.node_overhead_w && row.node_overhead_w > 0) p.node_overhead_w = row.node_overhead_w;
    if (used) p.source = std::string(row.source) + " (docs/plan.md)";
  }
  return p;
}

}  // namespace lagom::plan
