// CostModel: collectives. Two models live here:
//  * NCCL's own tuning model (NVIDIA/nccl@v2.28.9-1:src/graph/tuning.cc ncclTopoTuneModel and
//    ncclTopoGetAlgoTime), fed with what NCCL's topology search decides for the communicator
//    (model/nccl_topology.h). It only decides what NCCL picks by default (nccl_default). It prices a call
//    from the search's channels, never from the CTAs a call runs with, so it cannot price a channel choice.
//  * Lagom's physical price (collective_cost): the bytes each algorithm moves over each resource (a GPU's
//    NVLink and PCIe links, the node's NICs, the channels' copy loops and network connections) against that
//    resource's rate; the busiest resource sets the bandwidth. NCCL's latency assembly gives the latency.
//    docs/model.md states each term and its source.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "model/cost_model.h"
#include "model/fabric.h"
#include "model/nccl_topology.h"

namespace lagom::model {

namespace {

constexpr double k_inf = std::numeric_limits<double>::infinity();
enum Link { k_nvlink = 0, k_pci = 1, k_net = 2 };

// NCCL hwLatencies[link][algo][proto], µs (NVIDIA/nccl@v2.28.9-1:src/graph/tuning.cc:149-168).
constexpr double k_hw_lat[3][7][3] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25.0}, {0, 0, 25.0}, {0, 0, 4.0}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
    {{5.0, 8.5, 14.0},
     {2.7, 4.0, 14.0},
     {0, 0, 31.0},
     {0, 0, 30.0},
     {0, 0, 18.0},
     {0, 0, 20.9},
     {0, 0, 14.0}},
};
// NET NVLSTree latency before 2.28: 14 µs (NVIDIA/nccl@v2.27.7-1:src/graph/tuning.cc:155).
constexpr double k_hw_lat_net_nvls_tree_2_27 = 14.0;
// NCCL baseLatencies[algo][proto], µs (tuning.cc:143-148).
constexpr double k_base_lat[7][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0},      {0, 0, 0},
                                     {0, 0, 0},        {0, 0, 0},        {8.0, 8.0, 8.0}};
