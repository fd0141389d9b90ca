// CostModel: collectives. Two models live here:
//  * NCCL's own tuning model (src/graph/tuning.cc, constants of NCCL 2.18–2.30, research-simulators.md §4):
//    used only to decide what NCCL picks by default (nccl_default) — reproducing NCCL's decision.
//  * Lagom's physical price (collective_cost): NCCL's latency assembly and protocol factors, plus what the
//    knobs do physically: channels × per-channel copy rate (threads) against the link limit, per-chunk
//    synchronisation overhead, and the host-side launch cost. docs/model.md states each term's source.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "model/cost_model.h"

namespace lagom::model {

namespace {

constexpr double k_inf = std::numeric_limits<double>::infinity();
enum Link { k_nvlink = 0, k_pci = 1, k_net = 2 };

// NCCL hwLat[link][algo][proto], µs (tuning.cc; NVLink/NET rows per research-simulators.md §4).
// unverified: the PCI row's LL/LL128 entries (1.0/1.9 tree, 1.0/2.5 ring) are from memory of tuning.cc.
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
// NCCL baseLat[algo][proto], µs.
constexpr double k_base_lat[7][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0},      {0, 0, 0},
                                     {0, 0, 0},        {0, 0, 0},        {8.0, 8.0, 8.0}};
// Per-channel bandwidth caps, GB/s, [Ampere, Hopper][nodes 1, 2, >2] (tuning.cc perChMax*; Hopper per §4).
// unverified: the Ampere rows and the LL caps (llMaxBws) are from memory of tuning.cc (NCCL 2.18).
constexpr double k_per_ch_tree[2][3] = {{24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};
constexpr double k_per_ch_tree_ll128[2][3] = {{20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}};
constexpr double k_per_ch_ring_ll128[2] = {20.0, 36.7};
constexpr double k_ll_max_bw[2][3] = {{87.7, 22.5, 19.0}, {141.0, 45.9, 35.9}};
// treeCorrectionFactor[proto][log2(bytes/64)] (tuning.cc). unverified: rows from memory; §4 confirms the
// range 0.4–1.0 and Simple = 0.5 from 128 KB to 1 MB.
constexpr double k_tree_correction[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
// NVLS efficiency of the NVLink SHARP path (tuning.cc nvlsEfficiency: Hopper 0.85).
constexpr double k_nvls_efficiency = 0.85;
constexpr int k_nvls_default_channels = 16;  // NCCL_NVLS_NCHANNELS default
// Protocol payload efficiency on a link: LL carries 4 data bytes per 8-byte line (0.5, NCCL's Ring/LL
// factor), LL128 120 of 128 bytes (NCCL uses 0.92), Simple 1.
constexpr double k_proto_eff[3] = {0.5, 0.92, 1.0};
// Half-saturation thread count of one channel's copy loop (Little's law: a CTA needs enough loads in
// flight to cover memory latency). unverified: chosen so that 512 threads reach 80% of the asymptote.
constexpr double k_threads_half = 128.0;

int idx(Algo a) {
  return static_cast<int>(a);
}
int idx(Proto p) {
  return static_cast<int>(p);
}
int arch_row(const GpuSpec& gpu) {
  return gpu.sm_arch >= 90 ? 1 : 0;
}
int nodes_col(int nodes) {
  return nodes <= 1 ? 0 : (nodes == 2 ? 1 : 2);
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

// NCCL's latency assembly (src/graph/tuning.cc): the per-step latency an algorithm adds to its base
// latency, for n ranks over `nodes` nodes of `ppn` ranks. Used by both NCCL's own tuning model and
// Lagom's physical price, which differ only in how they scale intra_lat / inter_lat.
double step_latency_us(Collective c, Algo a, Proto p, int n, int nodes, int ppn, double intra_lat,
                       double inter_lat) {
  const int nsteps = nsteps_of(c, n);
  const int n_inter = nodes <= 1 ? 0 : (c == Collective::allreduce ? 2 * (nodes - 1) : nodes - 1);
  switch (a) {
    case Algo::ring:
      if (nodes > 1)
        intra_lat =
            std::max(intra_lat, p == Proto::simple ? 3.0 : 1.0);  // netOverhead (Intel: 1 µs, ×3 Simple)
      return (nsteps - n_inter) * intra_lat + n_inter * inter_lat;
    case Algo::tree:
      return 2 * ((ppn - 1) * intra_lat + log2i(nodes) * inter_lat);
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

}  // namespace

// ---------------------------------------------------------------------------------------------------

CommGroup CostModel::contiguous_group(int ranks) const {
  const int gpn = std::max(1, m_cluster.gpus_per_node);
  return CommGroup{ranks, (ranks + gpn - 1) / gpn};
}

int CostModel::default_channels(const CommGroup& /*group*/) const {
  return std::max(1, m_cluster.nccl_channels);
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
  switch (a) {
    case Algo::ring:
      if (c == Collective::sendrecv || c == Collective::alltoall) return no("not a ring collective");
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
      if (a == Algo::nvls && c != Collective::allreduce && c != Collective::allgather &&
          c != Collective::reducescatter) {
        return no("NCCL runs nvls for allreduce, allgather and reducescatter only");
      }
      if (a == Algo::nvls_tree && c != Collective::allreduce)
        return no("NCCL runs nvls_tree for allreduce only");
      if (a == Algo::nvls_tree && g.nodes < 2) return no("needs more than one node");
      if (ppn < 2) return no("needs at least 2 GPUs per node");
      break;
    case Algo::pat:
      if (c != Collective::allgather && c != Collective::reducescatter) {
        return no("NCCL runs pat for allgather and reducescatter only");
      }
      if (ppn != 1) return no("NCCL runs pat with one GPU per node only");
      break;
    case Algo::p2p:
      break;
  }
  const bool simple_only = a == Algo::collnet_direct || a == Algo::collnet_chain || a == Algo::nvls ||
                           a == Algo::nvls_tree || a == Algo::pat;
  if (simple_only && p != Proto::simple) return no("this algorithm runs the simple protocol only");
  if (p == Proto::ll128) {
    // NCCL enables LL128 by default only on NVLink between GPUs of compute capability 7.0, 8.0 or 9.0
    // (tuning.cc: other cases "may cause silent data corruption").
    const int arch = m_cluster.gpu.sm_arch;
    const bool nvlink = nvswitch || (m_cluster.intra.kind == FabricKind::nvlink_pairs && ppn == 2);
    if (!(arch == 70 || arch == 80 || arch == 90) || !nvlink) {
      return no(fmt::format("NCCL enables ll128 only on NVLink with sm70/80/90 GPUs ({} has {} on {})",
                            m_cluster.name, m_cluster.gpu.name, to_string(m_cluster.intra.kind)));
    }
  }
  return {};
}

double CostModel::link_bus_GBps(const CommGroup& g, Algo algo) const {
  const int ppn = g.ranks_per_node();
  const FabricSpec& f = m_cluster.intra;
  double intra = f.bw_GBps * f.efficiency;
  if (f.kind == FabricKind::nvlink_pairs && ppn == 2 && g.nodes == 1) intra = f.pair_bw_GBps * f.efficiency;
  if (algo == Algo::nvls || algo == Algo::nvls_tree) intra *= k_nvls_efficiency;
  if (g.nodes <= 1 || ppn < 1) return intra;
  const int usable_nics = std::max(1, std::min(m_cluster.nic.count, ppn));
  const double inter = usable_nics * m_cluster.nic.gbit / 8.0 * m_cluster.nic.efficiency;
  if (ppn == 1) return inter;
  return std::min(intra, inter);
}

// ---------------------------------------------------------------------------------------------------
// NCCL's tuning model (selection only).

double CostModel::nccl_model_time_us(Collective c, Algo a, Proto p, double bytes, const CommGroup& g) const {
  if (!nccl_allows(c, a, p, g).ok()) return k_inf;
  const int n = g.ranks;
  const int nodes = g.nodes;
  const int ppn = g.ranks_per_node();
  const int nch = default_channels(g);
  const int row = arch_row(m_cluster.gpu);
  const int col = nodes_col(nodes);
  double bus = link_bus_GBps(g, a);
  if (a == Algo::p2p) return bytes / (1e3 * bus);
  switch (a) {
    case Algo::ring:
      if (p == Proto::ll) bus = std::min(k_ll_max_bw[row][col], bus * 0.5);
      if (p == Proto::ll128) bus = std::min(bus * 0.92, nch * k_per_ch_ring_ll128[row]);
      break;
    case Algo::tree:
      bus = std::min(bus * 0.92, nch * k_per_ch_tree[row][col]);
      if (p == Proto::ll) bus = std::min(bus / 3.8, k_ll_max_bw[row][col]);
      if (p == Proto::ll128)
        bus = std::min(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * k_per_ch_tree_ll128[row][col]);
      break;
    case Algo::pat:
      bus *= 0.75;
      break;
    case Algo::nvls:
    case Algo::nvls_tree:
      bus *= (k_nvls_default_channels - 1.0) / k_nvls_default_channels;
      break;
    default:
      break;
  }
  const int nsteps = nsteps_of(c, n);
  double ratio = 0.5;
  if (a == Algo::ring || a == Algo::pat) ratio = static_cast<double>(n) / nsteps;
  if (a == Algo::nvls || a == Algo::nvls_tree || a == Algo::collnet_direct || a == Algo::collnet_chain)
    ratio = 1.0;
  double alg = bus * ratio;
  if (a == Algo::tree && c == Collective::allreduce) {
    const int i = std::clamp(static_cast<int>(log2i(static_cast<int>(std::max(1.0, bytes / 64.0)))), 0, 22);
    alg *= k_tree_correction[idx(p)][i];
  }
  // Latency assembly with NCCL's constant tables (scaling is Lagom's, only in collective_cost()).
  const Link intra_link = (m_cluster.intra.kind == FabricKind::nvswitch ||
                           (m_cluster.intra.kind == FabricKind::nvlink_pairs && ppn == 2))
                              ? k_nvlink
                              : k_pci;
  const double intra_lat = k_hw_lat[intra_link][idx(a)][idx(p)];
  const double inter_lat = k_hw_lat[k_net][idx(a)][idx(p)];
  double lat = k_base_lat[idx(a)][idx(p)] + step_latency_us(c, a, p, n, nodes, ppn, intra_lat, inter_lat);
  if (a == Algo::ring && c == Collective::allreduce && p == Proto::simple && nodes > 1 &&
      bytes / (nch * n) >= 64) {
    lat *= 1.4;
  }
  return lat + bytes / (1e3 * alg);
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
    double best_time = k_inf;
    for (Algo a : k_all_algos) {
      for (Proto p : k_all_protos) {
        const double t = nccl_model_time_us(c, a, p, bytes, g);
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

CollConfig CostModel::resolve_defaults(Collective c, double /*bytes*/, const CommGroup& g,
                                       CollConfig config) const {
  if (config.channels <= 0) {
    config.channels = (config.algo == Algo::nvls || config.algo == Algo::nvls_tree)
                          ? std::min(k_nvls_default_channels, default_channels(g))
                          : default_channels(g);
  }
  if (config.threads <= 0) config.threads = config.proto == Proto::ll128 ? 640 : k_nccl_default_threads;
  if (config.chunk_bytes <= 0) config.chunk_bytes = default_chunk_bytes(config.proto);
  (void)c;
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

double CostModel::physical_busbw(Collective c, double bytes, const CommGroup& g, const CollConfig& cfg,
                                 double* link_out) const {
  const int n = g.ranks;
  const int row = arch_row(m_cluster.gpu);
  const int col = nodes_col(g.nodes);
  const double link = link_bus_GBps(g, cfg.algo);
  if (link_out != nullptr) *link_out = link;
  const double pe = k_proto_eff[idx(cfg.proto)];
  // One channel: a CTA's copy rate scales with threads as T/(T+T½), normalised to NCCL's 512 threads.
  const double threads = static_cast<double>(cfg.threads);
  const double thread_factor = (threads / (threads + k_threads_half)) / (512.0 / (512.0 + k_threads_half));
  double ch = m_cluster.gpu.channel_GBps * thread_factor * pe;
  if (cfg.proto == Proto::ll128) ch = std::min(ch, k_per_ch_ring_ll128[row] * thread_factor);
  // Data one channel moves per step, and the per-chunk synchronisation cost (a flag post/poll across the
  // link: the link's hop latency for this protocol) paid for every chunk after the first of a step.
  double per_step = bytes / n;
  if (c == Collective::broadcast || c == Collective::reduce || cfg.algo == Algo::tree) per_step = bytes;
  const double d_ch = per_step / cfg.channels;
  const double scale = m_cluster.intra.latency_us / 3.4;
  const double hop_us =
      std::max(0.05, k_hw_lat[m_cluster.intra.kind == FabricKind::nvswitch ? k_nvlink : k_pci]
                             [idx(Algo::ring)][idx(cfg.proto)] *
                         scale);
  const double chunks = d_ch / static_cast<double>(cfg.chunk_bytes);
  const double transfer_us = d_ch / (ch * 1e3);
  const double extra_us = std::max(0.0, chunks - 1.0) * hop_us;
  const double eff = transfer_us > 0 ? transfer_us / (transfer_us + extra_us) : 1.0;
  double bus = std::min(cfg.channels * ch * eff, link * pe);
  if (cfg.proto == Proto::ll) bus = std::min(bus, k_ll_max_bw[row][col]);
  if (cfg.algo == Algo::tree) bus *= 0.92;  // NCCL's tree factor: the tree's up/down phases share links
  if (cfg.algo == Algo::pat) bus *= 0.75;
  if (cfg.algo == Algo::nvls || cfg.algo == Algo::nvls_tree)
    bus *= (cfg.channels - 1.0) / std::max(1, cfg.channels);
  return std::max(bus, 1e-9);
}

CollectiveCost CostModel::collective_cost(Collective c, double bytes, const CommGroup& g,
                                          const CollConfig& config) const {
  CollectiveCost out;
  out.config = resolve_defaults(c, bytes, g, config);
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
  const Link intra_link = (m_cluster.intra.kind == FabricKind::nvswitch ||
                           (m_cluster.intra.kind == FabricKind::nvlink_pairs && ppn == 2))
                              ? k_nvlink
                              : k_pci;
  const double intra_scale =
      m_cluster.intra.latency_us / k_hw_lat[intra_link][idx(Algo::ring)][idx(Proto::simple)];
  const double inter_scale = m_cluster.nic.latency_us > 0 ? m_cluster.nic.latency_us / 14.0 : 1.0;
  double lat = 0;
  double time_bw_us = 0;
  double link = 0;
  if (cfg.algo == Algo::p2p) {
    const double hop = k_hw_lat[nodes > 1 ? k_net : intra_link][idx(Algo::ring)][idx(cfg.proto)] *
                       (nodes > 1 ? inter_scale : intra_scale);
    // alltoall: n−1 peers, their sends overlap; intra-node part over the fabric, off-node part shares the
    // node's NICs among its ppn ranks. sendrecv: one peer.
    CollConfig ring_like = cfg;
    ring_like.algo = Algo::ring;
    const CommGroup intra_group{std::max(2, ppn), 1};
    const double intra_bw = physical_busbw(c, bytes, intra_group, ring_like, &link);
    if (c == Collective::sendrecv) {
      lat = k_base_lat[idx(Algo::ring)][idx(cfg.proto)] + hop;
      const double bw = nodes > 1 ? m_cluster.nic.gbit / 8.0 * m_cluster.nic.efficiency : intra_bw;
      link = nodes > 1 ? bw : link;
      time_bw_us = bytes / (1e3 * std::min(bw, intra_bw));
    } else {
      lat = k_base_lat[idx(Algo::ring)][idx(cfg.proto)] + (ppn - 1) * hop +
            (nodes > 1 ? (nodes - 1) * k_hw_lat[k_net][idx(Algo::ring)][idx(cfg.proto)] * inter_scale : 0.0);
      const double intra_us = bytes * (ppn - 1) / n / (1e3 * intra_bw);
      double inter_us = 0;
      if (nodes > 1) {
        const double node_nic =
            std::max(1, m_cluster.nic.count) * m_cluster.nic.gbit / 8.0 * m_cluster.nic.efficiency;
        inter_us = ppn * bytes * (n - ppn) / n / (1e3 * node_nic);
        link = std::min(link, node_nic / ppn);
      }
      time_bw_us = std::max(intra_us, inter_us);
    }
  } else {
    const double intra_lat = k_hw_lat[intra_link][idx(cfg.algo)][idx(cfg.proto)] * intra_scale;
    const double inter_lat = k_hw_lat[k_net][idx(cfg.algo)][idx(cfg.proto)] * inter_scale;
    lat = k_base_lat[idx(cfg.algo)][idx(cfg.proto)] +
          step_latency_us(c, cfg.algo, cfg.proto, n, nodes, ppn, intra_lat, inter_lat);
    const double bus = physical_busbw(c, bytes, g, cfg, &link);
    // Bus → algorithm bandwidth: ring/pat move bytes·factor per link; tree halves (up + down);
    // NVLS and CollNet reduce in the switch (each byte crosses a GPU's link once each way).
    double alg = bus / factor;
    if (cfg.algo == Algo::tree) alg = bus * 0.5;
    if (cfg.algo == Algo::nvls || cfg.algo == Algo::nvls_tree || cfg.algo == Algo::collnet_direct ||
        cfg.algo == Algo::collnet_chain) {
      alg = bus;
    }
    time_bw_us = bytes / (1e3 * alg);
  }

  // A calibrated fit replaces latency and bandwidth for its (collective, algo, proto, ranks, nodes); the
  // knobs keep acting through the model's ratio to the fit's own configuration.
  if (const CollectiveFit* fit = find_fit(c, cfg, g); fit != nullptr && cfg.algo != Algo::p2p) {
    CollConfig reference = cfg;
    if (fit->channels > 0)
      reference.channels = fit->channels;
    else
      reference.channels = default_channels(g);
    reference.threads = k_nccl_default_threads;
    reference.chunk_bytes = default_chunk_bytes(reference.proto);
    const double knob_ratio =
        physical_busbw(c, bytes, g, reference, nullptr) / physical_busbw(c, bytes, g, cfg, nullptr);
    lat = fit->latency_us;
    time_bw_us = bytes * factor / (1e3 * fit->bus_bw_GBps) * knob_ratio;
    out.latency_us = lat;
  } else {
    lat += m_cluster.collective_launch_us;
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
