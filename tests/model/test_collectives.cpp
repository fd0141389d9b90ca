#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/cost_model.h"
#include "model/nccl_topology.h"
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

// The data rows of a comma-separated file under tests/data (the header line skipped) with at least
// `min_cells` cells each (the tables have no quoted fields).
std::vector<std::vector<std::string>> csv_rows(const std::string& relative_path, std::size_t min_cells) {
  std::ifstream in(std::string(LAGOM_TEST_DATA_DIR) + relative_path);
  REQUIRE(in.good());
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (cells.size() >= min_cells) rows.push_back(std::move(cells));
  }
  return rows;
}

// vTrain's A100 all-reduce tables (tests/data/vtrain/trace-a100, MIT, see PROVENANCE.md): the mean of the
// two measured busbw columns.
std::vector<LutRow> read_lut(int gpus) {
  std::vector<LutRow> rows;
  for (const auto& cells :
       csv_rows("/vtrain/trace-a100/AR_GPU" + std::to_string(gpus) + "_1M_1024M_LUT", 7)) {
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

namespace {
ClusterSpec vtrain_cluster() {
  std::ifstream in(std::string(LAGOM_TEST_DATA_DIR) + "/vtrain/cluster-vtrain-a100.json");
  REQUIRE(in.good());
  return parse_cluster(nlohmann::json::parse(in), "cluster-vtrain-a100.json").value();
}
}  // namespace

TEST_CASE("predicted all-reduce busbw on vTrain's A100 cluster matches vTrain's tables", "[model]") {
  // The tables were measured on vTrain's cluster through torch.distributed in eager Megatron-DeepSpeed:
  // that stack's 30 µs per call (model::stack_costs); the cluster file carries the machine's 4 µs floor,
  // dgx-a100's, fitted on the newer nccl-tests runs (tests/data/nccl-tests).
  const CostModel model(vtrain_cluster(), std::nullopt, Stack::megatron_deepspeed);
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
  // Acceptance (issue 3): median ≤ 15% over all sizes; no size ≥ 8 MiB off by more than 40%; issue 15:
  // the median stays ≤ 6%. Achieved (docs/model.md): see the INFO line.
  INFO("median all " << median(all_errors) << " pow2 " << median(pow2_errors) << " worst>=8MiB "
                     << worst_large);
  CHECK(all_errors.size() == 7 * 1024);
  CHECK(median(all_errors) <= 0.06);
  CHECK(median(pow2_errors) <= 0.15);
  CHECK(worst_large <= 0.40);
  // Issue 26: the ring's pipeline fill took these from 5.4% and 25.3% to 2.5% and 17.0% (the tables did not
  // set it); held so that a later change cannot give it back unseen.
  CHECK(median(all_errors) <= 0.035);
  CHECK(worst_large <= 0.20);
}

namespace {

// tests/data/nccl-tests/allreduce.csv (README.md there): published all_reduce_perf rows.
struct NcclTestsRow {
  std::string name;
  int nodes = 1, gpus_per_node = 8;
  std::string nccl, algo, env;
  double bytes = 0, time_us = 0, busbw_GBps = 0;
};

std::vector<NcclTestsRow> read_nccl_tests() {
  std::vector<NcclTestsRow> rows;
  for (const auto& cells : csv_rows("/nccl-tests/allreduce.csv", 10)) {
    rows.push_back({cells[0], std::stoi(cells[2]), std::stoi(cells[3]), cells[4], cells[5], cells[6],
                    std::stod(cells[7]), std::stod(cells[8]), std::stod(cells[9])});
  }
  return rows;
}

// The cluster of one case as its source describes it: the preset, its NCCL version when stated, one
// process per GPU unless the run drove 8 GPUs from one process, NCCL_MIN_CTAS as the communicator's CTAs.
ClusterSpec cluster_of(const NcclTestsRow& row, const ClusterSpec& h100, const ClusterSpec& a100) {
  ClusterSpec c = row.name.rfind("h100", 0) == 0 ? h100 : a100;
  if (row.nccl != "unstated") c.nccl_version = row.nccl;
  if (row.name.find("-g8") != std::string::npos) c.gpus_per_process = 8;
  if (row.env.find("NCCL_MIN_CTAS=24") != std::string::npos) c.nccl_channels = 24;
  return c;
}

// Lagom's predicted busbw for a row: NCCL's default, or NCCL's best ring protocol under NCCL_ALGO=Ring.
double predicted_busbw(const NcclTestsRow& row, const CostModel& model) {
  const CommGroup group{row.nodes * row.gpus_per_node, row.nodes};
  CollConfig config = model.nccl_default(Collective::allreduce, row.bytes, group);
  if (row.algo == "ring") {
    double best = 1e300;
    for (Proto p : k_all_protos) {
      const double t = model.nccl_model_time_us(Collective::allreduce, Algo::ring, p, row.bytes, group);
      if (t < best) {
        best = t;
        config = CollConfig{Algo::ring, p};
      }
    }
    config = model.resolve_defaults(Collective::allreduce, row.bytes, group, config);
  }
  return model.collective_cost(Collective::allreduce, row.bytes, group, config).busbw_GBps;
}

std::map<std::string, std::vector<double>> nccl_tests_errors(const ClusterSpec& h100, const ClusterSpec& a100,
                                                             bool log = false) {
  std::map<std::string, std::vector<double>> errors;
  for (const NcclTestsRow& row : read_nccl_tests()) {
    const CostModel model(cluster_of(row, h100, a100));
    const double predicted = predicted_busbw(row, model);
    const double error = (predicted - row.busbw_GBps) / row.busbw_GBps;
    if (log) {
      const CommGroup group{row.nodes * row.gpus_per_node, row.nodes};
      CollConfig c = model.nccl_default(Collective::allreduce, row.bytes, group);
      if (row.algo == "ring") {
        double best = 1e300;
        for (Proto p : k_all_protos) {
          const double t = model.nccl_model_time_us(Collective::allreduce, Algo::ring, p, row.bytes, group);
          if (t < best) {
            best = t;
            c = model.resolve_defaults(Collective::allreduce, row.bytes, group, CollConfig{Algo::ring, p});
          }
        }
      }
      UNSCOPED_INFO(row.name << " " << row.bytes << " measured " << row.busbw_GBps << " predicted "
                             << predicted << " (" << to_string(c.algo) << "/" << to_string(c.proto) << " "
                             << c.channels << " ch) error " << error * 100 << "%");
    }
    errors[row.name].push_back(error);
  }
  return errors;
}

std::vector<double> absolute(const std::map<std::string, std::vector<double>>& errors,
                             const std::string& prefix) {
  std::vector<double> out;
  for (const auto& [name, values] : errors) {
    if (name.rfind(prefix, 0) != 0) continue;
    for (double e : values) out.push_back(std::abs(e));
  }
  return out;
}

}  // namespace

TEST_CASE("predicted all-reduce busbw matches the published nccl-tests runs on A100 and H100", "[model]") {
  const auto errors =
      nccl_tests_errors(cluster_preset("dgx-h100").value(), cluster_preset("dgx-a100").value(), true);
  const auto h100 = absolute(errors, "h100");
  const auto a100 = absolute(errors, "a100");
  REQUIRE(h100.size() == 34);
  REQUIRE(a100.size() == 14);
  INFO("H100 median " << median(h100) << " max " << *std::max_element(h100.begin(), h100.end())
                      << "; A100 median " << median(a100) << " max "
                      << *std::max_element(a100.begin(), a100.end()));
  // Acceptance (issue 15): median ≤ 10% over the H100 rows, ≤ 8% over the A100 rows, no point off by
  // more than 30%.
  CHECK(median(h100) <= 0.10);
  CHECK(median(a100) <= 0.08);
  CHECK(median(a100) <= 0.05);  // issue 26: 6.2% -> 3.9% with the ring's pipeline fill
  CHECK(*std::max_element(h100.begin(), h100.end()) <= 0.30);
  CHECK(*std::max_element(a100.begin(), a100.end()) <= 0.30);
}

TEST_CASE("the fitted network constants are the H100 data's best and hold out of sample", "[model]") {
  // Three physical constants are fitted on the H100 rows: the network start-up of a call per channel
  // (nic.call_us_per_channel), one channel's connection rate (gpu.net_channel_GBps) and the NDR NIC
  // efficiency (up to the 0.98 the NIC-bound ring measures directly), with NVLSTree's pipeline fill of
  // 1.5 chunk times (model/cost_collectives.cpp; 1.25-2.0 scanned with this grid, docs/model.md). The
  // preset's values must be the grid's best over all cases, and leaving one case out at a time (fit on
  // the other three, predict it) must stay within the acceptance bounds.
  const ClusterSpec h100 = cluster_preset("dgx-h100").value();
  const ClusterSpec a100 = cluster_preset("dgx-a100").value();
  const std::vector<double> calls{1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0};
  const std::vector<double> rates{20.0, 21.5, 22.9, 24.5, 26.0};
  const std::vector<double> efficiencies{0.94, 0.96, 0.98};
  const std::vector<std::string> cases{"h100-2node-a", "h100-2node-b", "h100-2node-b-ring", "h100-4node-a"};
  struct Point {
    double call, rate, eff;
    std::map<std::string, std::vector<double>> errors;
  };
  std::vector<Point> grid;
  for (double call : calls) {
    for (double rate : rates) {
      for (double eff : efficiencies) {
        ClusterSpec c = h100;
        c.nic.call_us_per_channel = call;
        c.gpu.net_channel_GBps = rate;
        c.nic.efficiency = eff;
        grid.push_back({call, rate, eff, nccl_tests_errors(c, a100)});
      }
    }
  }
  // Objective: mean |log(predicted / measured)| over the cases given.
  auto loss = [](const Point& p, const std::vector<std::string>& which) {
    double sum = 0;
    int count = 0;
    for (const auto& name : which) {
      for (double e : p.errors.at(name)) {
        sum += std::abs(std::log1p(e));
        ++count;
      }
    }
    return sum / count;
  };
  // The highest predicted / measured ratio over the cases given.
  auto highest_of = [](const Point& p, const std::vector<std::string>& which) {
    double highest = 0;
    for (const auto& name : which) {
      for (double e : p.errors.at(name)) highest = std::max(highest, 1.0 + e);
    }
    return highest;
  };
  // The best fit that is not optimistic: the least loss among the constants that predict no case's point
  // above 1.15x its measured rate (issue 26: a planner pays for optimism), else the least loss.
  auto best_for = [&](const std::vector<std::string>& which) {
    auto better = [&](const Point& a, const Point& b) {
      const bool a_ok = highest_of(a, which) <= 1.15, b_ok = highest_of(b, which) <= 1.15;
      if (a_ok != b_ok) return a_ok;
      return loss(a, which) < loss(b, which);
    };
    return *std::min_element(grid.begin(), grid.end(), better);
  };
  const Point all = best_for(cases);
  UNSCOPED_INFO("all cases: call " << all.call << " us, channel " << all.rate << " GB/s, NIC " << all.eff
                                   << ", loss " << loss(all, cases));
  CHECK(all.call == h100.nic.call_us_per_channel);
  CHECK(all.rate == h100.gpu.net_channel_GBps);
  CHECK(all.eff == h100.nic.efficiency);
  std::vector<double> held_out;
  for (const auto& out : cases) {
    std::vector<std::string> train;
    for (const auto& name : cases) {
      if (name != out) train.push_back(name);
    }
    const Point fit = best_for(train);
    UNSCOPED_INFO("without " << out << ": call " << fit.call << " us, channel " << fit.rate << " GB/s, NIC "
                             << fit.eff);
    for (double e : fit.errors.at(out)) held_out.push_back(std::abs(e));
  }
  // Measured (docs/model.md): 5.3% median, 27.0% worst out of sample (in sample: 1.9%, 27.0%; before
  // NVLSTree's pipeline fill 11.4%, 31.7%).
  INFO("cross-validated H100 median " << median(held_out) << " max "
                                      << *std::max_element(held_out.begin(), held_out.end()));
  CHECK(median(held_out) <= 0.07);
  // Leaving one cluster out: h100-2node-b and its forced-ring run are one cluster, so both leave together
  // (issue 26 asks for this split: a case left out whose twin stays in sample flatters the fit). The A100
  // rows use none of the fitted constants: they are out of sample for every fit. Also the largest ratio
  // predicted / measured over every point, fitted with all cases: a prediction above 1.15× is optimism a
  // planner pays for.
  const std::vector<std::vector<std::string>> clusters{
      {"h100-2node-a"}, {"h100-2node-b", "h100-2node-b-ring"}, {"h100-4node-a"}};
  std::vector<double> cluster_out;
  for (const auto& out : clusters) {
    std::vector<std::string> train;
    for (const auto& name : cases) {
      if (std::find(out.begin(), out.end(), name) == out.end()) train.push_back(name);
    }
    const Point fit = best_for(train);
    for (const auto& name : out) {
      for (double e : fit.errors.at(name)) cluster_out.push_back(std::abs(e));
    }
  }
  for (double e : absolute(all.errors, "a100")) cluster_out.push_back(e);
  const double highest = highest_of(all, cases);
  double highest_a100 = 0;
  for (double e : all.errors.at("a100-node-g8")) highest_a100 = std::max(highest_a100, 1.0 + e);
  for (double e : all.errors.at("a100-node-mpi")) highest_a100 = std::max(highest_a100, 1.0 + e);
  INFO("leave-one-cluster-out median "
       << median(cluster_out) << " max " << *std::max_element(cluster_out.begin(), cluster_out.end())
       << "; highest predicted/measured H100 " << highest << ", A100 " << highest_a100);
  // Measured: 5.3% median, 24.3% worst leaving one cluster out (issue 26's target: median <= 10%; 9.4%
  // before the ring's fill, 8.9% before NVLSTree's). The highest H100 ratio is 1.144 (the forced ring at
  // 4 MiB); NVLSTree's mid-size calls, 1.275 before its pipeline fill, are at most 1.11. On A100 the highest
  // is 1.19: 16 MiB LL128 on the node driven by one process for 8 GPUs (nccl-tests -g 8; one process per
  // GPU, as frameworks run, is 1.12 at that size), whose mid-size slowdown Lagom does not model.
  CHECK(median(cluster_out) <= 0.10);
  CHECK(highest <= 1.15);
  CHECK(highest_a100 <= 1.20);
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

TEST_CASE(
    "ring simple all-reduce on 8 A100 prices NCCL's latency, bytes over the link limit and one chunk's fill",
    "[model]") {
  const CostModel model = model_of("dgx-a100");
  const CollConfig ring{Algo::ring, Proto::simple, 24, 512, 2 << 20};
  const CollectiveCost cost = model.collective_cost(Collective::allreduce, 1 << 30, CommGroup{8, 1}, ring);
  // latency = launch 4 + base 8.4 + 14 steps × 3.4 µs = 60 µs; per channel 1 GiB / 8 / 24 = 5.59 MB per
  // step, 2.67 chunks of 2 MiB → 1.67 × 3.4 µs extra per 233 µs: 24·24·0.976 = 562 GB/s > link 300·0.78 =
  // 234. The ring's pipeline fill: one chunk (2 MiB, below the step's 5.59 MB) at a channel's share of
  // that rate, 234 / 24 = 9.75 GB/s: 215 µs.
  CHECK(cost.latency_us == Approx(4 + 8.4 + 14 * 3.4));
  CHECK(cost.link_GBps == Approx(234.0));
  const double fill_us = (2 << 20) / (234.0 / 24 * 1e3);
  const double expected_us = 60.0 + (1 << 30) * 1.75 / (234.0 * 1e3) + fill_us;
  CHECK(cost.time_us == Approx(expected_us).epsilon(1e-9));
  CHECK(cost.busbw_GBps == Approx((1 << 30) / (expected_us * 1e3) * 1.75));
}

TEST_CASE("the ring's fill is one chunk where a chunk is forwarded and none on a one-step ring", "[model]") {
  // 1 GiB all-gathers on one dgx-a100 node, ring Simple, 24 channels, link-bound at 300 × 0.78 = 234 GB/s.
  const CostModel model = model_of("dgx-a100");
  const CollConfig ring{Algo::ring, Proto::simple, 24, 512, 2 << 20};
  const double bytes = 1 << 30;
  // 2 ranks: one step, nothing forwarded: latency + bytes × 1/2 over the link.
  const CollectiveCost two = model.collective_cost(Collective::allgather, bytes, CommGroup{2, 1}, ring);
  CHECK(two.link_GBps == Approx(234.0));
  CHECK(two.time_us - two.latency_us == Approx(bytes * 0.5 / (234.0 * 1e3)).epsilon(1e-9));
  // 4 ranks: three steps; the step's 1 GiB / 4 / 24 = 11.2 MB per channel exceeds the 2 MiB chunk, so the
  // fill is one 2 MiB chunk at 234 / 24 GB/s.
  const CollectiveCost four = model.collective_cost(Collective::allgather, bytes, CommGroup{4, 1}, ring);
  const double fill_us = (2 << 20) / (234.0 / 24 * 1e3);
  CHECK(four.time_us - four.latency_us == Approx(bytes * 0.75 / (234.0 * 1e3) + fill_us).epsilon(1e-9));
  // A smaller chunk shortens the fill (here link-bound, so its extra synchronisations cost nothing).
  CollConfig small = ring;
  small.chunk_bytes = 256 << 10;
  const CollectiveCost shorter = model.collective_cost(Collective::allgather, bytes, CommGroup{4, 1}, small);
  CHECK(shorter.time_us < four.time_us);
  // A step smaller than the chunk fills with the step: 4 MiB over 4 ranks and 24 channels, 43,690 B.
  const double tiny = 4 << 20;
  const CollectiveCost step = model.collective_cost(Collective::allgather, tiny, CommGroup{4, 1}, ring);
  const CollectiveCost step_small =
      model.collective_cost(Collective::allgather, tiny, CommGroup{4, 1}, small);
  CHECK(step.time_us == Approx(step_small.time_us).epsilon(1e-9));
}

TEST_CASE("NVLSTree's fill is 1.5 of NCCL's chunks (halved below 64 and 8 MiB) or of the slice when smaller",
          "[model]") {
  // An NVLSTree call costs latency + B + 1.5 chunk times, B = bytes x factor / bus and a chunk time one
  // chunk (or the slice, bytes / slices, when smaller) at bus / factor / slices: time - latency =
  // B x (1 + 1.5 x slices x min(chunk, slice) / bytes). On 2 dgx-h100 nodes (NCCL 2.28) the slices are
  // 16 CTAs x 8 NVLS heads = 128 and NCCL's chunk (enqueue.cc) 128 KiB from 64 MiB, 64 KiB from 8 MiB,
  // 32 KiB below. The bus rate that formula implies is continuous across NCCL's chunk steps only when
  // the step is where NCCL puts it (a 2x jump of the time's excess otherwise).
  const CostModel model = model_of("dgx-h100");
  const CollConfig tree{Algo::nvls_tree, Proto::simple};
  auto implied_bus = [&](const CommGroup& g, double bytes, double chunk) {
    const CollectiveCost cost = model.collective_cost(Collective::allreduce, bytes, g, tree);
    REQUIRE(cost.config.channels == 16);
    const double factor = 2.0 * (g.ranks - 1) / g.ranks;
    const double slices = 16.0 * 8;
    const double excess = 1 + 1.5 * slices * std::min(chunk, bytes / slices) / bytes;
    return bytes * factor * excess / (1e3 * (cost.time_us - cost.latency_us));
  };
  const CommGroup two{16, 2};
  const double mib = 1 << 20;
  CHECK(implied_bus(two, 64 * mib - 4096, 65536) == Approx(implied_bus(two, 64 * mib, 131072)).epsilon(1e-3));
  CHECK(implied_bus(two, 8 * mib - 4096, 32768) == Approx(implied_bus(two, 8 * mib, 65536)).epsilon(1e-3));
  // Below 4 MiB a slice (bytes / 128) is smaller than the 32 KiB chunk: the fill is 1.5 slice times.
  CHECK(implied_bus(two, 1 * mib, 32768) == Approx(implied_bus(two, 1 * mib + 4096, 32768)).epsilon(1e-3));
  // From 4 nodes NCCL caps the tree's chunk at 64 KiB (NVLSTREE_MAX_CHUNKSIZE's default): no step at
  // 64 MiB.
  const CommGroup four{32, 4};
  CHECK(implied_bus(four, 64 * mib - 4096, 65536) ==
        Approx(implied_bus(four, 64 * mib, 65536)).epsilon(1e-3));
  // With the fill counted, the bus rate is the large calls' (4 GiB, where the fill is 1% of the time);
  // latency + bytes / rate alone would price 64 MiB at 1/1.375 of that rate, as the measured runs show
  // (nccl-tests: 270 against 469 GB/s busbw at 16 GiB).
  const double large = implied_bus(two, 4096 * mib, 131072);
  CHECK(implied_bus(two, 64 * mib, 131072) == Approx(large).epsilon(0.02));
  const CollectiveCost mid = model.collective_cost(Collective::allreduce, 64 * mib, two, tree);
  const double two_term = 64 * mib * 1.875 / (1e3 * (mid.time_us - mid.latency_us));
  CHECK(two_term < 0.8 * large);
}

TEST_CASE("a group beyond one node uses the cluster's network", "[model]") {
  const CostModel model = model_of("dgx-a100");
  const CollConfig ring{Algo::ring, Proto::simple, 24, 512, 2 << 20};
  const auto one_node = model.collective_cost(Collective::allreduce, 1 << 30, CommGroup{8, 1}, ring);
  const auto two_nodes = model.collective_cost(Collective::allreduce, 1 << 30, CommGroup{16, 2}, ring);
  // 8 NICs × 200 Gbit/s × 0.96 = 192 GB/s per node < NVLink's 234.
  CHECK(two_nodes.link_GBps == Approx(192.0));
  CHECK(two_nodes.busbw_GBps < one_node.busbw_GBps);
  const CostModel eth = model_of("a100-eth25");
  const auto slow = eth.collective_cost(Collective::allreduce, 1 << 30, CommGroup{16, 2}, ring);
  CHECK(slow.link_GBps == Approx(25.0 / 8.0 * 0.8));
}

TEST_CASE("NCCL's default CTAs follow its topology search and connect.cc", "[model]") {
  // Derivations (docs/model.md "NCCL's default"): DGX-A100 alone: 12 NVLinks × 20 = 240 GB/s, 6 rings at
  // 40 duplicated to 12 at 20, doubled to 24 CTAs; across nodes 8 rings at 24 (PCIe Gen4, 200G NICs), not
  // duplicated (< 25), 16 CTAs. DGX-H100 alone: 18 × 20.6 = 370.8, 6 rings at 60 → 12 at 30 → 24 CTAs;
  // across nodes 8 rings at 48, no duplication on sm90 below 50 with more than 4 rings, 16 CTAs (the
  // Hopper doubling applies only below 16); one GPU per node: 1 ring at 48 → 2 at 24 → 4 CTAs.
  const ClusterSpec a100 = cluster_preset("dgx-a100").value();
  const ClusterSpec h100 = cluster_preset("dgx-h100").value();
  CHECK(nccl_comm(a100, CommGroup{8, 1}).ctas == 24);
  CHECK(nccl_comm(a100, CommGroup{16, 2}).ctas == 16);
  CHECK(nccl_comm(a100, CommGroup{16, 2}).ring.channels == 8);
  CHECK(nccl_comm(a100, CommGroup{16, 2}).ring.bw_inter_GBps == 24.0);
  CHECK(nccl_comm(h100, CommGroup{8, 1}).ctas == 24);
  CHECK(nccl_comm(h100, CommGroup{16, 2}).ctas == 16);
  CHECK(nccl_comm(h100, CommGroup{32, 4}).ring.bw_inter_GBps == 48.0);
  CHECK(nccl_comm(h100, CommGroup{2, 2}).ctas == 4);
  // With 4 GPUs of the communicator per node, 4 rings at 24 → 8 CTAs → the Hopper doubling: 16.
  CHECK(nccl_comm(h100, CommGroup{8, 2}).ctas == 16);
  // NVLS: 8 heads at 40 GB/s on one node (9 × 40 ≤ 370.8), 16 CTAs (NVLS_NCHANNELS_SM90).
  const NcclComm node = nccl_comm(h100, CommGroup{8, 1});
  CHECK(node.nvls.channels == 8);
  CHECK(node.nvls.bw_intra_GBps == 40.0);
  CHECK(node.nvls_ctas == 16);
  // One 100G NIC behind PCIe: one ring at 12, 2 CTAs, and 256 Simple threads (12 ≤ PCI_BW).
  const NcclComm pcie = nccl_comm(cluster_preset("a40-pcie-ib100").value(), CommGroup{16, 2});
  CHECK(pcie.ctas == 2);
  CHECK(pcie.simple_threads == 256);
  // A stated channel count is every communicator's.
  ClusterSpec stated = h100;
  stated.nccl_channels = 32;
  CHECK(nccl_comm(stated, CommGroup{16, 2}).ctas == 32);
  // Per call, NCCL sheds ring channels below 64 B per thread (512 threads): 1 MiB keeps 24 on one A100
  // node, 256 KiB runs 8.
  const CostModel model = model_of("dgx-a100");
  CHECK(model.resolve_defaults(Collective::allreduce, 1 << 20, CommGroup{8, 1}, CollConfig{}).channels == 24);
  CHECK(model.resolve_defaults(Collective::allreduce, 256 << 10, CommGroup{8, 1}, CollConfig{}).channels ==
        8);
}

TEST_CASE("a network-bound ring gains with channels up to NCCL's default and little beyond", "[model]") {
  for (const char* name : {"dgx-h100", "dgx-a100"}) {
    const CostModel model = model_of(name);
    const CommGroup two_nodes{16, 2};
    const int def = model.default_channels(two_nodes);
    const double bytes = 1 << 30;
    auto busbw = [&](int channels) {
      return model
          .collective_cost(Collective::allreduce, bytes, two_nodes,
                           CollConfig{Algo::ring, Proto::simple, channels, 512, 2 << 20})
          .busbw_GBps;
    };
    INFO(name << ": default " << def << " channels, " << busbw(def) << " GB/s; twice " << busbw(2 * def));
    for (int ch = 1; ch < def; ++ch) CHECK(busbw(ch + 1) > busbw(ch));
    CHECK(busbw(2 * def) <= 1.10 * busbw(def));
    CHECK(busbw(2 * def) >= 0.95 * busbw(def));  // past the knee extra channels only add start-up
  }
  // One channel of a multi-node H100 ring carries at most what one CTA's connection does: 22–24 GB/s
  // (NVIDIA/nccl-tests#309, the research note's per-CTA rows), busbw included.
  const CostModel h100 = model_of("dgx-h100");
  const auto one = h100.collective_cost(Collective::allreduce, 1 << 30, CommGroup{16, 2},
                                        CollConfig{Algo::ring, Proto::simple, 1, 512, 2 << 20});
  CHECK(one.busbw_GBps <= 24.0);
  CHECK(one.busbw_GBps >= 20.0);
}

TEST_CASE("NVLSTree across H100 nodes cannot beat what the NICs carry", "[model]") {
  // Without SHARP each node moves at least 2·S·(N−1)/N through its NICs; NCCL's double tree moves 2·S
  // through an interior node's from 4 nodes on. Busbw falls from 2 to 4 nodes, then stays flat, always
  // below the NIC bound.
  const CostModel model = model_of("dgx-h100");
  const double nic = 8 * 400 / 8.0;  // line rate per node, GB/s
  std::vector<double> busbw;
  for (int nodes : {2, 4, 8, 16}) {
    const CommGroup g{8 * nodes, nodes};
    const CollConfig c = model.nccl_default(Collective::allreduce, 4.0 * (1 << 30), g);
    const auto cost = model.collective_cost(Collective::allreduce, 4.0 * (1 << 30), g, c);
    const double n = 8.0 * nodes;
    const double bound = nic * (2 * (n - 1) / n) / (2.0 * (nodes - 1) / nodes);
    INFO(nodes << " nodes: " << to_string(c.algo) << " " << cost.busbw_GBps << " GB/s, NIC bound " << bound);
    CHECK(cost.busbw_GBps < bound);
    busbw.push_back(cost.busbw_GBps);
  }
  CHECK(busbw[1] < 0.85 * busbw[0]);
  CHECK(busbw[2] <= 1.03 * busbw[1]);
  CHECK(busbw[3] <= 1.03 * busbw[1]);
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
  // NVLS across nodes is CollNet+NVLS: without SHARP NCCL disables it (tuning.cc:468-471).
  CHECK(
      h100.nccl_allows(Collective::allreduce, Algo::nvls, Proto::simple, CommGroup{16, 2}).error().message ==
      "allreduce nvls/simple: across nodes NCCL runs nvls only with in-network reduction (SHARP); use "
      "nvls_tree");
  ClusterSpec no_nvls = cluster_preset("dgx-h100").value();
  no_nvls.nvls = false;
  CHECK(CostModel(no_nvls)
            .nccl_allows(Collective::allreduce, Algo::nvls, Proto::simple, node)
            .error()
            .message == "allreduce nvls/simple: NVLS is disabled on dgx-h100 (NCCL_NVLS_ENABLE=0)");
  CHECK(h100.nccl_allows(Collective::allgather, Algo::pat, Proto::simple, CommGroup{4, 4}).ok());
  CHECK_FALSE(h100.nccl_allows(Collective::allgather, Algo::pat, Proto::simple, CommGroup{16, 2}).ok());
  CHECK_FALSE(
      h100.nccl_allows(Collective::allreduce, Algo::collnet_direct, Proto::simple, CommGroup{16, 2}).ok());
  CHECK(h100.nccl_allows(Collective::alltoall, Algo::p2p, Proto::simple, node).ok());
  CHECK_FALSE(h100.nccl_allows(Collective::alltoall, Algo::ring, Proto::simple, node).ok());
}

TEST_CASE("an all-to-all with two ranks per node sends its off-node share through those two ranks' NICs",
          "[model]") {
  // Grok-1's EP group: 8 ranks, 2 per node on 4 DGX H100 nodes. Each rank sends 6/8 of its buffer off the
  // node; the node's 2 ranks share 2 NICs (as a ring of that shape does), so the bandwidth part equals one
  // NIC carrying 6/8 of the buffer: a cross-node send/recv of 0.75·B. (Before, the 2 ranks had all 8 of
  // the node's NICs: 4× faster.)
  const CostModel h100(cluster_preset("dgx-h100").value());
  const double bytes = 4.0 * (1ull << 30);
  const CommGroup ep{8, 4}, pair{2, 2};
  const auto a2a = h100.collective_cost(Collective::alltoall, bytes, ep,
                                        h100.nccl_default(Collective::alltoall, bytes, ep));
  const auto send = h100.collective_cost(Collective::sendrecv, 0.75 * bytes, pair,
                                         h100.nccl_default(Collective::sendrecv, 0.75 * bytes, pair));
  CHECK(a2a.time_us - a2a.latency_us == Approx(send.time_us - send.latency_us).epsilon(0.01));
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
  // NCCL 2.30's tuner v6 sets the chunk per call for the tuner collectives only.
  CHECK(knob_scope(Runtime::nccl, Collective::reducescatter, Knob::chunk, true) == KnobScope::per_call);
  CHECK(knob_scope(Runtime::nccl, Collective::alltoall, Knob::chunk, true) == KnobScope::per_process);
  CHECK(knob_scope(Runtime::nccl, Collective::allreduce, Knob::threads, true) == KnobScope::per_process);
}

TEST_CASE("NCCL 2.30 asks its tuner for each call's chunk and clamps it to the buffer's ceiling", "[model]") {
  // tuner_v6.h:79-80; earlier tuners have no getChunkSize.
  CHECK(tuner_sets_chunk(NcclVersion{2, 30, 7}));
  CHECK(tuner_sets_chunk(NcclVersion{2, 30, 0}));
  CHECK_FALSE(tuner_sets_chunk(NcclVersion{2, 29, 7}));
  CHECK_FALSE(tuner_sets_chunk(NcclVersion{2, 28, 9}));
  // bufferMaxChunkSize (enqueue.cc:2222-2229): BUFFSIZE / NCCL_STEPS × chunkSteps. Simple ring: 4 MiB / 8 ×
  // 4 = 2 MiB; Simple tree, NVLS: 4 MiB / 8 = 512 KiB; NCCL_BUFFSIZE 8 MiB doubles both.
  CHECK(nccl_chunk_ceiling(Algo::ring, Proto::simple) == 2 << 20);
  CHECK(nccl_chunk_ceiling(Algo::tree, Proto::simple) == 512 << 10);
  CHECK(nccl_chunk_ceiling(Algo::nvls, Proto::simple) == 512 << 10);
  CHECK(nccl_chunk_ceiling(Algo::ring, Proto::simple, 8 << 20) == 4 << 20);
  // LL: half a slot of its 512 KiB buffer (32 KiB); LL128: a slot's 15 of 16 elements (4,915,200 / 8 /
  // 16 × 15 = 576,000 B); NCCL_BUFFSIZE does not move them.
  CHECK(nccl_chunk_ceiling(Algo::ring, Proto::ll) == 32 << 10);
  CHECK(nccl_chunk_ceiling(Algo::ring, Proto::ll128, 8 << 20) == 576000);
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

// The largest communicator the commands accept (cli/app.h k_max_gpus = 2^20 ranks; `cost --ranks` above it
// is refused at the flag). The unit pass runs this under UBSan, which aborts on any signed overflow in the
// rank arithmetic (found before at --ranks 10^9 in cost_collectives.cpp).
TEST_CASE("collectives over the largest accepted rank count are priced finite, without integer overflow",
          "[model]") {
  constexpr int k_largest_ranks = 1 << 20;
  const Collective collectives[] = {Collective::allreduce, Collective::allgather, Collective::reducescatter,
                                    Collective::alltoall,  Collective::broadcast, Collective::reduce,
                                    Collective::sendrecv};
  for (const std::string name : {"dgx-a100", "dgx-h100"}) {
    const CostModel model = model_of(name);
    for (const int ranks : {2, 8, 1000, k_largest_ranks}) {
      const CommGroup group = model.contiguous_group(ranks);
      for (const Collective collective : collectives) {
        for (const double bytes : {0.0, 1024.0, 1e9, 1e15}) {
          INFO(name << " ranks " << ranks << " collective " << static_cast<int>(collective) << " bytes "
                    << bytes);
          const CollConfig config = model.nccl_default(collective, bytes, group);
          const CollectiveCost cost = model.collective_cost(collective, bytes, group, config);
          CHECK(std::isfinite(cost.time_us));
          CHECK(cost.time_us >= 0);
        }
      }
    }
  }
}