// Rows [Volta, Ampere, Hopper, Blackwell] × columns [1 node, 2 nodes, more] (tuning.cc:169-198). llMaxBws
// is a total cap; its multi-node columns are indexed by CPU vendor (row 0 Intel, row 1 AMD;
// tuning.cc:252-253).
constexpr double k_ll_max_bw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
constexpr double k_per_ch_ring_ll128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {73.4, 34.6, 73.4}};
constexpr double k_per_ch_tree_ll128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double k_per_ch_tree[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
constexpr double k_per_ch_nvls_tree[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.8}};
// treeCorrectionFactor[proto][log2(bytes/64)] (tuning.cc:578-582): 23 sizes for tree all-reduce. 2.29 adds a
// 24th (NVIDIA/nccl@v2.29.7-1:src/graph/tuning.cc:581-585; v2.30.7-1:623-628) for NVLSTree.
constexpr double k_tree_correction[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
// Blackwell's perChMaxRingLL128Bws by release: 2×36.7 (N1, N4) up to 2.28 (above); 34.5, 34.6, 34.5 in
// 2.29.2-2.29.6 (NVIDIA/nccl@v2.29.3-1:src/graph/tuning.cc:179); 40 from 2.29.7
// (v2.29.7-1:src/graph/tuning.cc:180; v2.30.7-1:189).
constexpr double k_per_ch_ring_ll128_sm100_2_29[3] = {34.5, 34.6, 34.5};
constexpr double k_per_ch_ring_ll128_sm100_2_29_7[3] = {40.0, 40.0, 40.0};
// Blackwell's perChMaxNVLSTreeBws beyond 2 nodes from 2.30: 80
// (NVIDIA/nccl@v2.30.3-1:src/graph/tuning.cc:205; v2.30.7-1:210), 43.8 before.
constexpr double k_per_ch_nvls_tree_sm100_n4_2_30 = 80.0;
// nvlsEfficiency [Volta, Ampere, Hopper, Blackwell] (tuning.cc:134-139): NVLink SHARP reaches this share of
// the NVLink rate. Also Lagom's physical NVLS rate (the single-node NVLS measurement of nccl-tests#212,
// ~480 GB/s on 8×H100, is 0.85 × the ring's NVLink rate × 8/9 × 14/8).
constexpr double k_nvls_efficiency[4] = {0.0, 0.0, 0.85, 0.74};
// Protocol payload efficiency on a link: LL carries 4 data bytes per 8-byte line (tuning.cc:304: ×0.5),
// LL128 120 of 128 bytes (tuning.cc:305 uses 0.92), Simple all.
constexpr double k_proto_eff[3] = {0.5, 0.92, 1.0};
// Per-step network overhead NCCL adds on inter-node rings, µs (tuning.cc:211-219: Intel 1, AMD 2; ×3 for
// Simple, :371-377).
constexpr double k_net_overhead_intel_us = 1.0;
constexpr double k_net_overhead_amd_us = 2.0;
constexpr double k_ring_plateau = 1.4;  // tuning.cc:593-596, sm80+ (1.9 before)
// PCIe's achievable share of its raw x16 rate: the pcie4 preset's 25 of 31.5 GB/s (presets.cpp). Plausible
// 0.75–0.85; also caps a NIC's rate by its PCIe link.
constexpr double k_pcie_efficiency = 0.79;
// Half-saturation thread count of one channel's copy loop (Little's law: a CTA needs enough loads in flight
// to cover memory latency). Lagom's constant, not NCCL's: chosen so that 512 threads reach 80% of the
// asymptote; the profile's threads sweep replaces it (no public measurement). Plausible 64–256.
constexpr double k_threads_half = 128.0;

int idx(Algo a) {
  return static_cast<int>(a);
}
int idx(Proto p) {
  return static_cast<int>(p);
}
// NCCL's compute-capability index (tuning.cc:249).
int compcap_index(int arch) {
  return arch >= 100 ? 3 : (arch >= 90 ? 2 : (arch >= 80 ? 1 : 0));
}
int nodes_col(int nodes) {
  return nodes <= 1 ? 0 : (nodes == 2 ? 1 : 2);
}
// llMaxBws row: the GPU generation on one node, the CPU vendor across nodes (tuning.cc:251-254).
int ll_row(const ClusterSpec& c, int nodes) {
  if (nodes <= 1) return compcap_index(c.gpu.sm_arch);
  return c.cpu == CpuVendor::amd ? 1 : 0;
}
bool before_2_28(const ClusterSpec& c) {
  return emulated_nccl(c) < NcclVersion{2, 28, 0};
}

// The per-channel caps of NCCL's tuning tables for the cluster's release (Lagom's physical price reads them
// too: each release's figures for its own kernels, docs/model.md "NCCL versions").
double per_ch_ring_ll128(const ClusterSpec& c, int col) {
  const int cc = compcap_index(c.gpu.sm_arch);
  const NcclVersion release = emulated_nccl(c);
  if (cc == 3 && release >= NcclVersion{2, 29, 7}) return k_per_ch_ring_ll128_sm100_2_29_7[col];
  if (cc == 3 && release >= NcclVersion{2, 29, 0}) return k_per_ch_ring_ll128_sm100_2_29[col];
  return k_per_ch_ring_ll128[cc][col];
}
double per_ch_nvls_tree(const ClusterSpec& c, int col) {
  const int cc = compcap_index(c.gpu.sm_arch);
  if (cc == 3 && col == 2 && emulated_nccl(c) >= NcclVersion{2, 30, 0})
    return k_per_ch_nvls_tree_sm100_n4_2_30;
  return k_per_ch_nvls_tree[cc][col];
}
int nsteps_of(Collective c, int n) {
  switch (c) {
    case Collective::allreduce:
      return 2 * (n - 1);
    case Collective::allgather:
    case Collective::reducescatter:
      return n - 1;
    default:
      return n;
  }
}

double log2i(int x) {
  return x <= 1 ? 0.0 : std::floor(std::log2(static_cast<double>(x)));
}

// ncclTopoGetAlgoTime's size correction (tuning.cc:591-592): tree all-reduce by treeCorrectionFactor; from
// 2.29 NVLSTree all-reduce too on sm100 with x86 hosts (NVIDIA/nccl@v2.29.7-1:src/graph/tuning.cc:596;
// v2.30.7-1:643-646). Lagom's CPUs (intel, amd) are x86.
double size_correction(const ClusterSpec& cluster, Collective c, Algo a, Proto p, double bytes) {
  if (c != Collective::allreduce) return 1.0;
  const int i = static_cast<int>(log2i(static_cast<int>(std::min(1e9, std::max(1.0, bytes / 64.0)))));
  if (a == Algo::tree && i >= 0 && i < 23) return k_tree_correction[idx(p)][i];
  if (a == Algo::nvls_tree && i >= 0 && i < 24 && cluster.gpu.sm_arch >= 100 &&
      emulated_nccl(cluster) >= NcclVersion{2, 29, 0})
    return k_tree_correction[idx(p)][i];
  return 1.0;
}

bool nvlink_intra(const ClusterSpec& c, int ppn) {
  return c.intra.kind == FabricKind::nvswitch || (c.intra.kind == FabricKind::nvlink_pairs && ppn == 2);
}

// NCCL's latency assembly (tuning.cc:353-401): the latency an algorithm adds to its base latency, for n
// ranks over `nodes` nodes of `ppn` ranks. Both NCCL's tuning model and Lagom's price use it; they differ
// only in how they scale intra_lat and inter_lat. `net_overhead_us` is NCCL's per-step network overhead.
double step_latency_us(Collective c, Algo a, Proto p, int n, int nodes, int ppn, double intra_lat,
                       double inter_lat, double net_overhead_us) {
  const int nsteps = nsteps_of(c, n);
  switch (a) {
    case Algo::ring: {
      if (c == Collective::broadcast || c == Collective::reduce) {
        // One hop of the ring's link type (NET across nodes, passed as intra_lat): sameChannels
        // (tuning.cc:362-366).
        return intra_lat;
      }
      const int n_inter = nodes <= 1 ? 0 : (c == Collective::allreduce ? 2 * (nodes - 1) : nodes - 1);
      if (nodes > 1) intra_lat = std::max(intra_lat, net_overhead_us * (p == Proto::simple ? 3.0 : 1.0));
      return (nsteps - n_inter) * intra_lat + n_inter * inter_lat;
    }
    case Algo::tree:
      return c == Collective::allreduce ? 2 * ((ppn - 1) * intra_lat + log2i(nodes) * inter_lat) : 0.0;
    case Algo::collnet_direct:
      return 2 * (std::min(1, ppn - 1) * intra_lat + 0.4 * (ppn - 1)) + inter_lat;
    case Algo::collnet_chain:
      return 2 * (ppn - 1) * intra_lat + inter_lat;
    case Algo::nvls:
      return intra_lat + (nodes > 1 ? inter_lat : 0.0);
    case Algo::nvls_tree:
      return intra_lat + 2 * log2i(nodes) * inter_lat;
    case Algo::pat:
      return log2i(nodes) * inter_lat / 3.5 + 2.8 * n;
    case Algo::p2p:
      return 0.0;
  }
  return 0.0;
}

// The NET hwLatency NCCL uses between nodes: with one rank per node the tree's (tuning.cc:355-356).
double net_lat(const ClusterSpec& cluster, Algo a, Proto p, int ppn) {
  if (a == Algo::nvls_tree && before_2_28(cluster))
    return ppn == 1 ? k_hw_lat[k_net][0][idx(p)] : k_hw_lat_net_nvls_tree_2_27;
  return ppn == 1 ? k_hw_lat[k_net][idx(Algo::tree)][idx(p)] : k_hw_lat[k_net][idx(a)][idx(p)];
}

double net_overhead(const ClusterSpec& cluster) {
  return cluster.cpu == CpuVendor::amd ? k_net_overhead_amd_us : k_net_overhead_intel_us;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------

CommGroup CostModel::contiguous_group(int ranks) const {
  const int gpn = std::max(1, m_cluster.gpus_per_node);
  return CommGroup{ranks, (ranks + gpn - 1) / gpn};
}

int CostModel::default_channels(const CommGroup& group) const {
  return std::max(1, nccl_comm(m_cluster, group).ctas);
}

int CostModel::max_channels() const {
  return std::max(1, std::min(k_nccl_max_channels, m_cluster.gpu.sms));
}

Status CostModel::nccl_allows(Collective c, Algo a, Proto p, const CommGroup& g) const {
  auto no = [&](const std::string& why) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{} {}/{}: {}", to_string(c), to_string(a), to_string(p), why));
  };
  if (g.ranks < 2) return no("needs at least 2 ranks");
  if (g.nodes < 1 || g.nodes > g.ranks) return no("nodes must be between 1 and ranks");
  const bool p2p_coll = c == Collective::alltoall || c == Collective::sendrecv;
  if (p2p_coll) {
    if (a != Algo::p2p)
      return no(fmt::format("{} runs as point-to-point sends; the only algorithm is p2p", to_string(c)));
    if (p == Proto::ll128) return no("point-to-point sends use ll or simple");
    return {};
  }
  if (a == Algo::p2p) return no("p2p is the algorithm of alltoall and sendrecv only");
  if (!m_cluster.has_nccl) {
    if (a != Algo::ring || p != Proto::simple) {
      return no(
          fmt::format("cluster {} has no NCCL; its collectives are modelled as ring/simple", m_cluster.name));
    }
    return {};
  }
  const int ppn = g.ranks_per_node();
  const bool nvswitch = m_cluster.intra.kind == FabricKind::nvswitch;
  const bool allgather_like = c == Collective::allgather || c == Collective::reducescatter;
  // Which algorithm runs which collective: tuning.cc:273-277.
  switch (a) {
    case Algo::ring:
      break;
    case Algo::tree:
      if (c != Collective::allreduce) return no("NCCL runs tree for allreduce only");
      break;
    case Algo::collnet_direct:
    case Algo::collnet_chain:
      if (c != Collective::allreduce) return no("NCCL runs collnet for allreduce only");
      if (!m_cluster.nic.collnet)
        return no(fmt::format("needs in-network reduction (SHARP), which {} does not have", m_cluster.name));
      if (g.nodes < 2) return no("needs more than one node");
      break;
    case Algo::nvls:
    case Algo::nvls_tree:
      if (m_cluster.gpu.sm_arch < 90 || !nvswitch) {
        return no(fmt::format("needs NVLink SHARP (sm90+ GPUs on NVSwitch); {} has {} on {}", m_cluster.name,
                              m_cluster.gpu.name, to_string(m_cluster.intra.kind)));
      }
      if (!m_cluster.nvls)
        return no(fmt::format("NVLS is disabled on {} (NCCL_NVLS_ENABLE=0)", m_cluster.name));
      if (a == Algo::nvls && c != Collective::allreduce && !allgather_like) {
        return no("NCCL runs nvls for allreduce, allgather and reducescatter only");
      }
      if (a == Algo::nvls_tree && c != Collective::allreduce)
        return no("NCCL runs nvls_tree for allreduce only");
      if (a == Algo::nvls_tree && g.nodes < 2) return no("needs more than one node");  // tuning.cc:466
      // NVLS across nodes is CollNet+NVLS: it needs SHARP (tuning.cc:468-471, enqueue.cc:1803).
      if (a == Algo::nvls && g.nodes > 1 && !m_cluster.nic.collnet)
        return no("across nodes NCCL runs nvls only with in-network reduction (SHARP); use nvls_tree");
      if (ppn < 2) return no("needs at least 2 GPUs per node");
      // init.cc:1190: no NVLS when the NVLS search found fewer than 2 heads.
      if (nccl_nvls_heads(m_cluster, g) < 2) return no("NCCL's NVLS search finds no heads on this topology");
      break;
    case Algo::pat:
      if (!allgather_like) return no("NCCL runs pat for allgather and reducescatter only");
      if (ppn != 1) return no("NCCL runs pat with one GPU per node only");  // tuning.cc:206
      break;
    case Algo::p2p:
      break;
  }
  const bool simple_only = a == Algo::collnet_direct || a == Algo::collnet_chain || a == Algo::nvls ||
                           a == Algo::nvls_tree || a == Algo::pat;
  if (simple_only && p != Proto::simple) return no("this algorithm runs the simple protocol only");
  if (p == Proto::ll128) {
    // tuning.cc:480-493: LL128 by default only where a node's GPUs talk over NVLink (typeIntra <= NVB), up to
    // PXN paths to the NIC on sm90+ (PXB before), on sm70+ GPUs of one compute capability.
    const bool nvlink = nvlink_intra(m_cluster, ppn) || ppn == 1;
    if (m_cluster.gpu.sm_arch < 70 || !nvlink) {
      return no(
          fmt::format("NCCL enables ll128 only where the GPUs of a node talk over NVLink ({} has {} on {})",
                      m_cluster.name, m_cluster.gpu.name, to_string(m_cluster.intra.kind)));
    }
  }
  return {};
}

// The bus bandwidth the links alone allow (before channel limits), for CollectiveCost::link_GBps.
double CostModel::link_bus_GBps(const CommGroup& g, Algo algo) const {
  const int ppn = g.ranks_per_node();
  const FabricSpec& f = m_cluster.intra;
  double intra = f.bw_GBps * f.efficiency;
  if (f.kind == FabricKind::nvlink_pairs && ppn == 2 && g.nodes == 1) intra = f.pair_bw_GBps * f.efficiency;
  if (algo == Algo::nvls || algo == Algo::nvls_tree)
    intra *= k_nvls_efficiency[compcap_index(m_cluster.gpu.sm_arch)];
  if (g.nodes <= 1 || ppn < 1) return intra;
  const double inter = nic_rates(m_cluster, g, k_pcie_efficiency).node_GBps;
  if (ppn == 1) return inter;
  return std::min(intra, inter);
}

// ---------------------------------------------------------------------------------------------------
// NCCL's tuning model (selection only): ncclTopoTuneModel (tuning.cc:230-404) for one (collective, algo,
// proto), then ncclTopoGetAlgoTime (tuning.cc:584-600) for one call.

namespace {

// ncclTopoTuneModel + ncclTopoGetAlgoTime for one (collective, algo, proto) on a communicator whose setup
// `comm` is; the caller has checked that NCCL allows the combination.
double nccl_time_us(const ClusterSpec& cluster, const NcclComm& comm, Collective c, Algo a, Proto p,
                    double bytes, const CommGroup& g, double p2p_bus_GBps) {
  const int n = g.ranks;
  const int nodes = g.nodes;
  const int ppn_int = g.ranks_per_node();
  const double ppn = static_cast<double>(n) / nodes;
  const int cc = compcap_index(cluster.gpu.sm_arch);
  const int col = nodes_col(nodes);
  const double ll_max = k_ll_max_bw[ll_row(cluster, nodes)][col];
  if (a == Algo::p2p) return bytes / (1e3 * p2p_bus_GBps);
  const bool old = before_2_28(cluster);
  const bool allgather_like = c == Collective::allgather || c == Collective::reducescatter;
  // The graph's channels and per-channel bandwidth (tuning.cc:284): bwIntra up to 2 nodes, bwInter beyond.
  const NcclGraph& graph = a == Algo::tree ? comm.tree : comm.ring;
  int nch = graph.channels;
  double bw = nodes <= 2 || a == Algo::collnet_direct || a == Algo::collnet_chain ? graph.bw_intra_GBps
                                                                                  : graph.bw_inter_GBps;
  if (a == Algo::nvls || a == Algo::nvls_tree) {
    nch = comm.nvls.channels;
    if (nch < 2) return k_inf;
    if (old) {
      // NVIDIA/nccl@v2.24.3-1:src/graph/tuning.cc:245-246; 2.27 splits all-gather and reduce-scatter off
      // (NVIDIA/nccl@v2.27.7-1:src/graph/tuning.cc:267-275); ratio 5/6 below (v2.27.7-1 :324).
      if (a == Algo::nvls && allgather_like && emulated_nccl(cluster) >= NcclVersion{2, 27, 0}) {
        bw = std::min(comm.nvls.bw_intra_GBps * (ppn - 1) / ppn, comm.nvls.bw_inter_GBps * 0.9);
      } else {
        bw = a == Algo::nvls ? std::min(comm.nvls.bw_intra_GBps, comm.nvls.bw_inter_GBps)
                             : std::min(comm.nvls.bw_intra_GBps,
                                        nodes <= 2 ? comm.nvls.bw_inter_GBps : comm.nvls.bw_inter_GBps / 2);
      }
    } else {
      // tuning.cc:285-300.
      double intra_bw = comm.nvls.bw_intra_GBps * k_nvls_efficiency[cc] * (nch - 1) / nch;
      intra_bw *= c == Collective::allreduce ? 2.0 : (ppn - 1) / ppn;
      const double inter_bw = comm.nvls.bw_inter_GBps * ((nodes <= 2 && a == Algo::nvls_tree) ? 2 : 1);
      bw = std::min({intra_bw, inter_bw, a == Algo::nvls_tree ? per_ch_nvls_tree(cluster, col) : k_inf});
    }
  }
  double bus = nch * bw;
  // tuning.cc:303-310.
  if (a == Algo::ring && p == Proto::ll) bus = std::min(ll_max, bus * 0.5);
  if (a == Algo::ring && p == Proto::ll128) bus = std::min(bus * 0.92, nch * per_ch_ring_ll128(cluster, col));
  if (a == Algo::tree && c == Collective::allreduce) bus = std::min(bus * 0.92, nch * k_per_ch_tree[cc][col]);
  if (a == Algo::tree && p == Proto::ll) bus = std::min(bus / 3.8, ll_max);
  if (a == Algo::tree && p == Proto::ll128)
    bus = std::min(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * k_per_ch_tree_ll128[cc][col]);
  if (a == Algo::pat) bus *= 0.75;
  if (a == Algo::collnet_direct) {
    // tuning.cc:313-323 (allreduce): a GPU/NIC ratio penalty, ×0.85 on sm90+.
    double factor = ppn / std::max(1, comm.ring.channels);
    factor -= (factor - 1) / 2;
    bus /= std::max(1.0, factor);
    if (cluster.gpu.sm_arch >= 90) bus *= 0.85;
  }
  // Bus → algorithm bandwidth (tuning.cc:345-351): ring and NVLS n/nsteps (≤2.27: NVLS 5/6), others 0.5;
  // all-gather and reduce-scatter other than ring stay as they are.
  if (!(a != Algo::ring && allgather_like)) {
    double ratio = 0.5;
    if (a == Algo::ring || ((a == Algo::nvls || a == Algo::nvls_tree) && !old)) {
      ratio = static_cast<double>(n) / nsteps_of(c, n);
    } else if (a == Algo::nvls || a == Algo::nvls_tree) {
      ratio = 5.0 / 6.0;
    }
    bus *= ratio;
  }
  double alg = bus;
  if (alg <= 0) return k_inf;
  alg *= size_correction(cluster, c, a, p, bytes);
  // Latency with NCCL's tables; network latency of the graph (latencyInter) is 0 on IB and sockets.
  const Link intra_link = nvlink_intra(cluster, ppn_int) ? k_nvlink : k_pci;
  double intra_lat = k_hw_lat[intra_link][idx(a)][idx(p)];
  double inter_lat = net_lat(cluster, a, p, ppn_int);
  if (a == Algo::ring && nodes > 1 && (c == Collective::broadcast || c == Collective::reduce)) {
    intra_lat = k_hw_lat[k_net][idx(a)][idx(p)];  // hw[a] is NET for rings across nodes (tuning.cc:265, :362)
  }
  double lat = (a == Algo::nvls ? 0.0 : k_base_lat[idx(a)][idx(p)]) +
               step_latency_us(c, a, p, n, nodes, ppn_int, intra_lat, inter_lat, net_overhead(cluster));
  if (a == Algo::ring && c == Collective::allreduce && p == Proto::simple && nodes > 1 &&
      bytes / (static_cast<double>(comm.ctas) * n) >= 64) {
    lat *= cluster.gpu.sm_arch < 80 ? 1.9 : k_ring_plateau;
  }
  return lat + bytes / (1e3 * alg);
}

}  // namespace

double CostModel::nccl_model_time_us(Collective c, Algo a, Proto p, double bytes, const CommGroup& g) const {
  if (!nccl_allows(c, a, p, g).ok()) return k_inf;
  return nccl_time_us(m_cluster, nccl_comm(m_cluster, g), c, a, p, bytes, g, link_bus_GBps(g, a));
}

CollConfig CostModel::nccl_choice(Collective c, double bytes, const CommGroup& g, std::optional<Algo> algo,
                                  std::optional<Proto> proto) const {
  if (!algo && !proto) return nccl_default(c, bytes, g);
  const bool p2p = c == Collective::alltoall || c == Collective::sendrecv;
  CollConfig config;
  config.algo = algo.value_or(p2p ? Algo::p2p : Algo::ring);
  config.proto = proto.value_or(Proto::simple);
  double best = std::numeric_limits<double>::infinity();
  for (Algo a : k_all_algos) {
    for (Proto p : k_all_protos) {
      if ((algo && a != *algo) || (proto && p != *proto)) continue;
      const double t = nccl_model_time_us(c, a, p, bytes, g);
      if (t < best) best = t, config.algo = a, config.proto = p;
    }
  }
  return resolve_defaults(c, bytes, g, CollConfig{config.algo, config.proto});
}

CollConfig CostModel::nccl_default(Collective c, double bytes, const CommGroup& g) const {
  CollConfig best;
  if (c == Collective::alltoall || c == Collective::sendrecv) {
    best.algo = Algo::p2p;
    best.proto = Proto::simple;
  } else if (!m_cluster.has_nccl) {
    best.algo = Algo::ring;
    best.proto = Proto::simple;
  } else {
    // NCCL takes the smallest time in algorithm-major order (enqueue.cc:1831-1840).
    double best_time = k_inf;
    const NcclComm comm = nccl_comm(m_cluster, g);
    for (Algo a : k_all_algos) {
      for (Proto p : k_all_protos) {
        if (!nccl_allows(c, a, p, g).ok()) continue;
        const double t = nccl_time_us(m_cluster, comm, c, a, p, bytes, g, 0.0);
        if (t < best_time) {
          best_time = t;
          best.algo = a;
          best.proto = p;
        }
      }
    }
  }
  return resolve_defaults(c, bytes, g, best);
}

CollConfig CostModel::resolve_defaults(Collective c, double bytes, const CommGroup& g,
                                       CollConfig config) const {
  // NCCL runs tree and PAT with all 640 threads whatever NCCL_NTHREADS says (enqueue.cc:1907-1908), NVLS,
  // NVLSTree and CollNet with maxThreads = NCCL_MAX_NTHREADS (tuning.cc:236-239).
  if (config.algo == Algo::tree || config.algo == Algo::pat || config.algo == Algo::nvls ||
      config.algo == Algo::nvls_tree || config.algo == Algo::collnet_direct ||
      config.algo == Algo::collnet_chain) {
    config.threads = 640;
  }
  if (config.channels > 0 && config.threads > 0 && config.chunk_bytes > 0) return config;
  const NcclComm comm = nccl_comm(m_cluster, g);
  const double nbytes = static_cast<double>(tuner_bytes(c, static_cast<std::uint64_t>(std::max(0.0, bytes))));
  if (config.channels <= 0) config.channels = nccl_call_channels(comm, config.algo, config.proto, nbytes);
  if (config.threads <= 0) {
    config.threads = config.algo == Algo::p2p
                         ? k_nccl_default_threads
                         : nccl_call_threads(comm, config.algo, config.proto, nbytes, config.channels);
    if (config.threads < 64) config.threads = 64;
  }
  if (config.chunk_bytes <= 0) config.chunk_bytes = default_chunk_bytes(config.proto);
  return config;
}

Status CostModel::validate_config(Collective c, double bytes, const CommGroup& g,
                                  const CollConfig& config) const {
  if (!(bytes >= 0) || !std::isfinite(bytes)) {
    return make_error(ErrorCode::invalid_input, "bytes: must be a non-negative byte count");
  }
  LAGOM_TRY_STATUS(nccl_allows(c, config.algo, config.proto, g));
  if (config.channels != 0 && (config.channels < 1 || config.channels > max_channels())) {
    return make_error(ErrorCode::invalid_input, fmt::format("channels: {} is not within 1..{} on {}",
                                                            config.channels, max_channels(), m_cluster.name));
  }
  if (config.threads != 0 && (config.threads < 64 || config.threads > 640 || config.threads % 32 != 0)) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("threads: {} is not a multiple of 32 within 64..640", config.threads));
  }
  if (config.chunk_bytes != 0 && config.chunk_bytes < 4096) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("chunk-bytes: {} is below 4096", config.chunk_bytes));
  }
  return {};
}

