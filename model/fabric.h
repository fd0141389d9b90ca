// The switched network above the NICs (ClusterSpec::nic.fabric, docs/model.md "The fabric"): what a
// two-tier leaf-spine fabric takes off a collective's inter-node rate once its traffic leaves a leaf.
//
// A collective across nodes runs as fast as its slowest flow: each of NCCL's channels is a pipeline through
// every node of the ring or tree, and the call ends when its last channel does. Traffic between two nodes
// under one leaf never reaches the spine. Traffic that leaves a leaf shares the leaf's uplinks
// (leaf_nodes ÷ oversubscription of them per rail, each at the NICs' line rate):
//   adaptive routing  spreads it evenly: the flows slow only where the leaf's crossing demand exceeds its
//                     uplinks (an oversubscribed leaf);
//   ECMP              hashes each flow (each queue pair) onto one uplink for its life: flows that hash alike
//                     share an uplink, and the flow on the fullest uplink sets the pace. The expected
//                     fullest uplink is the maximum load of F flows thrown at random onto the fabric's
//                     uplinks (balls into bins: each uplink's count Binomial(F, 1/K), the maximum bounded
//                     by the union bound P(max > m) <= uplinks × P(count > m), which is exact where
//                     collisions are rare and above the truth where they are common: never optimistic).
// What crosses a leaf follows from the pattern and the placement: a ring over packed nodes leaves a leaf at
// its last node only (one NIC's traffic, which one uplink always carries: no slowdown under either
// routing); over scattered nodes every hop crosses unless both ends share a leaf; NCCL's double binary tree
// crosses where its edges join nodes of different leaves (counted on the tree itself); an all-to-all
// sends (nodes − leaf nodes) ÷ (nodes − 1) of each NIC's bytes off its leaf in any placement.
#pragma once

#include <optional>

#include "model/collectives.h"
#include "model/specs.h"

namespace lagom::model {

// The inter-node traffic pattern of a collective algorithm.
enum class TrafficPattern {
  ring,      // ring and PAT, and a send/receive between two nodes
  tree,      // NCCL's double binary tree (tree, NVLSTree)
  alltoall,  // every node to every node (alltoall)
  in_switch  // SHARP (CollNet, NVLS across nodes): the switches reduce, each leaf sends one stream up
};

// The pattern of a collective run with `algo`: alltoall's own, a send/receive's ring-like pair of nodes,
// else the algorithm's.
TrafficPattern traffic_pattern(Collective collective, Algo algo);

// The routing a fabric uses once `automatic` is resolved by the NIC's link layer (adaptive on IB, ECMP on
// RoCE and TCP).
Routing resolved_routing(const ClusterSpec& cluster);

struct FabricLoad {
  double slowdown = 1;       // time factor on the inter-node transfer, >= 1
  double crossing_nics = 0;  // the busiest leaf's traffic to the spine, in NICs at line rate (per rail)
  int uplinks = 0;           // that leaf's uplinks (per rail): leaf NICs ÷ oversubscription, at least 1
  long flows = 0;            // flows crossing it (ECMP hashes each)
  int leaves = 1;            // leaves the communicator's nodes span (per rail)
};
// The fabric's effect on one call of `group` with `channels` CTAs (channels spread over the communicator's
// usable NICs, each a connection of qps_per_connection queue pairs). 1 for a single node or a communicator
// under one leaf. A communicator whose symmetric copies share its NICs (CommGroup::nic_share < 1) is priced
// as if alone at the NICs' full rate: the same crossing demand in fewer, larger flows, which errs slow under
// ECMP.
FabricLoad fabric_load(const ClusterSpec& cluster, const CommGroup& group, TrafficPattern pattern,
                       int channels);

// fabric_load(...).slowdown without counting where nothing can slow (one leaf, SHARP, adaptive routing on
// a non-blocking fabric): what the cost model calls for every price.
double fabric_slowdown(const ClusterSpec& cluster, const CommGroup& group, TrafficPattern pattern,
                       int channels);

// Under ECMP, the fewest queue pairs per connection (doubling from the cluster's, up to 16) whose flows take
// at least 5% off the call's slowdown, as this model prices them (it prices no cost of more queue pairs, so
// it names the fewest that help rather than the most); none under adaptive routing or when none helps.
struct QpsRelief {
  int qps = 1;
  double slowdown = 1;  // the call's slowdown with them
};
std::optional<QpsRelief> qps_relief(const ClusterSpec& cluster, const CommGroup& group,
                                    TrafficPattern pattern, int channels);

// The expected pace-setting load under ECMP: E[max(1, share × M)] where M is the largest count among
// `bins` uplinks when `flows` flows are hashed uniformly onto groups of `bins_per_group` of them (each
// count Binomial(flows, 1/bins_per_group), M's tail by the union bound), and `share` is one flow's demand
// in units of an uplink's rate. 1 when no uplink can be over-full.
double ecmp_expected_slowdown(long flows, int bins_per_group, double bins, double share);

}  // namespace lagom::model
