// The network above the NICs (model/fabric.h) and the NIC layouts of a node (model/nccl_topology.h
// usable_nics, nic_rates): multi-rail counts, GPUDirect RDMA, and what a leaf-spine fabric's routing does
// to a collective once its traffic leaves a leaf.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/accuracy.h"
#include "model/cost_model.h"
#include "model/fabric.h"
#include "model/nccl_topology.h"
#include "model/presets.h"

using namespace lagom::model;

namespace {

// The DGX-A100 preset (8 GPUs, 8×200G InfiniBand) with another NIC layout.
ClusterSpec a100_with(int nics, double gbit, NicKind kind = NicKind::ib) {
  ClusterSpec c = cluster_preset("dgx-a100").value();
  c.nic.count = nics;
  c.nic.gbit = gbit;
  c.nic.kind = kind;
  return c;
}

double allreduce_busbw(const ClusterSpec& cluster, int nodes, double bytes = 1 << 30) {
  const CostModel model(cluster);
  const CommGroup group{nodes * cluster.gpus_per_node, nodes};
  const CollConfig config = model.nccl_default(Collective::allreduce, bytes, group);
  return model.collective_cost(Collective::allreduce, bytes, group, config).busbw_GBps;
}

// A ring all-reduce over `nodes` nodes with 16 channels (2 per NIC of 8).
FabricLoad ring_load(const ClusterSpec& cluster, int nodes) {
  return fabric_load(cluster, CommGroup{nodes * 8, nodes}, TrafficPattern::ring, 16);
}

}  // namespace

TEST_CASE("ECMP's expected fullest uplink: exact small cases and the limits", "[fabric]") {
  // Two line-rate flows on two uplinks collide half the time: the pair then runs at half speed.
  CHECK(ecmp_expected_slowdown(2, 2, 2, 1.0) == Approx(1.5));
  // One uplink takes every flow.
  CHECK(ecmp_expected_slowdown(6, 1, 1, 0.5) == Approx(3.0));
  // Flows that together fit one uplink never slow, however they hash.
  CHECK(ecmp_expected_slowdown(4, 32, 32, 0.25) == 1.0);
  CHECK(ecmp_expected_slowdown(0, 32, 32, 1.0) == 1.0);
  // More flows on the same uplinks, or more uplinks to be unlucky on, never help.
  double previous = 1.0;
  for (const long flows : {8L, 16L, 32L, 64L, 128L}) {
    const double s = ecmp_expected_slowdown(flows, 32, 32, 0.5);
    CHECK(s >= previous);
    previous = s;
  }
  CHECK(ecmp_expected_slowdown(48, 32, 2048, 0.5) > ecmp_expected_slowdown(48, 32, 32, 0.5));
  // The same demand split into 4× the flows, each a quarter, balances better (NCCL_IB_QPS_PER_CONNECTION).
  CHECK(ecmp_expected_slowdown(4 * 48, 32, 2048, 0.125) < ecmp_expected_slowdown(48, 32, 2048, 0.5));
  // Never below the mean load: 48 half-rate flows on 8 uplinks are 3 per uplink at least on average.
  CHECK(ecmp_expected_slowdown(48, 8, 8, 0.5) >= 3.0);
}

TEST_CASE("the fabric: a communicator under one leaf or a packed ring never reaches a full uplink",
          "[fabric]") {
  ClusterSpec roce = a100_with(8, 200, NicKind::roce);
  CHECK(roce.nic.fabric.placement == Placement::scattered);  // the default: no order assumed
  roce.nic.fabric.placement = Placement::packed;
  CHECK(resolved_routing(roce) == Routing::ecmp);
  CHECK(resolved_routing(a100_with(8, 200)) == Routing::adaptive);
  // Within one leaf of 32 nodes nothing crosses the spine.
  CHECK(ring_load(roce, 32).slowdown == 1.0);
  CHECK(ring_load(roce, 32).leaves == 1);
  // Packed: a ring leaves each leaf at one node, one NIC's traffic, which any one uplink carries.
  const FabricLoad packed = ring_load(roce, 128);
  CHECK(packed.leaves == 4);
  CHECK(packed.crossing_nics == Approx(1.0));
  CHECK(packed.slowdown == 1.0);
  // SHARP's aggregation in the switches sends one stream per leaf.
  CHECK(fabric_load(roce, CommGroup{1024, 128}, TrafficPattern::in_switch, 16).slowdown == 1.0);
}

