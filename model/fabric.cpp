#include "model/fabric.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/nccl_topology.h"

namespace lagom::model {

Routing resolved_routing(const ClusterSpec& cluster) {
  if (cluster.nic.fabric.routing != Routing::automatic) return cluster.nic.fabric.routing;
  return cluster.nic.kind == NicKind::ib ? Routing::adaptive : Routing::ecmp;
}

TrafficPattern traffic_pattern(Collective collective, Algo algo) {
  if (collective == Collective::alltoall) return TrafficPattern::alltoall;
  if (collective == Collective::sendrecv) return TrafficPattern::ring;
  switch (algo) {
    case Algo::tree:
    case Algo::nvls_tree:
      return TrafficPattern::tree;
    case Algo::nvls:  // across nodes NVLS is CollNet+NVLS: SHARP reduces in the switches
    case Algo::collnet_direct:
    case Algo::collnet_chain:
      return TrafficPattern::in_switch;
    case Algo::ring:
    case Algo::pat:
    case Algo::p2p:
      break;
  }
  return TrafficPattern::ring;
}

double ecmp_expected_slowdown(long flows, int bins_per_group, double bins, double share) {
  if (flows <= 0 || share * static_cast<double>(flows) <= 1.0) return 1.0;
  const double f = static_cast<double>(flows);
  if (bins_per_group <= 1) return std::max(1.0, share * f);
  const double p = 1.0 / bins_per_group;
  // Beyond 10^5 flows a count is close to normal: the largest of `bins` lies about sqrt(2 ln bins) standard
  // deviations above the mean (the Gaussian maximum's leading term, which the expected maximum stays below).
  if (flows > 100'000) {
    const double peak = f * p + std::sqrt(f * p * (1 - p) * 2.0 * std::log(std::max(2.0, bins)));
    return std::max(1.0, share * peak);
  }
  // Binomial(flows, p) pmf, then the tail P(X > m) summed from the top (no cancellation near 1).
  std::vector<double> tail(static_cast<std::size_t>(flows) + 2, 0.0);
  const double log_p = std::log(p), log_q = std::log1p(-p), log_f = std::lgamma(f + 1.0);
  for (long m = flows; m >= 0; --m) {
    const double x = static_cast<double>(m);
    const double pmf =
        std::exp(log_f - std::lgamma(x + 1.0) - std::lgamma(f - x + 1.0) + x * log_p + (f - x) * log_q);
    tail[static_cast<std::size_t>(m)] = tail[static_cast<std::size_t>(m) + 1] + pmf;
  }
  // tail[m + 1] = P(X > m); P(max > m) <= bins × P(X > m) (the union bound: the counts of one hash are
  // negatively associated, so the product of the marginals would understate the maximum).
  double expected = 0, below = 0;
  for (long m = 0; m <= flows; ++m) {
    const double at_most = std::max(below, 1.0 - std::min(1.0, bins * tail[static_cast<std::size_t>(m) + 1]));
    expected += (at_most - below) * std::max(1.0, share * static_cast<double>(m));
    below = at_most;
    if (1.0 - below < 1e-12) break;
  }
  return std::max(1.0, expected);
}

namespace {

// What leaves the busiest leaf (per rail) for one pattern: its flows, one flow's demand in NICs at line
// rate, and whether ECMP's two legs (up to a spine, down to the target leaf) hash independently.
struct Crossing {
  double flows = 0;
  double share = 1;
  int sides = 2;
};

struct Layout {
  int nodes = 0, per_leaf = 0, leaves = 0;
  int nics_per_node = 1;        // NICs of one node on a leaf: 1 rail-optimised, else the usable NICs
  double per_nic_channels = 1;  // the call's channels on one NIC
  double qps = 1;               // queue pairs per connection
  bool scattered = false;
  [[nodiscard]] double cross() const {  // a hop's chance of reaching another leaf when scattered
    return static_cast<double>(nodes - per_leaf) / (nodes - 1);
  }
};

// A ring: each of a NIC's channels is one connection to the next node; packed, one node per leaf sends
// off it.
Crossing ring_crossing(const Layout& l) {
  const double crossing_nodes = l.scattered ? l.per_leaf * l.cross() : 1.0;
  return {crossing_nodes * l.nics_per_node * l.per_nic_channels * l.qps, 1.0 / (l.per_nic_channels * l.qps),
          l.scattered ? 2 : 1};
}

// NCCL's double binary tree: each edge carries a tree's half of the bytes each way and the busiest node's
// NIC runs at line rate, so an edge carries 1 / (the busiest node's neighbours over both trees) of a NIC,
// on half the channels. Packed, the crossing edges are counted leaf by leaf on the trees themselves.
Crossing tree_crossing(const Layout& l) {
  int busiest = 1;
  long edges = 0;
  // Packed: the edges from each leaf to another, over both trees (node r sits under leaf r / per_leaf).
  std::vector<long> crossing(l.scattered ? 0 : static_cast<std::size_t>(l.leaves), 0);
  for (int r = 0; r < l.nodes; ++r) {
    int degree = 0;
    for (int tree = 0; tree < 2; ++tree) {
      const TreeNeighbours t = nccl_dtree_neighbours(r, l.nodes, tree);
      degree += t.count;
      for (int i = 0; i < t.count && !l.scattered; ++i) {
        const int v = t.ranks[static_cast<std::size_t>(i)];
        if (v / l.per_leaf != r / l.per_leaf) ++crossing[static_cast<std::size_t>(r / l.per_leaf)];
      }
    }
    busiest = std::max(busiest, degree);
    edges += degree;
  }
  const double crossing_edges =
      l.scattered ? l.per_leaf * static_cast<double>(edges) / l.nodes * l.cross()
                  : static_cast<double>(*std::max_element(crossing.begin(), crossing.end()));
  const double per_edge_flows = std::max(1.0, std::round(l.per_nic_channels / 2.0)) * l.qps;
  return {crossing_edges * l.nics_per_node * per_edge_flows, 1.0 / (busiest * per_edge_flows),
          l.scattered ? 2 : 1};
}

// An all-to-all: a NIC's bytes spread evenly over the other nodes, one connection to each.
Crossing alltoall_crossing(const Layout& l) {
  return {static_cast<double>(l.per_leaf) * l.nics_per_node * (l.nodes - l.per_leaf) * l.qps,
          1.0 / ((l.nodes - 1) * l.qps), 2};
}

}  // namespace

double fabric_slowdown(const ClusterSpec& cluster, const CommGroup& group, TrafficPattern pattern,
                       int channels) {
  const NetworkFabric& fabric = cluster.nic.fabric;
  // Adaptive routing on a non-blocking leaf: what crosses never exceeds the uplinks (a leaf's NICs are at
  // most its ports), so no call slows; the common case, priced without counting.
  if (group.nodes <= fabric.leaf_nodes || pattern == TrafficPattern::in_switch) return 1.0;
  if (fabric.oversubscription <= 1.0 && resolved_routing(cluster) == Routing::adaptive) return 1.0;
  return fabric_load(cluster, group, pattern, channels).slowdown;
}

FabricLoad fabric_load(const ClusterSpec& cluster, const CommGroup& group, TrafficPattern pattern,
                       int channels) {
  FabricLoad out;
  const NetworkFabric& fabric = cluster.nic.fabric;
  if (group.nodes <= 1 || cluster.nic.count < 1 || pattern == TrafficPattern::in_switch) return out;
  Layout l;
  l.nodes = group.nodes;
  l.per_leaf = std::max(1, std::min(fabric.leaf_nodes, l.nodes));
  l.leaves = (l.nodes + l.per_leaf - 1) / l.per_leaf;
  out.leaves = l.leaves;
  if (l.leaves <= 1) return out;
  const int usable = usable_nics(cluster, group.ranks_per_node());
  // Rail-optimised: each rail is a fabric of its own, one NIC per node on each of its leaves; top of rack:
  // a leaf takes every NIC of its nodes.
  l.nics_per_node = fabric.rail_optimized ? 1 : usable;
  const int rails = fabric.rail_optimized ? usable : 1;
  const int leaf_ports = fabric.rail_optimized ? fabric.leaf_nodes : fabric.leaf_nodes * cluster.nic.count;
  // The leaf's uplink capacity in NICs at line rate; a leaf oversubscribed beyond its ports has one uplink
  // of less than a NIC's rate (each uplink's rate is the capacity over the uplinks).
  const double capacity = leaf_ports / fabric.oversubscription;
  out.uplinks = std::max(1, static_cast<int>(std::floor(capacity + 1e-9)));
  const double per_uplink = capacity / out.uplinks;
  l.per_nic_channels = std::max(1.0, static_cast<double>(channels) / usable);
  l.qps = std::max(1, cluster.nic.qps_per_connection);
  l.scattered = fabric.placement == Placement::scattered;

  const Crossing c = pattern == TrafficPattern::ring   ? ring_crossing(l)
                     : pattern == TrafficPattern::tree ? tree_crossing(l)
                                                       : alltoall_crossing(l);
  out.flows = std::max(1L, std::lround(c.flows));
  out.crossing_nics = c.flows * c.share;
  const double even = std::max(1.0, out.crossing_nics / capacity);
  if (resolved_routing(cluster) == Routing::adaptive) {
    out.slowdown = even;
  } else {
    const double bins = static_cast<double>(out.uplinks) * rails * l.leaves * c.sides;
    out.slowdown = std::max(even, ecmp_expected_slowdown(out.flows, out.uplinks, bins, c.share / per_uplink));
  }
  return out;
}

std::optional<QpsRelief> qps_relief(const ClusterSpec& cluster, const CommGroup& group,
                                    TrafficPattern pattern, int channels) {
  if (resolved_routing(cluster) != Routing::ecmp) return std::nullopt;
  const double now = fabric_load(cluster, group, pattern, channels).slowdown;
  ClusterSpec more = cluster;
  for (int qps = cluster.nic.qps_per_connection * 2; qps <= 16; qps *= 2) {
    more.nic.qps_per_connection = qps;
    const double slowdown = fabric_load(more, group, pattern, channels).slowdown;
    if (slowdown < now / 1.05) return QpsRelief{qps, slowdown};
  }
  return std::nullopt;
}

}  // namespace lagom::model