// ---------------------------------------------------------------------------------------------------
// Lagom's physical price.
//
// For a call of `bytes`, each algorithm puts a load (bytes per byte of the call) on each resource; the
// bandwidth time is bytes × max(load / rate). Resources and rates (docs/model.md "Collectives"):
//   GPU NVLink        intra.bw × efficiency (pair_bw for the NVLink pairs of nvlink_pairs); NVLS × 0.85
//   GPU PCIe          the PCIe fabric's rate, or the GPU's x16 link × 0.79 where it carries NIC traffic
//   node NICs         min(NICs, GPUs of the group on the node) × min(line rate × efficiency, PCIe × 0.79)
//   channel copy      channels × channel_GBps × threads factor × chunk efficiency (per CTA work)
//   channel network   channels × one connection's rate (net_channel_GBps, NIC-side connection_GBps)
// all × the protocol's payload share (LL 0.5, LL128 0.92). Ring across nodes moves 2(n−1)/n of an
// all-reduce through each node's NICs and through every channel's connection; a double binary tree moves
// 1× (2 nodes) or 2× (interior nodes, 4+ nodes) through the busiest node's NICs, each channel's connection
// carrying its share once; NVLS moves (g+1)/g over each GPU's NVLink (reduce-scatter through the switch,
// then the multicast); NVLSTree does that inside the node and the tree across nodes.

