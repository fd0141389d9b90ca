// NCCL 2.29 and 2.30 defaults where they differ from 2.28.9 (docs/model.md "NCCL versions"): one test per
// difference Lagom emulates, each citing the NCCL lines, and one that shows the presets (sm80, sm86, sm90),
// where none of those lines apply, priced alike under every release.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/cost_model.h"
#include "model/nccl_topology.h"
#include "model/presets.h"

using namespace lagom::model;

namespace {

// A Blackwell node (sm_arch 100; Lagom has no Blackwell preset): dgx-h100 with NVLink5 (18 links of 50
// GB/s a direction), `gpn` GPUs and as many NICs of `gbit`, PCIe `pcie_gen` for GPUs and NICs (0: derived).
ClusterSpec blackwell(double gbit = 400, int gpn = 8, int pcie_gen = 0, double nvlink_GBps = 900) {
  ClusterSpec c = cluster_preset("dgx-h100").value();
  c.name = "b200-test";
  c.gpu.name = "B200";
  c.gpu.sm_arch = 100;
  c.gpus_per_node = gpn;
  c.intra.bw_GBps = nvlink_GBps;
  c.nic.count = gpn;
  c.nic.gbit = gbit;
  c.gpu.pcie_gen = pcie_gen;
  c.nic.pcie_gen = pcie_gen;
  return c;
}

ClusterSpec at(ClusterSpec c, const std::string& version) {
  c.nccl_version = version;
  return c;
}

// NCCL's tuning-model time of a call less its latency (the time at 0 bytes): bytes over the model's
// algorithm bandwidth, times the size correction.
double bandwidth_us(const ClusterSpec& c, Collective coll, Algo a, Proto p, double bytes,
                    const CommGroup& g) {
  const CostModel cost(c);
  return cost.nccl_model_time_us(coll, a, p, bytes, g) - cost.nccl_model_time_us(coll, a, p, 0, g);
}

}  // namespace

TEST_CASE("a cluster's nccl_version picks the NCCL release whose code Lagom follows", "[model]") {
  auto release = [](const char* v) { return to_string(nccl_emulation(v).release); };
  CHECK(release("2.28.9") == "2.28.9");
  CHECK(release("2.28") == "2.28.9");
  CHECK(release("2.28.3") == "2.28.9");
  CHECK(release("2.27.3") == "2.27.7");
  CHECK(release("2.25.1") == "2.24.3");
  // 2.29.2 and 2.29.3 share their Blackwell LL128 figures and speed lists; 2.29.7 changed both.
  CHECK(release("2.29.2") == "2.29.3");
  CHECK(release("2.29.6") == "2.29.3");
  CHECK(release("2.29.7") == "2.29.7");
  CHECK(release("2.29") == "2.29.7");  // a minor alone: its newest release
  CHECK(release("2.30") == "2.30.7");
  CHECK(release("2.30.3") == "2.30.7");
  for (const char* inside : {"2.24.3", "2.27.7", "2.28.9", "2.29.3", "2.30.7"})
    CHECK(nccl_emulation(inside).warning.empty());
  const NcclEmulation newer = nccl_emulation("2.32.1");
  CHECK(to_string(newer.release) == "2.30.7");
  CHECK(newer.warning ==
        "NCCL 2.32.1 is newer than the releases Lagom emulates (2.24 to 2.30): its defaults "
        "are taken as 2.30.7's");
  CHECK(to_string(nccl_emulation("3.0").release) == "2.30.7");
  const NcclEmulation older = nccl_emulation("2.18.5");
  CHECK(to_string(older.release) == "2.24.3");
  CHECK(older.warning.find("older than the releases Lagom emulates") != std::string::npos);
}

TEST_CASE("a cluster that names no nccl_version keeps saying so, and runs 2.28.9", "[model]") {
  // The presets name none: their spec does not write one as if a file had named it.
  nlohmann::json spec = to_json(cluster_preset("dgx-h100").value());
  CHECK_FALSE(spec.contains("nccl_version"));
  ClusterSpec c = parse_cluster(spec, "c.json").value();
  CHECK(c.nccl_version.empty());
  CHECK(to_string(emulated_nccl(c)) == "2.28.9");
  CHECK(parse_cluster(to_json(c), "c.json").value() == c);
  spec["nccl_version"] = "2.30";
  c = parse_cluster(spec, "c.json").value();
  CHECK(c.nccl_version == "2.30");
  CHECK(to_json(c)["nccl_version"] == "2.30");
  CHECK(parse_cluster(to_json(c), "c.json").value() == c);
  spec["nccl_version"] = "";
  CHECK(parse_cluster(spec, "c.json").error().message ==
        "c.json: nccl_version: '' is not a version such as 2.28.9");
}