TEST_CASE(
    "the fabric: scattered nodes under ECMP pay for hash collisions and QPs per connection relieve them",
    "[fabric]") {
  ClusterSpec roce = a100_with(8, 200, NicKind::roce);
  roce.nic.fabric.placement = Placement::scattered;
  // 128 nodes on 4 leaves: 32 × 96/127 of a leaf's NICs send off it, 2 flows each onto 32 uplinks.
  const FabricLoad load = ring_load(roce, 128);
  CHECK(load.crossing_nics == Approx(32.0 * 96 / 127));
  CHECK(load.uplinks == 32);
  CHECK(load.slowdown > 2.0);
  CHECK(load.slowdown < 4.0);
  // The same placement under adaptive routing on a non-blocking fabric spreads evenly: no loss.
  ClusterSpec adaptive = roce;
  adaptive.nic.fabric.routing = Routing::adaptive;
  CHECK(ring_load(adaptive, 128).slowdown == 1.0);
  // 2:1 oversubscribed: 24 NICs of demand on 16 uplinks, evenly spread, 1.5×.
  adaptive.nic.fabric.oversubscription = 2;
  CHECK(ring_load(adaptive, 128).slowdown == Approx(32.0 * 96 / 127 / 16));
  // Oversubscribed beyond the leaf's ports: one uplink of a sixteenth of a NIC still carries the demand.
  ClusterSpec thin = adaptive;
  thin.nic.fabric.leaf_nodes = 2;
  thin.nic.fabric.oversubscription = 32;
  const FabricLoad one = ring_load(thin, 128);
  CHECK(one.uplinks == 1);
  CHECK(one.slowdown == Approx(one.crossing_nics * 16));
  // Top of rack: one leaf takes all 8 NICs of its 32 nodes, so 8 times the crossing NICs and the uplinks.
  ClusterSpec rack = roce;
  rack.nic.fabric.rail_optimized = false;
  const FabricLoad tor = ring_load(rack, 128);
  CHECK(tor.crossing_nics == Approx(8 * 32.0 * 96 / 127));
  CHECK(tor.uplinks == 256);
  CHECK(tor.flows == std::lround(8 * 32.0 * 96 / 127 * 2));
  CHECK(tor.slowdown > 1.0);
  // Four queue pairs per connection: four times the flows, a quarter each.
  ClusterSpec qps = roce;
  qps.nic.qps_per_connection = 4;
  CHECK(ring_load(qps, 128).slowdown < load.slowdown);
  CHECK(ring_load(qps, 128).slowdown >= 1.0);
  // The fewest that take 5% off: doubling once already does; none under adaptive routing, none for a
  // packed ring that never slows.
  const auto relief = qps_relief(roce, CommGroup{1024, 128}, TrafficPattern::ring, 16);
  REQUIRE(relief.has_value());
  CHECK(relief->qps == 2);
  CHECK(relief->slowdown < load.slowdown / 1.05);
  CHECK_FALSE(qps_relief(adaptive, CommGroup{1024, 128}, TrafficPattern::ring, 16).has_value());
  ClusterSpec packed_ring = roce;
  packed_ring.nic.fabric.placement = Placement::packed;
  CHECK_FALSE(qps_relief(packed_ring, CommGroup{1024, 128}, TrafficPattern::ring, 16).has_value());
  // It grows with scale: more leaves, more uplinks to be unlucky on.
  CHECK(ring_load(roce, 512).slowdown > ring_load(roce, 64).slowdown);
  // And the cost model's bus bandwidth of a 1 GiB all-reduce carries it.
  ClusterSpec packed = roce;
  packed.nic.fabric.placement = Placement::packed;
  CHECK(allreduce_busbw(roce, 128) < 0.6 * allreduce_busbw(packed, 128));
  CHECK(allreduce_busbw(roce, 16) == Approx(allreduce_busbw(packed, 16)));
}