namespace {

// The rates physical_busbw compares loads against, 10^9 bytes/s: the GPU's NVLink and PCIe hops, the node's
// NICs for the communicator (nic_rates), and one channel's copy loop and network connection, for a call
// of `bytes` with `cfg`.
struct BusRates {
  double nvlink = 0, fabric_pcie = 0, node_nic = 0, copy = 0, connection = 0;
  int nic_gpus = 1;  // GPUs whose PCIe link carries the node's NIC traffic: min(usable NICs, ranks per node)
};
BusRates bus_rates(const ClusterSpec& cluster, Collective c, double bytes, const CommGroup& g,
                   const CollConfig& cfg) {
  const int n = std::max(2, g.ranks);
  const FabricSpec& f = cluster.intra;
  const double pe = k_proto_eff[idx(cfg.proto)];
  const int channels = std::max(1, cfg.channels);
  const double nvlink = (f.kind == FabricKind::nvlink_pairs ? f.pair_bw_GBps : f.bw_GBps) * f.efficiency;
  const double fabric_pcie = f.kind == FabricKind::nvswitch
                                 ? pcie_x16_GBps(gpu_pcie_gen(cluster)) * k_pcie_efficiency
                                 : f.bw_GBps * f.efficiency;
  const NicRates net = nic_rates(cluster, g, k_pcie_efficiency);
  const int nic_gpus = std::max(1, std::min(net.usable, g.ranks_per_node()));
  const double node_nic = net.usable * std::max(1e-9, net.per_nic_GBps);
  const double threads = static_cast<double>(std::max(32, cfg.threads));
  const double thread_factor = (threads / (threads + k_threads_half)) / (512.0 / (512.0 + k_threads_half));
  double copy = cluster.gpu.channel_GBps * thread_factor * pe;
  if (cfg.proto == Proto::ll128) copy = std::min(copy, per_ch_ring_ll128(cluster, 0) * thread_factor);
  double connection = resolved_net_channel_GBps(cluster);
  if (cluster.nic.connection_GBps > 0) connection = std::min(connection, cluster.nic.connection_GBps);
  connection *= thread_factor * pe;
  // Per-chunk synchronisation (a flag post/poll across the link: the link's hop latency for this protocol)
  // for every chunk after the first of a step slows a channel's copy loop.
  double per_step = bytes / n;
  if (c == Collective::broadcast || c == Collective::reduce || cfg.algo == Algo::tree) per_step = bytes;
  const double d_ch = per_step / channels;
  const double scale = cluster.intra.latency_us / 3.4;
  const double hop_us = std::max(
      0.05,
      k_hw_lat[f.kind == FabricKind::nvswitch ? k_nvlink : k_pci][idx(Algo::ring)][idx(cfg.proto)] * scale);
  const double chunks = d_ch / static_cast<double>(std::max<std::int64_t>(4096, cfg.chunk_bytes));
  const double transfer_us = d_ch / (copy * 1e3);
  const double extra_us = std::max(0.0, chunks - 1.0) * hop_us;
  copy *= transfer_us > 0 ? transfer_us / (transfer_us + extra_us) : 1.0;
  return BusRates{nvlink, fabric_pcie, node_nic, copy, connection, nic_gpus};
}

// NCCL's measured NVLSTree rate per NVLS head channel (tuning.cc:193-197 perChMaxNVLSTreeBws, busbw) spread
// over the CTAs NCCL runs it with (nvls.cc:148): the measured default, linear in CTAs; bus GB/s per CTA.
double nvls_tree_cta_bus(const ClusterSpec& cluster, const CommGroup& g, int nodes) {
  const NcclComm comm = nccl_comm(cluster, g);
  const int default_ctas = std::max(1, comm.nvls_ctas > 0 ? comm.nvls_ctas : 16);
  return per_ch_nvls_tree(cluster, nodes_col(nodes)) * std::max(1, comm.nvls.channels) / default_ctas;
}

// The ring's pipeline fill: a ring call moves each channel's data chunk by chunk and a rank forwards a chunk
// only once it holds all of it (store and forward at chunk granularity), so the last chunk reaches its last
// rank one chunk's transfer time after the links went idle elsewhere: beyond latency + bytes / bandwidth a
// call costs about one chunk's transfer at the channel's share of the bus rate. A ring of one step (an
// all-gather or reduce-scatter on 2 ranks) forwards nothing and has no fill. The chunk of a step is the
// smaller of the configured chunk and the step's data per channel (bytes / ranks / channels; broadcast and
// reduce pipeline the whole buffer). Measured (docs/model.md "The physical price"): on one A100 node
// (nccl-tests, one process per GPU) the excess over latency + bytes / bandwidth is 0.7-1.4 chunk times from
// 16 MiB to 1 GiB; with this term vTrain's 7,168 all-reduce table entries (2-8 A100s, not used to set it)
// fall from a 5.4% to a 2.5% median error. One chunk: no fitted constant. Not applied to tree, NVLS,
// NVLSTree, CollNet or PAT, whose pipelines have other shapes (unmeasured here).
double ring_fill_us(Collective c, double bytes, int ranks, const CollConfig& cfg, double bus_GBps) {
  const int steps = c == Collective::allreduce ? 2 * (ranks - 1) : ranks - 1;
  if (steps < 2 || bus_GBps <= 0) return 0.0;
  const int channels = std::max(1, cfg.channels);
  const double per_step =
      (c == Collective::broadcast || c == Collective::reduce ? bytes : bytes / ranks) / channels;
  const double chunk = std::min(per_step, static_cast<double>(std::max<std::int64_t>(4096, cfg.chunk_bytes)));
  return chunk / (1e3 * bus_GBps / channels);
}

// The chunk of an NVLSTree call over `ops` concurrent (channel, head) slices: the communicator's chunk
// capped by the tree's largest, halved for calls too small to give every slice several chunks
// (NVIDIA/nccl@v2.28.9-1: src/enqueue.cc:2056-2068, the same from v2.24.3-1:1816-1828 to v2.30.7-1).
double nvls_tree_chunk(const NcclComm& comm, double bytes, double ops) {
  double chunk = static_cast<double>(std::min(comm.nvls_chunk, comm.nvls_tree_max_chunk));
  if (bytes < 32 * ops * chunk && chunk > 262144) chunk = 262144;
  if (bytes < 16 * ops * chunk && chunk > 131072) chunk = 131072;
  if (bytes < 4 * ops * chunk && chunk > 65536) chunk = 65536;
  if (bytes < ops * chunk && chunk > 32768) chunk = 32768;
  return chunk;
}

// NVLSTree's pipeline fill. An NVLSTree all-reduce splits the buffer over channels x heads concurrent
// slices and moves each slice chunk by chunk through a chain of stages: the NVLS reduce inside the node,
// the tree up and down through the NICs, the NVLS multicast. The stages overlap once the pipe is full; the
// first chunk crosses the chain alone. The fill is k_nvls_tree_fill_chunks chunk times, a chunk time being
// one chunk (or the whole slice, when smaller) at the slice's share of the call's rate (algbw / (channels
// x heads)); NCCL's chunk halves for smaller calls (nvls_tree_chunk), so the fill grows with the call up to
// 64 MiB and then stays. It replaces NCCL's NVLink NVLSTree latency (25 us), which stands for the same
// stages in NCCL's own model. Measured (docs/model.md "The physical price"): the H100 nccl-tests rows' time
// above latency + bytes / bandwidth grows with NCCL's chunk (32 KiB below 8 MiB, 64 KiB to 64 MiB,
// 128 KiB above on 2 nodes); 1.5 chunk times is the best fit, with the network start-up per channel,
// that predicts no H100 row above 1.15x its measured rate (tests/model/test_collectives.cpp). A chain
// of four stages fills in three chunk times at its slowest stage's rate; the two stages inside the node
// run at NVLink rates, well above the slice's, so between one and three.
constexpr double k_nvls_tree_fill_chunks = 1.5;
double nvls_tree_fill_us(const NcclComm& comm, double bytes, double factor, int channels, double bus_GBps) {
  if (bus_GBps <= 0) return 0.0;
  const double ops = static_cast<double>(std::max(1, channels)) * std::max(1, comm.nvls.channels);
  const double slice_GBps = bus_GBps / factor / ops;
  const double slice = bytes / ops;
  return k_nvls_tree_fill_chunks * std::min(slice, nvls_tree_chunk(comm, bytes, ops)) / (1e3 * slice_GBps);
}

}  // namespace

