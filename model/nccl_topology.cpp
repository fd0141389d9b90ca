// NCCL's view of a cluster (model/nccl_topology.h). Every rule cites NVIDIA/nccl at tag v2.28.9-1 as
// path:line unless it names another tag (a later release's rule); the code is Lagom's own emulation of
// what those lines decide, not a copy.
#include "model/nccl_topology.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <vector>

#include <fmt/format.h>

namespace lagom::model {

namespace {

// The per-channel speeds the search tries, fastest first (NVIDIA/nccl@v2.28.9-1:src/graph/search.cc:976-987).
constexpr std::array<double, 13> k_speed_intra{40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                               9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
constexpr std::array<double, 19> k_speed_inter{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                               7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array<double, 11> k_sm90_speed_intra{60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                                    15.0, 12.0, 11.0, 6.0,  3.0};
constexpr std::array<double, 17> k_sm90_speed_inter{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                                    15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array<double, 11> k_sm100_speed_intra{90.0, 80.0, 70.0, 60.0, 50.0, 40.0,
                                                     30.0, 24.0, 20.0, 19.0, 18.0};
constexpr std::array<double, 18> k_sm100_speed_inter{96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0,
                                                     17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// 2.29 adds 45 to the sm100 intra speeds (NVIDIA/nccl@v2.29.2-1:src/graph/search.cc:986, v2.30.7-1:1063),
// 2.29.7 adds 80 to the inter speeds (v2.29.7-1:src/graph/search.cc:988) and 2.30 adds 86
// (v2.30.3-1:src/graph/search.cc:996, v2.30.7-1:1064-1065).
constexpr std::array<double, 12> k_sm100_speed_intra_2_29{90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                                          40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
constexpr std::array<double, 19> k_sm100_speed_inter_2_29_7{96.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0,
                                                            24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
                                                            3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array<double, 20> k_sm100_speed_inter_2_30{96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0,
                                                          30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                                                          6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr NcclVersion k_nccl_2_29{2, 29, 0}, k_nccl_2_29_7{2, 29, 7}, k_nccl_2_30{2, 30, 0};

constexpr int k_max_channels = 64;                     // MAXCHANNELS (src/include/device.h:86)
constexpr int k_ring_max_search = k_max_channels / 2;  // ringGraph->maxChannels (src/init.cc:1019)
constexpr double k_pci_bw = 12.0;                      // PCI_BW, Gen3 x16 (src/graph/topo.h:22)
constexpr int k_simple_max_threads = 512;              // NCCL_SIMPLE_MAX_NTHREADS (src/include/device.h:90)
constexpr int k_ll_max_threads = 512;                  // NCCL_LL_MAX_NTHREADS (device.h:92)
constexpr int k_ll128_max_threads = 640;               // NCCL_LL128_MAX_NTHREADS (device.h:109)
constexpr int k_max_threads = 640;                     // NCCL_MAX_NTHREADS (device.h:88)
constexpr double k_simple_thread_threshold = 64;       // NCCL_SIMPLE_THREAD_THRESHOLD (src/include/comm.h:43)
constexpr double k_ll_thread_threshold = 8;            // NCCL_LL_THREAD_THRESHOLD (comm.h:41)
constexpr double k_ll128_thread_threshold = 8;         // NCCL_LL128_THREAD_THRESHOLD (comm.h:42)

std::span<const double> speeds(int arch, bool inter, const NcclVersion& release) {
  if (arch >= 100 && inter) {
    if (release >= k_nccl_2_30) return k_sm100_speed_inter_2_30;
    return release >= k_nccl_2_29_7 ? std::span<const double>(k_sm100_speed_inter_2_29_7)
                                    : k_sm100_speed_inter;
  }
  if (arch >= 100)
    return release >= k_nccl_2_29 ? std::span<const double>(k_sm100_speed_intra_2_29) : k_sm100_speed_intra;
  if (arch >= 90) return inter ? std::span<const double>(k_sm90_speed_inter) : k_sm90_speed_intra;
  return inter ? std::span<const double>(k_speed_inter) : k_speed_intra;
}

// NCCL's per-link NVLink figure (ncclTopoNVLinkBw, src/graph/topo.h:274-283; values topo.h:16-21).
double nccl_nvlink_per_link(int arch) {
  if (arch >= 100) return 40.1;
  if (arch >= 90) return 20.6;
  if (arch == 86) return 12.0;
  if (arch >= 80) return 20.0;
  if (arch >= 70) return 20.0;
  return 18.0;
}
// One NVLink's datasheet rate per direction, to count a spec's links: NVLink3 and NVLink4 carry 25 GB/s
// per link and direction (A100: 600 GB/s over 12 links, H100: 900 over 18, both directions), NVLink5 50
// (B200: 1800 over 18); the A40's bridge 112.5 GB/s over 4 links is 14.0625 (NVIDIA datasheets).
double datasheet_link_GBps(int arch) {
  if (arch >= 100) return 50.0;
  if (arch == 86) return 14.0625;
  return 25.0;
}

// NCCL's x16 bandwidth of a PCIe generation: 16 lanes × speed / 80 with speeds 60, 120, 240, 480 for
// 8, 16, 32, 64 GT/s (src/graph/topo.cc:423-426, :491).
double nccl_pcie_x16(int generation) {
  switch (generation) {
    case 3:
      return 16 * 60 / 80.0;
    case 4:
      return 16 * 120 / 80.0;
    case 5:
      return 16 * 240 / 80.0;
    default:
      return generation >= 6 ? 16 * 480 / 80.0 : 16 * 60 / 80.0;
  }
}

// Channels of one ring-pattern search at `speed` (both bwIntra and bwInter), for `g` GPUs of the
// communicator per node: each channel takes `speed` off every link it crosses (search.cc:79-117 followPath,
// :669-751 ncclTopoSearchRecNet), so the count is the tightest link's budget. The NIC's budget is compared
// against the truncated integer speed (search.cc:670, :680).
int ring_channels_at(const ClusterSpec& c, const NcclLinks& l, int g, int nodes, double speed) {
  constexpr double eps = 1e-6;
  int nets = k_ring_max_search;
  if (nodes > 1) {
    const int whole = static_cast<int>(speed);
    if (whole <= 0) return 0;
    const int usable = usable_nics(c, g);
    // The GPU PCIe bandwidth behind each NIC: the GPUs on its PCIe switch, or a share of one GPU's link
    // where each GPU has several NICs.
    const double gpu_side = usable <= g ? std::max(1, g / usable) * l.gpu_pcie_GBps
                                        : l.gpu_pcie_GBps * g / static_cast<double>(usable);
    const int per_nic =
        std::min({static_cast<int>(l.nic_GBps / whole + eps), static_cast<int>(l.nic_pcie_GBps / speed + eps),
                  static_cast<int>(gpu_side / speed + eps)});
    nets = usable * per_nic;
  }
  int intra = k_ring_max_search;
  if (g > 1) {
    switch (c.intra.kind) {
      case FabricKind::nvswitch:
        // Every GPU forwards each channel over NVLink, except the GPU that hands it to the NIC.
        intra = nodes == 1 ? static_cast<int>(l.nvlink_GBps / speed + eps)
                           : static_cast<int>(l.nvlink_GBps * g / ((g - 1) * speed) + eps);
        break;
      case FabricKind::nvlink_pairs:
        // Half of a ring's hops stay inside a pair; the other half (and the NIC hop) cross PCIe.
        intra = g == 2 ? static_cast<int>(l.nvlink_GBps / speed + eps)
                       : std::min(static_cast<int>(2 * l.gpu_pcie_GBps / speed + eps),
                                  static_cast<int>(2 * l.nvlink_GBps / speed + eps));
        break;
      case FabricKind::pcie:
      case FabricKind::shm:
        intra = static_cast<int>(l.gpu_pcie_GBps / speed + eps);
        break;
    }
  }
  return std::max(0, std::min({nets, intra, k_ring_max_search}));
}

// ncclTopoCompute for the ring pattern (search.cc:991-1198): pass 1 takes the first speed the path allows
// and steps down while the next speed is above 0.49 of the best found, keeping the largest channels ×
// speed, stopping once that covers the GPU's total bandwidth (:1099, :1145); ncclTopoDupChannels doubles
// the channels at half the speed unless the speed is below 25 GB/s, or on sm>80 below 50 with more than
// 4 channels (:961-974); pass 2 raises the speed while the channels still fit (:1168-1174).
NcclGraph ring_search(const ClusterSpec& c, const NcclLinks& l, int g, int nodes,
                      const NcclVersion& release) {
  const bool inter = nodes > 1;
  const auto sp = speeds(c.gpu.sm_arch, inter, release);
  double max_bw = 0;  // best GPU → NET (or GPU → GPU) path, search.cc:19-28
  if (inter) {
    max_bw = std::min({l.gpu_pcie_GBps, l.nic_pcie_GBps, l.nic_GBps});
  } else {
    max_bw = c.intra.kind == FabricKind::nvswitch || c.intra.kind == FabricKind::nvlink_pairs
                 ? l.nvlink_GBps
                 : l.gpu_pcie_GBps;
  }
  const double total_bw = std::max(l.gpu_pcie_GBps, l.nvlink_GBps);  // search.cc:29-37
  std::size_t i = 0;
  while ((sp[i] > max_bw || sp[i] > total_bw) && i + 1 < sp.size()) ++i;  // search.cc:1075
  int best_n = 0;
  double best_s = 0;
  while (true) {
    const int n = ring_channels_at(c, l, g, nodes, sp[i]);
    if (n * sp[i] > best_n * best_s) {
      best_n = n;
      best_s = sp[i];
    }
    if (best_n * best_s >= total_bw) break;
    if (i + 1 < sp.size() && (best_n == 0 || sp[i + 1] / best_s > 0.49)) {
      ++i;
      continue;
    }
    break;
  }
  if (best_n == 0) return NcclGraph{1, 0.1, 0.1};  // "falling back to simple order" (search.cc:1189-1196)
  if (!(best_s < 25.0) && !(c.gpu.sm_arch > 80 && best_s < 50.0 && best_n > 4)) {
    const int dup = std::min(2 * best_n, k_ring_max_search);
    best_s /= (dup + best_n - 1) / best_n;
    best_n = dup;
  }
  int n = best_n;
  double s = best_s;
  for (const double faster : sp) {
    if (faster <= best_s) break;
    const int m = ring_channels_at(c, l, g, nodes, faster);
    if (m >= best_n && m * faster > n * s) {
      n = m;
      s = faster;
    }
  }
  return NcclGraph{n, s, s};
}

// The tree graph (init.cc:1023-1028: minChannels = maxChannels = the ring's): the ring's channels and
// speed, then pass 2 raises bwIntra one speed step at a time while it is below twice bwInter and the
// node's links still carry the channels (search.cc:1179-1182). NCCL's model reads bwIntra up to 2 nodes.
NcclGraph tree_search(const ClusterSpec& c, const NcclLinks& l, int g, int nodes, const NcclGraph& ring,
                      const NcclVersion& release) {
  NcclGraph tree = ring;
  if (g < 2) return tree;
  const auto sp = speeds(c.gpu.sm_arch, nodes > 1, release);
  std::size_t i = 0;
  while (i + 1 < sp.size() && sp[i] > tree.bw_intra_GBps) ++i;
  auto fits = [&](double speed) {
    const double n = tree.channels;
    switch (c.intra.kind) {
      case FabricKind::nvswitch:
        return n * speed <= l.nvlink_GBps + 1e-6;
      case FabricKind::nvlink_pairs:
        return g == 2 ? n * speed <= l.nvlink_GBps + 1e-6
                      : n * speed <= 2 * l.gpu_pcie_GBps + 1e-6 && n * speed <= 2 * l.nvlink_GBps + 1e-6;
      default:
        return n * speed <= l.gpu_pcie_GBps + 1e-6;
    }
  };
  while (tree.bw_intra_GBps < 2 * tree.bw_inter_GBps && i > 0 && fits(sp[i - 1]))
    tree.bw_intra_GBps = sp[--i];
  return tree;
}

// The NVLS graph (search.cc:386-417 ncclTopoSearchTryNvls, :694-712): one channel per head GPU; each head
// takes its speed off every GPU's NVSwitch link once and off its own twice. On one node every GPU is a
// head (minChannels = maxChannels, search.cc:1043-1046); across nodes one head per NIC with a GPU of its
// own. Pass 2 raises bwInter while it is below twice bwIntra (search.cc:1175-1178).
NcclGraph nvls_search(const ClusterSpec& c, const NcclLinks& l, int g, int nodes,
                      const NcclVersion& release) {
  const bool inter = nodes > 1;
  const int heads = inter ? std::max(1, std::min(c.nic.count, g)) : g;
  const double limit = inter ? std::min({l.gpu_pcie_GBps, l.nic_pcie_GBps, l.nic_GBps}) : 1e30;
  const auto sp = speeds(c.gpu.sm_arch, inter, release);
  // Non-ring patterns see the total bandwidth × g/(g−1) (search.cc:1074).
  const double total = l.nvlink_GBps * g / std::max(1, g - 1);
  for (std::size_t i = 0; i < sp.size(); ++i) {
    const double s = sp[i];
    if (s > limit) continue;
    if (!inter && s * heads > total) continue;
    if ((heads + 1) * s > l.nvlink_GBps + 1e-6) continue;
    double bw_inter = s;
    std::size_t j = i;
    while (bw_inter < 2 * s && j > 0 && sp[j - 1] <= limit) bw_inter = sp[--j];
    return NcclGraph{heads, s, bw_inter};
  }
  return NcclGraph{};
}

// comm->nvlsChannels (nvls.cc:148-150, :180-197): NVLS_NCHANNELS_SM90 16; sm100 32 across nodes, 24 inside
// one. From 2.30 ncclNvlsTreeSm100Tuning sets sm100's across nodes by minNetBw
// (NVIDIA/nccl@v2.30.7-1:src/transport/nvls.cc:164-200, applied at :209-219): 32 on 2 nodes with 48 GB/s
// or more (:173-174); 24 (8 GPUs a node or fewer) or 32 with 96 or more (:182-188); 24 with 48 or more
// (:191-192); else the default 32. A rank's minNetBw is its slowest GPU → NIC path
// (v2.30.7-1:src/graph/topo.cc:379-399: the least of the GPU's PCIe link, the NIC's and the NIC's rate),
// the least over ranks (v2.30.7-1:src/init.cc:1433-1450). The tuning's path-type tests (nvls.cc:179,
// :194) move only the chunk size, which Lagom does not model per algorithm.
int nvls_channels(const ClusterSpec& c, const NcclLinks& l, int g, int nodes, const NcclVersion& release) {
  if (c.gpu.sm_arch < 100) return 16;
  if (nodes <= 1) return 24;
  if (release < k_nccl_2_30) return 32;
  const double min_net_bw = std::min({l.gpu_pcie_GBps, l.nic_pcie_GBps, l.nic_GBps});
  if (nodes == 2 && min_net_bw >= 48.0) return 32;
  if (min_net_bw >= 96.0) return g <= 8 ? 24 : 32;
  return min_net_bw >= 48.0 ? 24 : 32;
}

// comm->nvlsChunkSize and comm->nvlsTreeMaxChunkSize (nvls.cc): NVLS_CHUNKSIZE 128 KiB; the tree's
// largest chunk NVLSTREE_MAX_CHUNKSIZE, by default 64 KiB from 4 nodes on and the chunk below
// (NVIDIA/nccl@v2.26.2-1:src/enqueue.cc:1893-1896, v2.28.9-1:2061-2064). From 2.30 ncclNvlsTreeSm100Tuning
// sets both on sm100 across nodes by minNetBw and ranks per node (v2.30.7-1:src/transport/nvls.cc:164-197,
// fallback :227-229). Its path test (GPU to NIC through at most a PCIe switch, :179, :194) holds for the
// rail-aligned NICs Lagom's clusters describe (the LL128 rule in nccl_comm assumes the same).
struct NvlsTreeChunks {
  std::int64_t chunk = 128 * 1024, tree_max = 0;
};
NvlsTreeChunks nvls_tree_chunks(const ClusterSpec& c, const NcclLinks& l, int g, int nodes,
                                const NcclVersion& release) {
  constexpr std::int64_t k64 = 64 * 1024, k128 = 128 * 1024, k256 = 256 * 1024;
  NvlsTreeChunks out;
  if (c.gpu.sm_arch >= 100 && nodes > 1 && !(release < k_nccl_2_30)) {
    const double min_net_bw = std::min({l.gpu_pcie_GBps, l.nic_pcie_GBps, l.nic_GBps});
    if (nodes == 2 && min_net_bw >= 48.0) {
      out.tree_max = k128;
      if (g <= 4) {
        out = {k256, k256};
      } else if (g >= 16 || (g <= 8 && min_net_bw < 96.0)) {
        out.tree_max = k64;
      }
    } else if (min_net_bw >= 96.0) {
      out = g <= 8 ? NvlsTreeChunks{k256, k256} : NvlsTreeChunks{k128, g < 32 ? k128 : k64};
    } else if (min_net_bw >= 48.0) {
      out.tree_max = k64;
    }
  }
  if (out.tree_max == 0) out.tree_max = nodes >= 4 ? k64 : out.chunk;
  return out;
}

// The release nccl_emulation follows, without its warning (the cost model asks it for every call).
NcclVersion emulated_release(std::string_view nccl_version) {
  const auto v = parse_nccl_version(nccl_version);
  if (!v) return NcclVersion{2, 28, 9};  // none named: the default
  if (*v < NcclVersion{2, 24, 0}) return NcclVersion{2, 24, 3};
  if (*v >= NcclVersion{2, 31, 0}) return NcclVersion{2, 30, 7};
  const bool patch_given = std::count(nccl_version.begin(), nccl_version.end(), '.') == 2;
  switch (v->minor) {
    case 27:
      return NcclVersion{2, 27, 7};
    case 28:
      return NcclVersion{2, 28, 9};
    case 29:
      return !patch_given || v->patch >= 7 ? k_nccl_2_29_7 : NcclVersion{2, 29, 3};
    case 30:
      return NcclVersion{2, 30, 7};
    default:
      return NcclVersion{2, 24, 3};
  }
}

}  // namespace

std::string to_string(const NcclVersion& version) {
  return fmt::format("{}.{}.{}", version.major, version.minor, version.patch);
}

bool tuner_sets_chunk(const NcclVersion& version) {
  return version >= NcclVersion{2, 30, 0};
}

NcclEmulation nccl_emulation(std::string_view nccl_version) {
  NcclEmulation emulation{emulated_release(nccl_version), ""};
  const auto v = parse_nccl_version(nccl_version);
  if (v && *v < NcclVersion{2, 24, 0}) {
    emulation.warning = fmt::format(
        "NCCL {} is older than the releases Lagom emulates (2.24 to 2.30): its defaults are taken as "
        "2.24.3's",
        nccl_version);
  } else if (v && *v >= NcclVersion{2, 31, 0}) {
    emulation.warning = fmt::format(
        "NCCL {} is newer than the releases Lagom emulates (2.24 to 2.30): its defaults are taken as "
        "2.30.7's",
        nccl_version);
  }
  return emulation;
}

NcclVersion emulated_nccl(const ClusterSpec& cluster) {
  return emulated_release(cluster.nccl_version);
}

int gpu_pcie_gen(const ClusterSpec& cluster) {
  if (cluster.gpu.pcie_gen > 0) return cluster.gpu.pcie_gen;
  return cluster.gpu.sm_arch >= 90 ? 5 : 4;
}
int nic_pcie_gen(const ClusterSpec& cluster, double nic_share) {
  if (cluster.nic.pcie_gen > 0) return cluster.nic.pcie_gen;
  return cluster.nic.gbit * nic_share > 200 ? 5 : 4;
}
int usable_nics(const ClusterSpec& cluster, int ranks_per_node) {
  const int nics = cluster.nic.count;
  const int gpn = std::max(1, cluster.gpus_per_node);
  if (nics > gpn) return std::max(1, nics * ranks_per_node / gpn);
  return std::max(1, std::min(nics, ranks_per_node));
}
double resolved_host_memory_GBps(const ClusterSpec& cluster) {
  if (cluster.nic.host_memory_GBps > 0) return cluster.nic.host_memory_GBps;
  // Channels × MT/s × 8 bytes × 2 sockets: 8 × 3200 × 8 × 2 = 409.6 GB/s; 8 × 4800 × 8 × 2 = 614.4 GB/s.
  return cluster.gpu.sm_arch >= 90 ? 614.4 : 409.6;
}
NicRates nic_rates(const ClusterSpec& cluster, const CommGroup& group, double pcie_efficiency) {
  NicRates rates;
  rates.usable = usable_nics(cluster, group.ranks_per_node());
  rates.line_GBps = cluster.nic.gbit * group.nic_share / 8.0;
  const double pcie = pcie_x16_GBps(nic_pcie_gen(cluster, group.nic_share)) * pcie_efficiency;
  rates.per_nic_GBps =
      std::min(rates.line_GBps * cluster.nic.efficiency, cluster.nic.gpudirect ? pcie : pcie / 2.0);
  rates.node_GBps = rates.usable * rates.per_nic_GBps;
  if (!cluster.nic.gpudirect) {
    // The node's share of DRAM: its NICs at nic_share of the node's traffic.
    const double dram = resolved_host_memory_GBps(cluster) * k_host_memory_efficiency / 4.0 * group.nic_share;
    rates.node_GBps = std::min(rates.node_GBps, dram);
    rates.per_nic_GBps = rates.node_GBps / rates.usable;
  }
  return rates;
}
double pcie_x16_GBps(int generation) {
  // 8, 16, 32, 64 GT/s per lane, 16 lanes, 128b/130b encoding (Gen6's FLIT mode is close to it).
  const double gts = generation <= 3 ? 8.0 : (generation == 4 ? 16.0 : (generation == 5 ? 32.0 : 64.0));
  return gts * 16 * 128.0 / 130.0 / 8.0;
}
double resolved_net_channel_GBps(const ClusterSpec& cluster) {
  if (cluster.gpu.net_channel_GBps > 0) return cluster.gpu.net_channel_GBps;
  // docs/model.md "Channels and the network": 12 before sm90 (192 GB/s over 16 CTAs on DGX-A100,
  // NVIDIA/nccl#812; "two SMs per 200G NIC", NVIDIA/nccl#689, PR #645); 22.9 from sm90 (the nccl-tests
  // 4-node H100 ring, tests/data/nccl-tests).
  return cluster.gpu.sm_arch >= 90 ? 22.9 : 12.0;
}

NcclLinks nccl_links(const ClusterSpec& cluster, const CommGroup& group) {
  NcclLinks l;
  const int arch = cluster.gpu.sm_arch;
  const double per_link = nccl_nvlink_per_link(arch);
  if (cluster.intra.kind == FabricKind::nvswitch) {
    l.nvlink_GBps = std::max(1.0, std::round(cluster.intra.bw_GBps / datasheet_link_GBps(arch))) * per_link;
  } else if (cluster.intra.kind == FabricKind::nvlink_pairs) {
    l.nvlink_GBps =
        std::max(1.0, std::round(cluster.intra.pair_bw_GBps / datasheet_link_GBps(arch))) * per_link;
  }
  l.gpu_pcie_GBps = nccl_pcie_x16(gpu_pcie_gen(cluster));
  l.nic_pcie_GBps = nccl_pcie_x16(nic_pcie_gen(cluster, group.nic_share));
  l.nic_GBps = cluster.nic.gbit * group.nic_share * 1000.0 / 8000.0;
  return l;
}

NcclComm nccl_comm(const ClusterSpec& cluster, const CommGroup& group) {
  NcclComm comm;
  comm.ranks = std::max(1, group.ranks);
  comm.nodes = std::max(1, group.nodes);
  comm.local_ranks = group.ranks_per_node();
  if (!cluster.has_nccl) {
    comm.ring = comm.tree = NcclGraph{1, 0.1, 0.1};
    comm.ctas = std::max(1, cluster.nccl_channels);
    return comm;
  }
  const NcclLinks links = nccl_links(cluster, group);
  const NcclVersion release = emulated_nccl(cluster);
  const int g = comm.local_ranks;
  comm.ring = ring_search(cluster, links, g, comm.nodes, release);
  comm.tree = tree_search(cluster, links, g, comm.nodes, comm.ring, release);
  // connect.cc:452: the compute channels are twice the search channels.
  int ctas = std::min(k_max_channels, 2 * comm.ring.channels);
  // connect.cc:472-475: 4 compute channels per search channel on sm90+ across nodes when the ring's
  // bwIntra is above 45 and fewer than 16 CTAs remain.
  if (cluster.gpu.sm_arch >= 90 && comm.nodes > 1 && comm.ring.bw_intra_GBps > 45.0 && ctas < 16) {
    ctas = std::min(k_max_channels, 2 * ctas);
  }
  comm.ctas = cluster.nccl_channels > 0 ? cluster.nccl_channels : ctas;
  // tuning.cc:231: 256 Simple threads when the ring's total bandwidth is at most PCI_BW.
  comm.simple_threads = comm.ring.bw_intra_GBps * comm.ring.channels <= k_pci_bw ? 256 : k_simple_max_threads;
  // tuning.cc:480-493: LL128 by default only up to PXN paths on sm90+ (PXB before) and over NVLink inside
  // the node. Rail-aligned NICs sit on the GPUs' PCIe switches (PIX/PXB), so the network path allows it;
  // the intra-node path is NVLink only on NVSwitch, or between the two GPUs of an NVLink pair.
  comm.ll128_inter = true;
  const bool nvlink_intra = cluster.intra.kind == FabricKind::nvswitch ||
                            (cluster.intra.kind == FabricKind::nvlink_pairs && g <= 2) || g == 1;
  if (!nvlink_intra) comm.ll128_inter = false;
  // NVLS: NCCL_NVLS_ENABLE and multicast support (nvls.cc:152-176), an NVSwitch and sm90+ (search.cc:1036),
  // at least 2 GPUs of the communicator on the node (nvls.cc:161).
  const bool nvls =
      cluster.nvls && cluster.gpu.sm_arch >= 90 && cluster.intra.kind == FabricKind::nvswitch && g >= 2;
  if (nvls) {
    comm.nvls = nvls_search(cluster, links, g, comm.nodes, release);
    if (comm.nvls.channels >= 2) {
      comm.nvls_ctas = nvls_channels(cluster, links, g, comm.nodes, release);
      const NvlsTreeChunks chunks = nvls_tree_chunks(cluster, links, g, comm.nodes, release);
      comm.nvls_chunk = chunks.chunk;
      comm.nvls_tree_max_chunk = chunks.tree_max;
    } else {
      comm.nvls = NcclGraph{};
    }
  }
  return comm;
}

int nccl_nvls_heads(const ClusterSpec& cluster, const CommGroup& group) {
  const int g = group.ranks_per_node();
  if (!cluster.has_nccl || !cluster.nvls || cluster.gpu.sm_arch < 90 ||
      cluster.intra.kind != FabricKind::nvswitch || g < 2) {
    return 0;
  }
  const int heads =
      nvls_search(cluster, nccl_links(cluster, group), g, std::max(1, group.nodes), emulated_nccl(cluster))
          .channels;
  return heads >= 2 ? heads : 0;
}

TreeNeighbours nccl_btree_neighbours(int r, int n) {
  TreeNeighbours out;
  auto add = [&out](int v) { out.ranks[static_cast<std::size_t>(out.count++)] = v; };
  int bit = 1;
  while (bit < n && (bit & r) == 0) bit <<= 1;
  if (r == 0) {
    if (n > 1) add(bit >> 1);
    return out;
  }
  int up = (r ^ bit) | (bit << 1);
  if (up >= n) up = r ^ bit;
  add(up);
  int low = bit >> 1;
  if (low != 0) add(r - low);  // always in range
  int down1 = low == 0 ? -1 : r + low;
  while (down1 >= n) {
    down1 = low == 0 ? -1 : r + low;
    low >>= 1;
  }
  if (down1 != -1) add(down1);
  return out;
}

TreeNeighbours nccl_dtree_neighbours(int r, int n, int tree) {
  if (tree == 0) return nccl_btree_neighbours(r, n);
  const bool odd = n % 2 == 1;
  TreeNeighbours out = nccl_btree_neighbours(odd ? (r - 1 + n) % n : n - 1 - r, n);
  for (int i = 0; i < out.count; ++i) {
    int& v = out.ranks[static_cast<std::size_t>(i)];
    v = odd ? (v + 1) % n : n - 1 - v;
  }
  return out;
}

TreeLoad double_tree_load(int nodes) {
  TreeLoad load;
  if (nodes <= 1) return load;
  int busiest = 0;
  for (int r = 0; r < nodes; ++r) {
    const int a = nccl_dtree_neighbours(r, nodes, 0).count;
    const int b = nccl_dtree_neighbours(r, nodes, 1).count;
    busiest = std::max(busiest, a + b);
    load.max_degree = std::max({load.max_degree, a, b});
  }
  // Each tree carries half the channels, so half the bytes; every neighbour gets them once each way.
  load.node_bytes_per_byte = busiest / 2.0;
  return load;
}

int nccl_call_channels(const NcclComm& comm, Algo algo, Proto proto, double tuner_bytes) {
  if (algo == Algo::nvls || algo == Algo::nvls_tree) {
    // enqueue.cc:1879-1885: NVLS across nodes also stays within comm->nChannels.
    if (comm.nodes > 1 && algo == Algo::nvls) return std::max(1, std::min(comm.nvls_ctas, comm.ctas));
    return std::max(1, comm.nvls_ctas);
  }
  if (algo == Algo::collnet_direct || algo == Algo::collnet_chain || algo == Algo::p2p) return comm.ctas;
  const int threads = proto == Proto::ll128 ? k_ll128_max_threads
                                            : (proto == Proto::ll ? k_ll_max_threads : comm.simple_threads);
  double threshold = proto == Proto::simple
                         ? k_simple_thread_threshold
                         : (proto == Proto::ll ? k_ll_thread_threshold : k_ll128_thread_threshold);
  if (algo == Algo::ring && proto == Proto::ll) threshold *= comm.ranks;  // tuning.cc:547
  int nc = comm.ctas;
  while (tuner_bytes < static_cast<double>(nc) * threads * threshold && nc >= 2) --nc;
  return nc;
}

int nccl_call_threads(const NcclComm& comm, Algo algo, Proto proto, double tuner_bytes, int channels) {
  if (algo == Algo::tree || algo == Algo::pat) return k_max_threads;
  if (algo == Algo::nvls || algo == Algo::nvls_tree || algo == Algo::collnet_direct ||
      algo == Algo::collnet_chain) {
    return k_max_threads;  // maxThreads for NVLS and CollNet (tuning.cc:236-239)
  }
  int nt = proto == Proto::ll128 ? k_ll128_max_threads
                                 : (proto == Proto::ll ? k_ll_max_threads : comm.simple_threads);
  double threshold = proto == Proto::simple
                         ? k_simple_thread_threshold
                         : (proto == Proto::ll ? k_ll_thread_threshold : k_ll128_thread_threshold);
  if (algo == Algo::ring && proto == Proto::ll) threshold *= comm.ranks;
  while (tuner_bytes < static_cast<double>(channels) * nt * threshold && nt % 128 == 0) nt /= 2;
  return nt;
}

std::uint64_t tuner_bytes(Collective /*collective*/, std::uint64_t nccl_tests_bytes) {
  return nccl_tests_bytes;
}

}  // namespace lagom::model