TEST_CASE("NCCL's binary trees over 8 ranks as trees.cc builds them", "[fabric]") {
  const auto of = [](int r, int tree) {
    const TreeNeighbours t = nccl_dtree_neighbours(r, 8, tree);
    return std::vector<int>(t.ranks.begin(), t.ranks.begin() + t.count);
  };
  CHECK(of(0, 0) == std::vector<int>{4});
  CHECK(of(4, 0) == std::vector<int>{0, 2, 6});
  CHECK(of(6, 0) == std::vector<int>{4, 5, 7});
  CHECK(of(1, 0) == std::vector<int>{2});
  CHECK(of(7, 0) == std::vector<int>{6});
  // The second tree mirrors the first for an even count: rank 7 is the root, with child 3.
  CHECK(of(7, 1) == std::vector<int>{3});
  CHECK(of(3, 1) == std::vector<int>{7, 5, 1});
  // An odd count shifts by one: over 5 ranks, rank 1 is the second tree's root.
  CHECK(nccl_dtree_neighbours(1, 5, 1).count == 1);
  CHECK(double_tree_load(8).max_degree == 3);
}

TEST_CASE("the fabric: NCCL's double binary tree crosses leaves at a few edges when packed", "[fabric]") {
  ClusterSpec roce = a100_with(8, 200, NicKind::roce);
  roce.nic.fabric.placement = Placement::packed;
  const FabricLoad packed = fabric_load(roce, CommGroup{1024, 128}, TrafficPattern::tree, 16);
  CHECK(packed.crossing_nics > 0.0);
  CHECK(packed.crossing_nics < 3.0);
  roce.nic.fabric.placement = Placement::scattered;
  const FabricLoad scattered = fabric_load(roce, CommGroup{1024, 128}, TrafficPattern::tree, 16);
  CHECK(scattered.crossing_nics > 4 * packed.crossing_nics);
  CHECK(scattered.slowdown > packed.slowdown);
}

TEST_CASE("the fabric: an all-to-all sends off the leaf whatever the placement", "[fabric]") {
  ClusterSpec ib = a100_with(8, 200);
  const FabricLoad load = fabric_load(ib, CommGroup{1024, 128}, TrafficPattern::alltoall, 16);
  CHECK(load.crossing_nics == Approx(32.0 * 96 / 127));
  CHECK(load.slowdown == 1.0);  // non-blocking, adaptive
  ib.nic.fabric.oversubscription = 4;
  CHECK(fabric_load(ib, CommGroup{1024, 128}, TrafficPattern::alltoall, 16).slowdown ==
        Approx(32.0 * 96 / 127 / 8));
  // Under ECMP its many small flows balance well: close to the even spread.
  ClusterSpec roce = a100_with(8, 200, NicKind::roce);
  const double ecmp = fabric_load(roce, CommGroup{1024, 128}, TrafficPattern::alltoall, 16).slowdown;
  CHECK(ecmp >= 1.0);
  CHECK(ecmp < 1.3);
}

TEST_CASE("NIC layouts: every NIC of a multi-rail node carries traffic", "[fabric]") {
  const ClusterSpec sixteen = a100_with(16, 100);
  CHECK(usable_nics(sixteen, 8) == 16);
  CHECK(usable_nics(sixteen, 1) == 2);
  const ClusterSpec four = a100_with(4, 100);
  CHECK(usable_nics(four, 8) == 4);
  CHECK(usable_nics(four, 2) == 2);
  // 16×100G carries what 8×200G does; 8×100G half; 4×100G a quarter (a 2-node ring, 1 GiB).
  const auto ring2 = [](const ClusterSpec& c) {
    const CostModel model(c);
    CollConfig config = model.nccl_default(Collective::allreduce, 1 << 30, CommGroup{16, 2});
    config.algo = Algo::ring;
    return model.collective_cost(Collective::allreduce, 1 << 30, CommGroup{16, 2}, config).busbw_GBps;
  };
  const double b200 = ring2(a100_with(8, 200));
  CHECK(ring2(sixteen) == Approx(b200).epsilon(0.05));
  CHECK(ring2(a100_with(8, 100)) == Approx(b200 / 2).epsilon(0.1));
  CHECK(ring2(four) == Approx(b200 / 4).epsilon(0.1));
}