double CostModel::physical_busbw(Collective c, double bytes, const CommGroup& g, const CollConfig& cfg,
                                 double* link_out) const {
  const int n = std::max(2, g.ranks);
  const int nodes = std::max(1, g.nodes);
  const int ppn = g.ranks_per_node();
  const int cc = compcap_index(m_cluster.gpu.sm_arch);
  const FabricSpec& f = m_cluster.intra;
  const double pe = k_proto_eff[idx(cfg.proto)];
  const int channels = std::max(1, cfg.channels);
  const double factor = busbw_factor(c, n);

  BusRates r = bus_rates(m_cluster, c, bytes, g, cfg);
  // The leaf-spine fabric's share of the node's NIC rate for this pattern (model/fabric.h).
  r.node_nic /= fabric_slowdown(m_cluster, g, traffic_pattern(c, cfg.algo), channels);
  // The busiest resource: worst = max(load / rate) in seconds per 10^9 bytes; link_worst over links only.
  double worst = 0, link_worst = 0;
  auto link = [&](double load, double rate) {
    if (load <= 0) return;
    const double t = load / std::max(1e-12, rate * pe);
    worst = std::max(worst, t);
    link_worst = std::max(link_worst, t);
  };
  auto cta = [&](double load, double rate) {
    if (load > 0) worst = std::max(worst, load / std::max(1e-12, rate));
  };
  // A GPU's hops split over its links: on NVSwitch all intra hops are NVLink and the NIC hop is the PCIe
  // link of the GPU next to the NIC (rail-aligned, PXN for the others); NVLink pairs keep half the hops in
  // the pair and send the other half, and the NIC hop, over PCIe; a PCIe node sends everything over PCIe.
  auto hops = [&](double per_gpu, double nic_bytes) {
    if (f.kind == FabricKind::nvswitch) {
      link(nodes > 1 ? per_gpu * (ppn - 1) / ppn : per_gpu, r.nvlink);
      if (nodes > 1) link(nic_bytes / r.nic_gpus, r.fabric_pcie);
    } else if (f.kind == FabricKind::nvlink_pairs && ppn == 2 && nodes == 1) {
      link(per_gpu, r.nvlink);
    } else if (f.kind == FabricKind::nvlink_pairs && ppn >= 2) {
      link(per_gpu / 2, r.nvlink);
      link(per_gpu / 2, r.fabric_pcie);
    } else {
      link(per_gpu, r.fabric_pcie);
    }
  };
  const bool p2p_like = c == Collective::alltoall || c == Collective::sendrecv;
  switch (p2p_like ? Algo::ring : cfg.algo) {
    case Algo::ring:
    case Algo::pat:
    case Algo::p2p: {
      // Every GPU sends factor × bytes over its outgoing hop; across nodes each node sends the same
      // through its NICs and each channel through its one connection. PAT reaches 0.75 of it
      // (tuning.cc:310).
      const double nic = nodes > 1 ? factor / (cfg.algo == Algo::pat ? 0.75 : 1.0) : 0.0;
      if (ppn > 1 || nodes == 1) hops(factor, nic);
      if (nodes > 1) {
        link(nic, r.node_nic);
        if (ppn == 1) link(nic, r.fabric_pcie);
        cta(factor / channels, std::min(r.copy, r.connection));
      } else {
        cta(factor / channels, r.copy);
      }
      break;
    }
    case Algo::tree: {
      // NCCL's tree: a chain through the node's GPUs (2× the bytes on interior GPUs, up then down), the
      // double binary tree between nodes (trees.cc).
      const double chain = ppn >= 3 ? 2.0 : (ppn == 2 ? 1.0 : 0.0);
      const TreeLoad t = double_tree_load(nodes);
      if (chain > 0) hops(chain, t.node_bytes_per_byte);
      if (nodes > 1) {
        link(t.node_bytes_per_byte, r.node_nic);
        if (ppn == 1) link(t.node_bytes_per_byte, r.fabric_pcie);
        cta(1.0 / channels, r.connection);
      }
      // A head CTA copies its chain hop and one copy per tree neighbour.
      cta(std::max(chain, nodes > 1 ? 1.0 + t.max_degree : 0.0) / channels, r.copy);
      break;
    }
    case Algo::nvls:
    case Algo::nvls_tree: {
      // Through the switch each GPU sends and receives (g+1)/g of an all-reduce, about 1 of an all-gather
      // or reduce-scatter.
      const double rate = r.nvlink * k_nvls_efficiency[cc];
      const double per_gpu = c == Collective::allreduce ? (ppn + 1.0) / ppn : 1.0;
      link(per_gpu, rate);
      cta(per_gpu / channels, r.copy);
      if (nodes > 1 && cfg.algo == Algo::nvls) {
        link(1.0, r.node_nic);  // CollNet+NVLS: SHARP reduces; each node sends and receives the buffer once
        cta(1.0 / channels, r.connection);
      }
      if (cfg.algo == Algo::nvls_tree) {
        const TreeLoad t = double_tree_load(nodes);
        link(t.node_bytes_per_byte, r.node_nic);
        link(t.node_bytes_per_byte / r.nic_gpus, r.fabric_pcie);
        cta(1.0 / channels, r.connection);
        cta(t.max_degree / static_cast<double>(channels), r.copy);
        const double per_cta_bus = nvls_tree_cta_bus(m_cluster, g, nodes);
        if (per_cta_bus > 0) cta(factor / channels, per_cta_bus);
      }
      break;
    }
    case Algo::collnet_direct:
    case Algo::collnet_chain: {
      // SHARP reduces in the switch: each node sends and receives the buffer once; inside the node the
      // chain (2×) or the direct all-to-all (2(g−1)/g).
      const double intra = cfg.algo == Algo::collnet_chain ? (ppn >= 3 ? 2.0 : 1.0) : 2.0 * (ppn - 1) / ppn;
      if (ppn > 1) hops(intra, 1.0);
      link(1.0, r.node_nic);
      cta(1.0 / channels, r.connection);
      cta(intra / channels, r.copy);
      break;
    }
  }
  if (cfg.proto == Proto::ll) {
    // NCCL's total LL caps (tuning.cc:304, :307): LL is for latency-bound sizes.
    const double cap = k_ll_max_bw[ll_row(m_cluster, nodes)][nodes_col(nodes)];
    worst = std::max(worst, factor / cap);
  }
  const double bus = worst > 0 ? factor / worst : 1e12;
  if (link_out != nullptr) *link_out = link_worst > 0 ? factor / link_worst : link_bus_GBps(g, cfg.algo);
  return std::max(bus, 1e-9);
}

