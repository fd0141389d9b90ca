#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/presets.h"

using namespace lagom::model;

namespace {

CostModel model_of(const std::string& name) {
  return CostModel(cluster_preset(name).value());
}

struct LutRow {
  double bytes;
  double busbw_GBps;
};

// vTrain's A100 all-reduce tables (tests/data/vtrain/trace-a100, MIT, see PROVENANCE.md): the mean of the
// two measured busbw columns.
std::vector<LutRow> read_lut(int gpus) {
  std::ifstream in(std::string(LAGOM_TEST_DATA_DIR) + "/vtrain/trace-a100/AR_GPU" + std::to_string(gpus) +
                   "_1M_1024M_LUT");
  REQUIRE(in.good());
  std::vector<LutRow> rows;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (cells.size() < 7) continue;
    rows.push_back({std::stod(cells[0]), (std::stod(cells[4]) + std::stod(cells[6])) / 2.0});
  }
  return rows;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

TEST_CASE("predicted all-reduce busbw on dgx-a100 matches vTrain's A100 tables", "[model]") {
  const CostModel model = model_of("dgx-a100");
  std::vector<double> all_errors, pow2_errors;
  double worst_large = 0;
  for (int gpus = 2; gpus <= 8; ++gpus) {
    for (const LutRow& row : read_lut(gpus)) {
      const CommGroup group{gpus, 1};
      const CollConfig config = model.nccl_default(Collective::allreduce, row.bytes, group);
      const CollectiveCost cost = model.collective_cost(Collective::allreduce, row.bytes, group, config);
      const double error = std::abs(cost.busbw_GBps - row.busbw_GBps) / row.busbw_GBps;
      all_errors.push_back(error);
      const auto b = static_cast<long long>(row.bytes);
      if ((b & (b - 1)) == 0) pow2_errors.push_back(error);
      if (row.bytes >= 8.0 * 1024 * 1024) worst_large = std::max(worst_large, error);
    }
  }
  // Acceptance (issue 3): median ≤ 15% over all sizes; no size ≥ 8 MiB off by more than 40%.
  // Achieved (docs/model.md): median 5.1% over all 7168 rows, 7.0% over the 77 power-of-two sizes,
  // worst 20.2% at ≥ 8 MiB (2 GPUs, whose measured asymptote is 205 GB/s against 234 on 5–8 GPUs).
  INFO("median all " << median(all_errors) << " pow2 " << median(pow2_errors) << " worst>=8MiB "
                     << worst_large);
  CHECK(all_errors.size() == 7 * 1024);
  CHECK(median(all_errors) <= 0.15);
  CHECK(median(pow2_errors) <= 0.15);
  CHECK(worst_large <= 0.40);
  CHECK(median(all_errors) == Approx(0.051).margin(0.01));
}

TEST_CASE("NCCL's default on one A100 node is ring, LL for small and Simple for large all-reduces",
          "[model]") {
  const CostModel model = model_of("dgx-a100");
  const CommGroup node{8, 1};
  const CollConfig small = model.nccl_default(Collective::allreduce, 64 * 1024, node);
  CHECK(small.algo == Algo::ring);
  CHECK(small.proto == Proto::ll);
  const CollConfig large = model.nccl_default(Collective::allreduce, 1 << 30, node);
  CHECK(large.algo == Algo::ring);
  CHECK(large.proto == Proto::simple);
  CHECK(large.channels == 24);
  CHECK(large.threads == 512);
  CHECK(large.chunk_bytes == 2 * 1024 * 1024);  // BUFFSIZE / 2
}

TEST_CASE("ring simple all-reduce on 8 A100 prices NCCL's latency plus bytes over the link limit",
          "[model]") {
  const CostModel model = model_of("dgx-a100");
  const CollConfig ring{Algo::ring, Proto::simple, 24, 512, 2 << 20};
  const CollectiveCost cost = model.collective_cost(Collective::allreduce, 1 << 30, CommGroup{8, 1}, ring);
  // latency = launch 30 + base 8.4 + 14 steps × 3.4 µs = 86 µs; per channel 1 GiB / 8 / 24 = 5.59 MB per
  // step, 2.67 chunks of 2 MiB → 1.67 × 3.4 µs extra per 233 µs: 24·24·0.976 = 562 GB/s > link 300·0.78 =
  // 234.
  CHECK(cost.latency_us == Approx(30 + 8.4 + 14 * 3.4));
  CHECK(cost.link_GBps == Approx(234.0));
  const double expected_us = 86.0 + (1 << 30) * 1.75 / (234.0 * 1e3);
  CHECK(cost.time_us == Approx(expected_us).epsilon(1e-9));
  CHECK(cost.busbw_GBps == Approx((1 << 30) / (expected_us * 1e3) * 1.75));
}

TEST_CASE("a group beyond one node uses the cluster's network", "[model]") {
  const CostModel model = model_of("dgx-a100");
  const CollConfig ring{Algo::ring, Proto::simple, 24, 512, 2 << 20};
  const auto one_node = model.collective_cost(Collective::allreduce, 1 << 30, CommGroup{8, 1}, ring);
  const auto two_nodes = model.collective_cost(Collective::allreduce, 1 << 30, CommGroup{16, 2}, ring);
  // 8 NICs × 200 Gbit/s × 0.86 = 172 GB/s per node < NVLink's 234.
  CHECK(two_nodes.link_GBps == Approx(172.0));
  CHECK(two_nodes.busbw_GBps < one_node.busbw_GBps);
  const CostModel eth = model_of("a100-eth25");
  const auto slow = eth.collective_cost(Collective::allreduce, 1 << 30, CommGroup{16, 2}, ring);
  CHECK(slow.link_GBps == Approx(25.0 / 8.0 * 0.8));
}

TEST_CASE("NCCL allows only what it implements on each topology", "[model]") {
  const CostModel a40 = model_of("a40-pcie-ib100");
  const CostModel h100 = model_of("dgx-h100");
  const CommGroup node{8, 1};
  CHECK(a40.nccl_allows(Collective::allreduce, Algo::ring, Proto::simple, node).ok());
  const auto nvls = a40.nccl_allows(Collective::allreduce, Algo::nvls, Proto::simple, node);
  REQUIRE_FALSE(nvls.ok());
  CHECK(nvls.error().message ==
        "allreduce nvls/simple: needs NVLink SHARP (sm90+ GPUs on NVSwitch); a40-pcie-ib100 has A40-48GB on "
        "pcie");
  CHECK_FALSE(a40.nccl_allows(Collective::allreduce, Algo::ring, Proto::ll128, node).ok());
  CHECK(h100.nccl_allows(Collective::allreduce, Algo::nvls, Proto::simple, node).ok());
  CHECK(h100.nccl_allows(Collective::allgather, Algo::nvls, Proto::simple, node).ok());
  CHECK_FALSE(h100.nccl_allows(Collective::allgather, Algo::tree, Proto::simple, node).ok());
  CHECK_FALSE(h100.nccl_allows(Collective::allreduce, Algo::nvls_tree, Proto::simple, node).ok());
  CHECK(h100.nccl_allows(Collective::allreduce, Algo::nvls_tree, Proto::simple, CommGroup{16, 2}).ok());
  CHECK(h100.nccl_allows(Collective::allgather, Algo::pat, Proto::simple, CommGroup{4, 4}).ok());
  CHECK_FALSE(h100.nccl_allows(Collective::allgather, Algo::pat, Proto::simple, CommGroup{16, 2}).ok());
  CHECK_FALSE(
      h100.nccl_allows(Collective::allreduce, Algo::collnet_direct, Proto::simple, CommGroup{16, 2}).ok());
  CHECK(h100.nccl_allows(Collective::alltoall, Algo::p2p, Proto::simple, node).ok());
  CHECK_FALSE(h100.nccl_allows(Collective::alltoall, Algo::ring, Proto::simple, node).ok());
}

TEST_CASE("NVLS all-reduce on 8 H100 is faster than ring for large messages", "[model]") {
  const CostModel model = model_of("dgx-h100");
  const CommGroup node{8, 1};
  const auto ring =
      model.collective_cost(Collective::allreduce, 1 << 30, node, CollConfig{Algo::ring, Proto::simple});
  const auto nvls =
      model.collective_cost(Collective::allreduce, 1 << 30, node, CollConfig{Algo::nvls, Proto::simple});
  // nccl-tests#212: ~370 GB/s ring, ~480 NVLS busbw on 8×H100.
  CHECK(ring.busbw_GBps == Approx(370).epsilon(0.05));
  CHECK(nvls.busbw_GBps == Approx(480).epsilon(0.10));
  CHECK(nvls.config.channels == 16);
}

TEST_CASE("busbw factors follow nccl-tests", "[model]") {
  CHECK(busbw_factor(Collective::allreduce, 8) == Approx(1.75));
  CHECK(busbw_factor(Collective::allgather, 8) == Approx(0.875));
  CHECK(busbw_factor(Collective::alltoall, 4) == Approx(0.75));
  CHECK(busbw_factor(Collective::broadcast, 8) == 1.0);
}

TEST_CASE("knob scopes follow what NCCL lets a deployment set", "[model]") {
  CHECK(knob_scope(Runtime::nccl, Collective::allreduce, Knob::algo) == KnobScope::per_call);
  CHECK(knob_scope(Runtime::nccl, Collective::allgather, Knob::channels) == KnobScope::per_call);
  CHECK(knob_scope(Runtime::nccl, Collective::alltoall, Knob::algo) == KnobScope::not_settable);
  CHECK(knob_scope(Runtime::nccl, Collective::alltoall, Knob::channels) == KnobScope::per_communicator);
  CHECK(knob_scope(Runtime::nccl, Collective::allreduce, Knob::comm_ctas) == KnobScope::per_communicator);
  CHECK(knob_scope(Runtime::nccl, Collective::allreduce, Knob::threads) == KnobScope::per_process);
  CHECK(knob_scope(Runtime::nccl, Collective::reducescatter, Knob::chunk) == KnobScope::per_process);
  CHECK(knob_scope(Runtime::nccl_extended, Collective::alltoall, Knob::chunk) == KnobScope::per_call);
  CHECK(default_chunk_bytes(Proto::simple, 8 << 20) == 4 << 20);
}

TEST_CASE("a calibrated collective fit replaces latency and bandwidth", "[model]") {
  Calibration cal;
  CollectiveFit fit;
  fit.collective = "allreduce";
  fit.ranks = 8;
  fit.nodes = 1;
  fit.latency_us = 50;
  fit.bus_bw_GBps = 100;
  cal.collectives.push_back(fit);
  const CostModel model(cluster_preset("dgx-a100").value(), cal);
  const CommGroup node{8, 1};
  const auto cost =
      model.collective_cost(Collective::allreduce, 1 << 30, node, CollConfig{Algo::ring, Proto::simple});
  CHECK(cost.time_us == Approx(50 + (1 << 30) * 1.75 / (100 * 1e3)));
}

TEST_CASE("an invalid collective configuration is refused with the reason", "[model]") {
  const CostModel model = model_of("dgx-a100");
  const CommGroup node{8, 1};
  CHECK(model.validate_config(Collective::allreduce, -1, node, CollConfig{}).error().message ==
        "bytes: must be a non-negative byte count");
  CHECK(model.validate_config(Collective::allreduce, 1024, node, CollConfig{Algo::ring, Proto::simple, 1000})
            .error()
            .message == "channels: 1000 is not within 1..64 on dgx-a100");
  CHECK(
      model.validate_config(Collective::allreduce, 1024, node, CollConfig{Algo::ring, Proto::simple, 8, 100})
          .error()
          .message == "threads: 100 is not a multiple of 32 within 64..640");
}