TEST_CASE("on the presets (sm80, sm86, sm90) NCCL 2.29 and 2.30 price every collective as 2.28.9",
          "[model]") {
  // Every 2.29/2.30 difference Lagom emulates is on sm100 (tests below); the presets must not move.
  const std::vector<double> sizes{1024, 65536, 1 << 20, 32 << 20, 1 << 30};
  const std::vector<Collective> collectives{
      Collective::allreduce, Collective::allgather, Collective::reducescatter, Collective::broadcast,
      Collective::reduce,    Collective::alltoall,  Collective::sendrecv};
  for (const ClusterSpec& preset : cluster_presets()) {
    REQUIRE(preset.gpu.sm_arch < 100);
    const CostModel base(at(preset, "2.28.9"));
    std::vector<CommGroup> groups{base.contiguous_group(2), base.contiguous_group(preset.gpus_per_node)};
    if (preset.nic.count > 0) {
      groups.push_back(base.contiguous_group(2 * preset.gpus_per_node));
      groups.push_back(base.contiguous_group(4 * preset.gpus_per_node));
      groups.push_back(CommGroup{4, 4});
    }
    for (const char* version : {"2.29.3", "2.29.7", "2.30", "2.32"}) {
      const CostModel other(at(preset, version));
      for (const CommGroup& g : groups) {
        const NcclComm a = nccl_comm(base.cluster(), g), b = nccl_comm(other.cluster(), g);
        CHECK((a.ring.channels == b.ring.channels && a.ring.bw_intra_GBps == b.ring.bw_intra_GBps &&
               a.ring.bw_inter_GBps == b.ring.bw_inter_GBps && a.tree.bw_intra_GBps == b.tree.bw_intra_GBps &&
               a.nvls.channels == b.nvls.channels && a.nvls.bw_intra_GBps == b.nvls.bw_intra_GBps &&
               a.nvls.bw_inter_GBps == b.nvls.bw_inter_GBps && a.ctas == b.ctas &&
               a.nvls_ctas == b.nvls_ctas));
        for (Collective c : collectives) {
          for (double bytes : sizes) {
            INFO(preset.name << " " << version << " " << to_string(c) << " " << bytes << " B on " << g.ranks
                             << " ranks, " << g.nodes << " nodes");
            CHECK(other.nccl_default(c, bytes, g) == base.nccl_default(c, bytes, g));
            for (Algo algo : k_all_algos) {
              for (Proto proto : k_all_protos) {
                if (!base.nccl_allows(c, algo, proto, g).ok()) continue;
                CHECK(other.nccl_model_time_us(c, algo, proto, bytes, g) ==
                      base.nccl_model_time_us(c, algo, proto, bytes, g));
                const CollConfig cfg{algo, proto};
                CHECK(other.collective_cost(c, bytes, g, cfg).time_us ==
                      base.collective_cost(c, bytes, g, cfg).time_us);
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("2.29 adds 45 GB/s to sm100's intra-node search speeds", "[model]") {
  // NVIDIA/nccl@v2.29.2-1:src/graph/search.cc:986 (v2.30.7-1:1063) sm100SpeedArrayIntra gains 45.0
  // (v2.28.9-1:src/graph/search.cc:986 lacks it). The NVLS search on 7 GPUs of a node with 9 NVLinks
  // (9 × 40.1 GB/s in NCCL's figures) needs 8 × speed within 360.9: 40 before, 45 from 2.29.
  const ClusterSpec c = blackwell(400, 8, 0, 450);
  const CommGroup seven{7, 1};
  const NcclComm old = nccl_comm(at(c, "2.28.9"), seven), now = nccl_comm(at(c, "2.29.3"), seven);
  CHECK(old.nvls.bw_intra_GBps == 40.0);
  CHECK(now.nvls.bw_intra_GBps == 45.0);
  CHECK(nccl_comm(at(c, "2.30.7"), seven).nvls.bw_intra_GBps == 45.0);
  CHECK(CostModel(at(c, "2.29.3"))
            .nccl_model_time_us(Collective::allreduce, Algo::nvls, Proto::simple, 1 << 30, seven) <
        CostModel(at(c, "2.28.9"))
            .nccl_model_time_us(Collective::allreduce, Algo::nvls, Proto::simple, 1 << 30, seven));
}

TEST_CASE("2.29.7 adds 80 and 2.30 adds 86 GB/s to sm100's inter-node search speeds", "[model]") {
  // NVIDIA/nccl@v2.29.7-1:src/graph/search.cc:988 sm100SpeedArrayInter {96, 80, 48, ...} (2.29.3 and
  // v2.28.9-1:987: {96, 48, ...}); v2.30.3-1:src/graph/search.cc:996 (v2.30.7-1:1064) {96, 86, 80, 48, ...}.
  // The NVLS search across nodes takes the first speed within the GPU → NIC path: 4 GPUs and NICs of 700
  // Gbit/s (87.5 GB/s) on PCIe Gen6 (96).
  const ClusterSpec c = blackwell(700, 4, 6);
  const CommGroup two_nodes{8, 2};
  CHECK(nccl_comm(at(c, "2.28.9"), two_nodes).nvls.bw_intra_GBps == 48.0);
  CHECK(nccl_comm(at(c, "2.29.3"), two_nodes).nvls.bw_intra_GBps == 48.0);
  CHECK(nccl_comm(at(c, "2.29.7"), two_nodes).nvls.bw_intra_GBps == 80.0);
  CHECK(nccl_comm(at(c, "2.30.7"), two_nodes).nvls.bw_intra_GBps == 86.0);
}

TEST_CASE("2.29 changes sm100's ring LL128 per-channel figure, in NCCL's model and Lagom's price",
          "[model]") {
  // perChMaxRingLL128Bws Blackwell: {2×36.7, 34.6, 2×36.7} (NVIDIA/nccl@v2.28.9-1:src/graph/tuning.cc:179),
  // {34.5, 34.6, 34.5} (v2.29.3-1:src/graph/tuning.cc:179), {40, 40, 40} (v2.29.7-1:180, v2.30.7-1:189).
  // One node of 8: the ring search gives 16 channels at 45 GB/s, so NCCL's ring LL128 bus bandwidth is
  // min(16 × 45 × 0.92, 16 × per-channel) = 662.4, 552 and 640 GB/s.
  const ClusterSpec c = blackwell();
  const CommGroup node{8, 1};
  auto t = [&](const char* v) {
    return bandwidth_us(at(c, v), Collective::allreduce, Algo::ring, Proto::ll128, 1 << 30, node);
  };
  REQUIRE(nccl_comm(at(c, "2.28.9"), node).ring.channels == 16);
  CHECK(t("2.29.3") == Approx(t("2.28.9") * 662.4 / 552.0).epsilon(1e-9));
  CHECK(t("2.29.7") == Approx(t("2.28.9") * 662.4 / 640.0).epsilon(1e-9));
  CHECK(t("2.30.7") == t("2.29.7"));
  // Lagom's price caps an LL128 channel's copy loop at the figure (N1): it binds where a channel copies
  // faster than 40 GB/s, and not at the default 24.
  ClusterSpec fast = c;
  fast.gpu.channel_GBps = 60;
  const CollConfig eight{Algo::ring, Proto::ll128, 8};
  auto busbw = [&](const ClusterSpec& s, const char* v) {
    return CostModel(at(s, v)).collective_cost(Collective::allreduce, 1 << 30, node, eight).busbw_GBps;
  };
  CHECK(busbw(fast, "2.29.7") < busbw(fast, "2.28.9"));
  CHECK(busbw(fast, "2.30.7") == busbw(fast, "2.29.7"));
  CHECK(busbw(c, "2.29.7") == busbw(c, "2.28.9"));
}

TEST_CASE("2.29 applies the tree size correction to NVLSTree all-reduce on sm100", "[model]") {
  // NVIDIA/nccl@v2.29.7-1:src/graph/tuning.cc:596 (v2.30.7-1:643-646): NVLS_TREE all-reduce, minCompCap
  // >= 100, x86 host: bw *= treeCorrectionFactor[proto][log2(bytes/64)], now 24 sizes long (:581-585).
  // 128 KiB is size 11, Simple's 0.5: the bandwidth term doubles. 2.28.9 applies it to tree only
  // (v2.28.9-1:src/graph/tuning.cc:592). 2.29.3 has the same topology as 2.28.9 across nodes.
  const ClusterSpec c = blackwell();
  const CommGroup two_nodes{16, 2};
  auto t = [&](const char* v, double bytes) {
    return bandwidth_us(at(c, v), Collective::allreduce, Algo::nvls_tree, Proto::simple, bytes, two_nodes);
  };
  CHECK(t("2.29.3", 131072) == Approx(2.0 * t("2.28.9", 131072)).epsilon(1e-9));
  // Size 23 (0.9, the 24th entry 2.29 added) and beyond the table (1.0).
  const double size_23 = 64.0 * (1 << 23);
  CHECK(t("2.29.3", size_23) == Approx(t("2.28.9", size_23) / 0.9).epsilon(1e-9));
  CHECK(t("2.29.3", 64.0 * (1 << 25)) == Approx(t("2.28.9", 64.0 * (1 << 25))).epsilon(1e-12));
}

TEST_CASE("2.30 raises sm100's NVLSTree figure beyond 2 nodes to 80 GB/s", "[model]") {
  // perChMaxNVLSTreeBws Blackwell N4: 43.8 (NVIDIA/nccl@v2.28.9-1:src/graph/tuning.cc:197,
  // v2.29.7-1:198), 80.0 (v2.30.3-1:src/graph/tuning.cc:205, v2.30.7-1:210). On 4 nodes with 400 Gbit/s
  // NICs NCCL's NVLSTree bandwidth per head is min(62.16 intra, 48 inter, the figure).
  const ClusterSpec c = blackwell();
  const CommGroup four_nodes{32, 4};
  auto t = [&](const char* v) {
    return bandwidth_us(at(c, v), Collective::allreduce, Algo::nvls_tree, Proto::simple, 4.0 * (1 << 30),
                        four_nodes);
  };
  CHECK(t("2.30.7") == Approx(t("2.29.7") * 43.8 / 48.0).epsilon(1e-9));
  // Two nodes read the N2 column (96), which did not change.
  const CommGroup two_nodes{16, 2};
  CHECK(bandwidth_us(at(c, "2.30.7"), Collective::allreduce, Algo::nvls_tree, Proto::simple, 4.0 * (1 << 30),
                     two_nodes) == bandwidth_us(at(c, "2.29.7"), Collective::allreduce, Algo::nvls_tree,
                                                Proto::simple, 4.0 * (1 << 30), two_nodes));
}

TEST_CASE("2.30 tunes sm100's NVLS CTAs across nodes by the NIC's bandwidth", "[model]") {
  // NVIDIA/nccl@v2.30.7-1:src/transport/nvls.cc:164-200 ncclNvlsTreeSm100Tuning, applied at :216-219;
  // before: 32 across nodes (v2.28.9-1:src/transport/nvls.cc:180-194). minNetBw is the GPU → NIC path:
  // 400 Gbit/s NICs on PCIe Gen5 give 48 GB/s, 800 Gbit/s on Gen6 96, 200 Gbit/s 25.
  const ClusterSpec c = blackwell();
  auto ctas = [](const ClusterSpec& s, const char* v, CommGroup g) {
    return nccl_comm(at(s, v), g).nvls_ctas;
  };
  CHECK(ctas(c, "2.29.7", {32, 4}) == 32);
  CHECK(ctas(c, "2.30.7", {32, 4}) == 24);  // >= 48 GB/s beyond 2 nodes (:191-192)
  CHECK(ctas(c, "2.30.7", {16, 2}) == 32);  // 2 nodes, >= 48 GB/s (:173-174)
  CHECK(ctas(c, "2.30.7", {8, 1}) == 24);   // one node: NVLS_NCHANNELS_SM100_NVL, every release
  CHECK(ctas(c, "2.28.9", {8, 1}) == 24);
  CHECK(ctas(blackwell(800, 8, 6), "2.30.7", {16, 2}) == 32);
  CHECK(ctas(blackwell(800, 8, 6), "2.30.7", {32, 4}) == 24);   // >= 96, 8 GPUs a node (:182-186)
  CHECK(ctas(blackwell(800, 16, 6), "2.30.7", {64, 4}) == 32);  // >= 96, 16 GPUs a node (:187-188)
  CHECK(ctas(blackwell(200), "2.30.7", {32, 4}) == 32);         // below 48: the default
  CHECK(ctas(cluster_preset("dgx-h100").value(), "2.30.7", {32, 4}) == 16);  // sm90: NVLS_NCHANNELS_SM90
  // The CTAs an NVLSTree call runs with, and so what it holds and costs.
  const CostModel old(at(c, "2.29.7")), now(at(c, "2.30.7"));
  const CollConfig nvls_tree{Algo::nvls_tree, Proto::simple};
  CHECK(old.collective_cost(Collective::allreduce, 1 << 30, {32, 4}, nvls_tree).config.channels == 32);
  CHECK(now.collective_cost(Collective::allreduce, 1 << 30, {32, 4}, nvls_tree).config.channels == 24);
}