// ---------------------------------------------------------------------------------------------------
// Copy-engine collectives (CTA policy zero; docs/model.md "Copy-engine collectives").
//
// NCCL 2.28's ce_coll.cc (NVIDIA/nccl@v2.28.9-1:src/ce_coll.cc:373-422 AllGather, :424-477 AlltoAll): a
// barrier (ncclMemOpSync: a flag written to every peer, a stream wait on every peer's flag, :191-235), one
// cudaMemcpyBatchAsync of the rank's pieces to its peers' windows over NVLink (:274-371), a second barrier.
// No kernel, so no SM; the bytes still leave one GPU's HBM and land in another's.

namespace {

// The constants below are unverified: no public measurement, and no profile of Lagom's times CE calls yet
// (the profiler plugin sees them only around the host enqueue). Each is set at the pessimistic side of its
// plausible range, so that CTA policy zero is never chosen on an optimistic price.
// One ncclMemOpSync barrier, µs: stream memory operations (a 32-bit write to each peer over NVLink, a wait
// on each peer's flag) between the host-launched copies; plausible 2-10 µs.
constexpr double k_ce_barrier_us = 5.0;
// Dispatch of one copy of the batch on the copy engines (and its ramp to the link rate), µs; plausible
// 0.5-5 µs per copy.
constexpr double k_ce_copy_us = 2.0;
// The share of the NVLink rate a kernel reaches (intra.bw × intra.efficiency) that the copy engines reach
// for peer writes; plausible 0.6-1.0.
constexpr double k_ce_link_share = 0.85;

// Copies in one call's batch: an AllGather sends its piece to every peer (frameworks gather in place, the
// shard a view of the output, so no local copy: ce_coll.cc:388-395); an AlltoAll sends one piece to every
// rank, itself included (:440-461).
int ce_copies(Collective c, int ranks) {
  return c == Collective::alltoall ? ranks : ranks - 1;
}

}  // namespace