TEST_CASE("without GPUDirect RDMA every byte is staged in host memory", "[fabric]") {
  ClusterSpec staged = a100_with(8, 200);
  staged.nic.gpudirect = false;
  const NicRates direct = nic_rates(a100_with(8, 200), CommGroup{16, 2}, 0.79);
  const NicRates host = nic_rates(staged, CommGroup{16, 2}, 0.79);
  // DRAM moves each byte twice each way: 409.6 × 0.8 / 4 = 81.9 GB/s for the node's NICs.
  CHECK(host.node_GBps == Approx(409.6 * k_host_memory_efficiency / 4));
  CHECK(host.node_GBps < 0.5 * direct.node_GBps);
  // One NIC alone: its PCIe x16 link crossed twice (Gen4: 31.5 × 0.79 / 2).
  const NicRates one = nic_rates(staged, CommGroup{2, 2}, 0.79);
  CHECK(one.per_nic_GBps == Approx(pcie_x16_GBps(4) * 0.79 / 2));
  CHECK(allreduce_busbw(staged, 4) < 0.6 * allreduce_busbw(a100_with(8, 200), 4));
}

TEST_CASE("the fabric's fields read and write back and are checked", "[fabric]") {
  ClusterSpec c = a100_with(8, 400, NicKind::roce);
  c.nic.fabric = NetworkFabric{Routing::ecmp, 16, 2.0, false, Placement::packed};
  c.nic.qps_per_connection = 4;
  c.nic.gpudirect = false;
  c.nic.host_memory_GBps = 300;
  const nlohmann::json j = to_json(c);
  CHECK(j["nic"]["fabric"]["routing"] == "ecmp");
  const auto back = parse_cluster(j, "c.json");
  REQUIRE(back.ok());
  CHECK(back.value() == c);
  // Defaults are not written (documents embedding a cluster keep their form).
  CHECK_FALSE(to_json(a100_with(8, 200))["nic"].contains("fabric"));
  CHECK_FALSE(to_json(a100_with(8, 200))["nic"].contains("gpudirect"));
  for (const auto& [field, value] : {std::pair<std::string, nlohmann::json>{"oversubscription", 0.5},
                                     {"routing", "random"},
                                     {"placement", "packed-ish"},
                                     {"leaf_nodes", 0}}) {
    nlohmann::json bad = j;
    bad["nic"]["fabric"][field] = value;
    const auto parsed = parse_cluster(bad, "c.json");
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message.find("nic.fabric." + field) != std::string::npos);
  }
  nlohmann::json bad = j;
  bad["nic"]["qps_per_connection"] = 0;
  CHECK_FALSE(parse_cluster(bad, "c.json").ok());
}

TEST_CASE("a multi-node scenario on a network no validated run had names it in its interval", "[fabric]") {
  // vTrain's multi-node regime: A100, the eager Megatron-DeepSpeed stack, tensor parallel.
  Strategy s;
  s.gpus = 64;
  s.tp = 8;
  s.stack = Stack::megatron_deepspeed;
  const WorkloadSpec w = workload_preset("gpt2").value();
  CHECK(regime_of(a100_with(8, 200), s, w).network.empty());
  ClusterSpec roce = a100_with(8, 200, NicKind::roce);
  roce.nic.gpudirect = false;
  const RegimeKey key = regime_of(roce, s, w);
  CHECK(key.network == "roce, ECMP routing, no GPUDirect RDMA");
  const PredictionInterval interval = interval_for(key, 64);
  REQUIRE(interval.regime != nullptr);
  CHECK(interval.differs.back() == "network (roce, ECMP routing, no GPUDirect RDMA)");
  // A single node's interval does not depend on the network.
  s.gpus = 8;
  CHECK(regime_of(roce, s, w).network.empty());
}
