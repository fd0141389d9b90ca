// NCCL's view of a cluster: what NCCL's topology search, channel setup and enqueue code decide for one
// communicator, derived from the cluster spec. This is what "NCCL's default" means in Lagom: the CTAs a
// call runs with, the bandwidth NCCL's own tuning model assumes per channel, the chunk of a call and the
// byte count NCCL hands to a tuner plugin.
//
// Source: NVIDIA/nccl at tag v2.28.9-1 (the default runtime); each rule cites file:line, and where a later
// release decides otherwise (2.29, 2.30: nccl_emulation) the rule cites that tag too. NCCL's search
// (src/graph/search.cc ncclTopoCompute) walks the real PCI/NVLink graph of a node; a cluster spec has no
// such graph, so the emulation treats a node as NCCL sees a DGX-like one: each GPU has one x16 PCIe link,
// the NICs sit next to the GPUs (rail-aligned: min(NICs, GPUs) of them serve a communicator), and the
// fabric is NVSwitch (all GPUs one hop apart), NVLink pairs over PCIe, or PCIe only. docs/model.md states
// what each result is for the presets.
//
// All functions are pure and cheap.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "model/collective_factors.h"
#include "model/collectives.h"
#include "model/specs.h"

namespace lagom::model {

// NCCL's bandwidth figures for one GPU and the NICs next to it, 10^9 bytes/s (src/graph/topo.h, topo.cc).
struct NcclLinks {
  double nvlink_GBps = 0;    // GPU ↔ NVSwitch, or to its NVLink pair: links × NCCL's per-link figure
  double gpu_pcie_GBps = 0;  // the GPU's x16 link: 16 lanes × speed / 80 (topo.cc:424, :657)
  double nic_pcie_GBps = 0;  // the NIC's x16 link
  double nic_GBps = 0;       // one NIC: Mbit/s / 8000 (topo.cc:373)
};
// For the NICs of `group`, at its share of their rate (CommGroup::nic_share).
NcclLinks nccl_links(const ClusterSpec& cluster, const CommGroup& group);

// PCIe generation of the GPU's and the NIC's link with the spec's defaults applied (specs.h). The NIC's
// derived generation follows the line rate the communicator sees (gbit × nic_share): the rule the simulator's
// shared NICs were priced by when they were a rescaled cluster, kept so that no prediction moves.
int gpu_pcie_gen(const ClusterSpec& cluster);
int nic_pcie_gen(const ClusterSpec& cluster, double nic_share = 1.0);
// Raw x16 bandwidth of a PCIe generation per direction, 10^9 bytes/s (GT/s × 16 lanes × 128/130 ÷ 8:
// Gen3 15.75, Gen4 31.5, Gen5 63.0, Gen6 126).
double pcie_x16_GBps(int generation);
// NICs of a node that serve a communicator with `ranks_per_node` GPUs on it: min(NICs, ranks per node) where
// a node has no more NICs than GPUs (a NIC per GPU, or one shared by neighbours: 4×100G for 8 GPUs);
// NICs × ranks per node / GPUs per node where it has more (16×100G for 8 GPUs: each GPU's two NICs both
// carry its channels, as NCCL's search spreads channels over every NIC it reaches at PCIe distance). At
// least 1.
int usable_nics(const ClusterSpec& cluster, int ranks_per_node);
// The NIC rates of a communicator, computed once for every formula that prices its network traffic
// (CostModel's link bound, its physical bus bandwidth and its alltoall/sendrecv, NCCL's topology view).
struct NicRates {
  int usable = 1;        // NICs of a node serving the communicator (usable_nics)
  double line_GBps = 0;  // one NIC's line rate at the communicator's share: gbit × nic_share / 8
  // What one NIC achieves: min(line × efficiency, its PCIe x16 × pcie_efficiency); without GPUDirect RDMA
  // half that PCIe link (each byte crosses the root port twice).
  double per_nic_GBps = 0;
  // usable × per_nic_GBps; without GPUDirect RDMA at most the host DRAM's share: a node sending and
  // receiving R each way moves 4R through DRAM (written by the GPU, read by the NIC, and back), of DRAM's
  // host_memory_GBps × k_host_memory_efficiency.
  double node_GBps = 0;
};
// Host DRAM bandwidth a streaming copy reaches of the datasheet figure: STREAM's copy on two-socket servers,
// about 0.8 (unverified: no measurement at hand for the DGX hosts; plausible 0.6–0.9).
inline constexpr double k_host_memory_efficiency = 0.8;
// NicSpec::host_memory_GBps with its default applied (409.6 before sm90, 614.4 from sm90).
double resolved_host_memory_GBps(const ClusterSpec& cluster);
// `pcie_efficiency`: PCIe's achievable share of its raw x16 rate (model/cost_collectives.cpp's constant).
NicRates nic_rates(const ClusterSpec& cluster, const CommGroup& group, double pcie_efficiency);

// One channel's network connection rate with the architecture default applied (GpuSpec::net_channel_GBps).
double resolved_net_channel_GBps(const ClusterSpec& cluster);

// The NCCL release whose defaults Lagom emulates for a cluster's nccl_version (docs/model.md "NCCL
// versions"). Lagom follows NCCL's code at the tags 2.24.3 (for 2.24–2.26), 2.27.7, 2.28.9, 2.29.3 (for
// 2.29.0–2.29.6: 2.29.2 and 2.29.3 do not differ in what Lagom models), 2.29.7 and 2.30.7 (for 2.30.x:
// 2.30.3, 2.30.4 and 2.30.7 do not differ in it). A version without its patch ("2.29") is its minor's
// newest release. One older than 2.24 emulates 2.24.3 and one newer than 2.30 emulates 2.30.7, with a
// warning that says so.
struct NcclEmulation {
  NcclVersion release;  // the tag whose code Lagom follows
  std::string warning;  // "" within the emulated releases
};
NcclEmulation nccl_emulation(std::string_view nccl_version);
// nccl_emulation(cluster.nccl_version).release.
NcclVersion emulated_nccl(const ClusterSpec& cluster);
// "2.30.7".
std::string to_string(const NcclVersion& version);
// Whether this NCCL asks its tuner plugin for each call's chunk: tuner interface v6's getChunkSize, which
// NCCL 2.30 loads first (NVIDIA/nccl@v2.30.7-1:src/include/plugin/tuner/tuner_v6.h:79-80, called at
// src/enqueue.cc:2308-2317); earlier releases have no such call (their tuners v2-v5 leave it NULL).
bool tuner_sets_chunk(const NcclVersion& version);

// One search result (struct ncclTopoGraph): channels and the bandwidth NCCL budgets per channel.
struct NcclGraph {
  int channels = 0;
  double bw_intra_GBps = 0;
  double bw_inter_GBps = 0;
};

// What NCCL sets up for a communicator of `group` on the cluster.
struct NcclComm {
  int ranks = 2, nodes = 1, local_ranks = 2;
  NcclGraph ring;  // the ring graph
  NcclGraph tree;  // the tree graph: the ring's channels (init.cc:1026-1027, :1192), bwIntra raised in pass 2
  NcclGraph nvls;  // the NVLS graph (channels = NVLS heads); channels 0 when NVLS is not available
  int ctas = 1;    // comm->nChannels after connect.cc's doublings: the CTAs of a ring or tree call
  // comm->nvlsChannels: the CTAs of an NVLS or NVLSTree call (nvls.cc:178-199; 2.30 tunes it on sm100
  // across nodes, model/nccl_topology.cpp nvls_channels).
  int nvls_ctas = 0;
  // comm->nvlsChunkSize and comm->nvlsTreeMaxChunkSize, the chunks an NVLSTree call starts from
  // (nvls_tree_chunks in model/nccl_topology.cpp); enqueue.cc halves them for smaller calls.
  std::int64_t nvls_chunk = 128 * 1024;
  std::int64_t nvls_tree_max_chunk = 128 * 1024;
  int simple_threads = 512;  // comm->maxThreads[RING][SIMPLE] (tuning.cc:231-233)
  bool ll128_inter = false;  // LL128 allowed over this communicator's network paths (tuning.cc:480-493)
};
NcclComm nccl_comm(const ClusterSpec& cluster, const CommGroup& group);
// The NVLS heads NCCL's search finds for the group (nccl_comm(...).nvls.channels without the ring search).
int nccl_nvls_heads(const ClusterSpec& cluster, const CommGroup& group);

// Rank r's neighbours in NCCL's binary tree over n ranks (src/graph/trees.cc:31-65 ncclGetBtree): r's lowest
// set bit b; the parent (r^b)|(b<<1), or r^b when that is out of range; the children r − b/2 and the largest
// r + b/2^k in range; rank 0 has one child, the largest power of two below n. The parent first.
struct TreeNeighbours {
  int count = 0;
  std::array<int, 3> ranks{};
};
TreeNeighbours nccl_btree_neighbours(int r, int n);
// Both trees of NCCL's double binary tree (trees.cc:88-109 ncclGetDtree): the second mirrors the first for
// an even count and shifts it by one for an odd count. Tree t of rank r.
TreeNeighbours nccl_dtree_neighbours(int r, int n, int tree);

// NCCL's inter-node double binary tree over `nodes` nodes (src/graph/trees.cc ncclGetDtree): the bytes
// the busiest node sends (and receives) through its NICs per byte of an all-reduce, summed over both
// trees, and the largest number of tree neighbours (parent + children) a node has in one tree.
struct TreeLoad {
  double node_bytes_per_byte = 0;  // 0 for one node; 1 for two; 2 from four nodes on (interior nodes)
  int max_degree = 0;              // 1 for two nodes, 2 for three, 3 from four
};
TreeLoad double_tree_load(int nodes);

// The CTAs NCCL runs one call with (enqueue.cc:1865-1892): NVLS and NVLSTree use comm->nvlsChannels;
// ring and tree shed channels while bytes < channels × threads × threshold (Simple 64 B per thread,
// LL 8 × ranks for ring, LL128 8; comm.h:41-43, tuning.cc:542-547).
int nccl_call_channels(const NcclComm& comm, Algo algo, Proto proto, double tuner_bytes);
// The threads per CTA of that call (enqueue.cc:1894-1908): halved while bytes < channels × threads ×
// threshold; tree and PAT run NCCL_MAX_NTHREADS (640).
int nccl_call_threads(const NcclComm& comm, Algo algo, Proto proto, double tuner_bytes, int channels);

// The byte count NCCL passes to a tuner plugin's getCollInfo for one call (enqueue.cc:1923, with
// ncclFuncMaxSendRecvCount, src/include/enqueue.h:36-38): the element size × count × nRanks for all-gather
// and reduce-scatter (the whole gathered or scattered buffer), × count for the others. That is the size
// nccl-tests prints, which is what Lagom's op classes carry, so the function returns its argument; it is
// the one place that says so. Calls grouped together (ncclGroupStart/End) of the same collective, operation
// and type within 4× of each other's size reach the tuner as one call of their summed size
// (enqueue.cc:392-397).
std::uint64_t tuner_bytes(Collective collective, std::uint64_t nccl_tests_bytes);

}  // namespace lagom::model