namespace {

// Why a call cannot run on the copy engines (none: it can), in the order NCCL checks.
enum class CeBlocker { none, no_nccl, collective, nodes, fabric, version };
CeBlocker ce_blocker(const ClusterSpec& cluster, Collective c, const CommGroup& g) {
  if (!cluster.has_nccl) return CeBlocker::no_nccl;
  if (c != Collective::allgather && c != Collective::alltoall) return CeBlocker::collective;
  if (g.nodes > 1) return CeBlocker::nodes;
  if (cluster.intra.kind != FabricKind::nvswitch) return CeBlocker::fabric;
  if (before_2_28(cluster)) return CeBlocker::version;
  return CeBlocker::none;
}

}  // namespace

Status CostModel::copy_engine_support(Collective c, const CommGroup& g) const {
  std::string why;
  switch (ce_blocker(m_cluster, c, g)) {
    case CeBlocker::none:
      return {};
    case CeBlocker::no_nccl:
      why = fmt::format("{} has no NCCL", m_cluster.name);
      break;
    case CeBlocker::collective:
      why = fmt::format(
          "{} runs a kernel under every CTA policy (NCCL's copy engines run AllGather and "
          "AlltoAll only)",
          to_string(c));
      break;
    case CeBlocker::nodes:
      why = fmt::format(
          "a communicator over {} nodes runs a kernel (NCCL's copy-engine path needs every rank "
          "NVLink-reachable on one node)",
          g.nodes);
      break;
    case CeBlocker::fabric:
      why = fmt::format(
          "{}'s GPUs are not all joined by NVSwitch (NCCL's symmetric windows need every peer "
          "reachable over NVLink)",
          m_cluster.name);
      break;
    case CeBlocker::version:
      why = fmt::format("NCCL {} has no copy-engine collectives (2.28 added them)", m_cluster.nccl_version);
      break;
  }
  return make_error(ErrorCode::invalid_input, why);
}

bool CostModel::copy_engine_eligible(Collective c, const CommGroup& g, const CollConfig& config) const {
  return config.cta_policy == CtaPolicy::zero && g.ranks >= 2 &&
         ce_blocker(m_cluster, c, g) == CeBlocker::none;
}

CollectiveCost CostModel::collective_cost(Collective c, double bytes, const CommGroup& g,
                                          const CollConfig& config) const {
  CollectiveCost out;
  out.config = resolve_defaults(c, bytes, g, config);
  if (copy_engine_eligible(c, g, out.config) && bytes >= 0) {
    // Each GPU sends (n−1)/n of the nccl-tests size (all-gather: the gathered buffer; all-to-all: the
    // rank's buffer) over its NVLink, at the copy engines' share of the rate a kernel reaches there.
    const double factor = busbw_factor(c, g.ranks);
    const double rate = m_cluster.intra.bw_GBps * m_cluster.intra.efficiency * k_ce_link_share;
    out.copy_engine = true;
    out.config.channels = 0;
    out.latency_us = collective_call_floor_us() * std::max(1, m_cluster.gpus_per_process) +
                     2.0 * k_ce_barrier_us + ce_copies(c, g.ranks) * k_ce_copy_us;
    out.time_us = out.latency_us + bytes * factor / (1e3 * std::max(1e-9, rate));
    out.algbw_GBps = out.time_us > 0 ? bytes / (out.time_us * 1e3) : 0.0;
    out.busbw_GBps = out.algbw_GBps * factor;
    out.link_GBps = rate;
    return out;
  }
  const CollConfig& cfg = out.config;
  if (!nccl_allows(c, cfg.algo, cfg.proto, g).ok() || bytes < 0) {
    out.time_us = k_inf;
    return out;
  }
  const int n = g.ranks;
  const int nodes = g.nodes;
  const int ppn = g.ranks_per_node();
  const double factor = busbw_factor(c, n);

  // Latency: NCCL's assembly; hop latencies scaled by the cluster's measured hop latency.
  const Link intra_link = nvlink_intra(m_cluster, ppn) ? k_nvlink : k_pci;
  const double intra_scale =
      m_cluster.intra.latency_us / k_hw_lat[intra_link][idx(Algo::ring)][idx(Proto::simple)];
  const double inter_scale = m_cluster.nic.latency_us > 0 ? m_cluster.nic.latency_us / 14.0 : 1.0;
  double lat = 0;
  double time_bw_us = 0;
  double link = 0;
  if (cfg.algo == Algo::p2p) {
    const double hop = k_hw_lat[nodes > 1 ? k_net : intra_link][idx(Algo::ring)][idx(cfg.proto)] *
                       (nodes > 1 ? inter_scale : intra_scale);
    // alltoall: n−1 peers, their sends overlap; intra-node part over the fabric, off-node part over the
    // NICs of this communicator's ppn ranks, min(NICs, ppn) of the node, as physical_busbw counts them for
    // a ring (the convention the simulator's shared-NIC rule, simulator/model_costs.h, builds on; PXN
    // lets a rank reach its communicator's other NICs through the GPU next to them). sendrecv: one peer.
    CollConfig ring_like = cfg;
    ring_like.algo = Algo::ring;
    const CommGroup intra_group{std::max(2, ppn), 1};
    const double intra_bw = physical_busbw(c, bytes, intra_group, ring_like, &link);
    const NicRates nic = nic_rates(m_cluster, g, k_pcie_efficiency);
    const double fabric = fabric_slowdown(m_cluster, g, traffic_pattern(c, cfg.algo), cfg.channels);
    const double per_nic = nic.per_nic_GBps / fabric;
    const double node_nic = nic.node_GBps / fabric;
    if (c == Collective::sendrecv) {
      lat = k_base_lat[idx(Algo::ring)][idx(cfg.proto)] + hop;
      const double bw = nodes > 1 ? per_nic : intra_bw;
      link = nodes > 1 ? bw : link;
      time_bw_us = bytes / (1e3 * std::min(bw, intra_bw));
    } else {
      lat = k_base_lat[idx(Algo::ring)][idx(cfg.proto)] + (ppn - 1) * hop +
            (nodes > 1 ? (nodes - 1) * k_hw_lat[k_net][idx(Algo::ring)][idx(cfg.proto)] * inter_scale : 0.0);
      const double intra_us = bytes * (ppn - 1) / n / (1e3 * intra_bw);
      double inter_us = 0;
      if (nodes > 1) {
        inter_us = ppn * bytes * (n - ppn) / n / (1e3 * node_nic);
        link = std::min(link, node_nic / ppn);
      }
      time_bw_us = std::max(intra_us, inter_us);
    }
  } else {
    // NCCL's NVLink latency of NVLSTree (25 us) stands for its intra-node stages' share of the pipeline
    // in NCCL's model; Lagom prices the pipeline as its fill (nvls_tree_fill_us), so not twice.
    const double intra_lat =
        cfg.algo == Algo::nvls_tree ? 0.0 : k_hw_lat[intra_link][idx(cfg.algo)][idx(cfg.proto)] * intra_scale;
    double inter_lat = net_lat(m_cluster, cfg.algo, cfg.proto, ppn) * inter_scale;
    double intra_for_ring = intra_lat;
    if (cfg.algo == Algo::ring && nodes > 1 && (c == Collective::broadcast || c == Collective::reduce)) {
      intra_for_ring = k_hw_lat[k_net][idx(cfg.algo)][idx(cfg.proto)] * inter_scale;
    }
    lat = (cfg.algo == Algo::nvls ? 0.0 : k_base_lat[idx(cfg.algo)][idx(cfg.proto)]) +
          step_latency_us(c, cfg.algo, cfg.proto, n, nodes, ppn, intra_for_ring, inter_lat,
                          net_overhead(m_cluster));
    const double bus = physical_busbw(c, bytes, g, cfg, &link);
    time_bw_us = bytes * factor / (1e3 * bus);
    if (cfg.algo == Algo::ring) time_bw_us += ring_fill_us(c, bytes, n, cfg, bus);
    if (cfg.algo == Algo::nvls_tree)
      time_bw_us += nvls_tree_fill_us(nccl_comm(m_cluster, g), bytes, factor, cfg.channels, bus);
  }

  // A calibrated fit replaces latency and bandwidth for its (collective, algo, proto, ranks, nodes); the
  // knobs keep acting through the model's ratio to the fit's own configuration.
  if (const CollectiveFit* fit = find_fit(c, cfg, g); fit != nullptr && cfg.algo != Algo::p2p) {
    CollConfig reference = cfg;
    if (fit->channels > 0)
      reference.channels = fit->channels;
    else
      reference.channels = nccl_call_channels(nccl_comm(m_cluster, g), cfg.algo, cfg.proto, bytes);
    reference.threads = 0;  // NCCL's own threads and chunk for the fit's call
    reference.chunk_bytes = 0;
    reference = resolve_defaults(c, bytes, g, reference);
    const double knob_ratio =
        physical_busbw(c, bytes, g, reference, nullptr) / physical_busbw(c, bytes, g, cfg, nullptr);
    lat = fit->latency_us;
    time_bw_us = bytes * factor / (1e3 * fit->bus_bw_GBps) * knob_ratio;
    out.latency_us = lat;
  } else {
    // Host cost: one launch per GPU the process drives; a multi-node call adds the network's start-up,
    // which the one proxy thread of a GPU does channel by channel (src/proxy.cc: one progress thread serves
    // every channel's connections).
    lat += collective_call_floor_us() * std::max(1, m_cluster.gpus_per_process) +
           (nodes > 1 ? m_cluster.nic.call_us_per_channel * cfg.channels : 0.0);
    out.latency_us = lat;
  }
  out.time_us = lat + time_bw_us;
  out.algbw_GBps = out.time_us > 0 ? bytes / (out.time_us * 1e3) : 0.0;
  out.busbw_GBps = out.algbw_GBps * factor;
  out.link_GBps = link;
  return out;
}

const CollectiveFit* CostModel::find_fit(Collective c, const CollConfig& cfg, const CommGroup& g) const {
  if (!m_calibration) return nullptr;
  const CollectiveFit* best = nullptr;
  for (const auto& fit : m_calibration->collectives) {
    if (fit.collective != to_string(c) || fit.ranks != g.ranks || fit.nodes != g.nodes ||
        fit.bus_bw_GBps <= 0)
      continue;
    if (!fit.algo.empty() && fit.algo != to_string(cfg.algo)) continue;
    if (!fit.proto.empty() && fit.proto != to_string(cfg.proto)) continue;
    // Prefer the most specific fit (algo and proto named).
    if (best == nullptr || (!fit.algo.empty() && best->algo.empty()) ||
        (!fit.proto.empty() && best->proto.empty())) {
      best = &fit;
    }
  }
  return best;
}

}  // namespace lagom::model
