// Property tests over random specs (fixed seeds: reproducible).
#include <algorithm>
#include <cmath>
#include <random>

#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/presets.h"

using namespace lagom::model;

namespace {
const Collective k_collectives[] = {Collective::allreduce, Collective::allgather, Collective::reducescatter,
                                    Collective::alltoall,  Collective::broadcast, Collective::reduce,
                                    Collective::sendrecv};
}

TEST_CASE("a collective's time never falls when bytes grow nor rises when link bandwidth grows", "[model]") {
  std::mt19937_64 rng(42);
  const auto& presets = cluster_presets();
  std::uniform_int_distribution<std::size_t> pick_cluster(0, presets.size() - 1);
  std::uniform_int_distribution<int> pick_coll(0, 6), pick_ranks(2, 64), pick_channels(1, 32),
      pick_threads(2, 20), pick_algo(0, 6), pick_proto(0, 2);
  std::uniform_real_distribution<double> log_bytes(0, 34), grow(1.0, 4.0);
  int checked = 0;
  for (int i = 0; i < 4000; ++i) {
    ClusterSpec cluster = presets[pick_cluster(rng)];
    const CostModel model(cluster);
    const Collective c = k_collectives[pick_coll(rng)];
    const CommGroup group = model.contiguous_group(pick_ranks(rng));
    CollConfig config{k_all_algos[static_cast<std::size_t>(pick_algo(rng))],
                      k_all_protos[static_cast<std::size_t>(pick_proto(rng))], pick_channels(rng),
                      32 * pick_threads(rng), static_cast<std::int64_t>(4096) << (rng() % 10)};
    if (c == Collective::alltoall || c == Collective::sendrecv) config.algo = Algo::p2p;
    if (!model.nccl_allows(c, config.algo, config.proto, group).ok()) continue;
    const double bytes = std::exp2(log_bytes(rng));
    const double t1 = model.collective_cost(c, bytes, group, config).time_us;
    const double t2 = model.collective_cost(c, bytes * grow(rng), group, config).time_us;
    INFO(to_string(c) << " " << to_string(config.algo) << "/" << to_string(config.proto) << " ranks "
                      << group.ranks << " nodes " << group.nodes << " bytes " << bytes << " on "
                      << cluster.name);
    CHECK(t2 >= t1);
    ClusterSpec faster = cluster;
    const double g = grow(rng);
    faster.intra.bw_GBps *= g;
    faster.intra.pair_bw_GBps *= g;
    faster.nic.gbit *= g;
    CHECK(CostModel(faster).collective_cost(c, bytes, group, config).time_us <= t1 * (1 + 1e-12));
    ++checked;
  }
  CHECK(checked > 1000);
}

namespace {

// The bytes that must cross the busiest cut, divided by that cut's line rate, µs: no algorithm moves a
// collective faster. Cuts: a node's NICs (all of them, at line rate) when the group spans nodes and the
// algorithm does not reduce inside the network; a GPU's fabric link(s) on one node.
double cut_bound_us(const ClusterSpec& c, Collective coll, Algo algo, double bytes, const CommGroup& g) {
  const double n = g.ranks;
  const double nodes = g.nodes;
  const double ppn = g.ranks_per_node();
  double bound = 0;
  const bool in_network =
      algo == Algo::collnet_direct || algo == Algo::collnet_chain || (algo == Algo::nvls && g.nodes > 1);
  if (g.nodes > 1 && !in_network) {
    double node_bytes = 0;
    switch (coll) {
      case Collective::allreduce:
        node_bytes = 2 * bytes * (nodes - 1) / nodes;
        break;
      case Collective::allgather:
      case Collective::reducescatter:
        node_bytes = bytes * (nodes - 1) / nodes;
        break;
      case Collective::broadcast:
      case Collective::reduce:
      case Collective::sendrecv:
        node_bytes = bytes;
        break;
      case Collective::alltoall:
        node_bytes = ppn * bytes * (n - ppn) / n;
        break;
    }
    bound = std::max(bound, node_bytes / (c.nic.count * c.nic.gbit / 8.0 * 1e3));
  }
  if (g.nodes == 1) {
    const bool switch_reduces = algo == Algo::nvls;
    double gpu_bytes = 0;
    switch (coll) {
      case Collective::allreduce:
        gpu_bytes = (switch_reduces ? 1.0 : 2.0) * bytes * (n - 1) / n;
        break;
      case Collective::allgather:
      case Collective::reducescatter:
      case Collective::alltoall:
        gpu_bytes = bytes * (n - 1) / n;
        break;
      case Collective::broadcast:
      case Collective::reduce:
      case Collective::sendrecv:
        gpu_bytes = bytes;
        break;
    }
    double link = c.intra.bw_GBps;
    if (c.intra.kind == FabricKind::nvlink_pairs)
      link = g.ranks == 2 ? c.intra.pair_bw_GBps : c.intra.pair_bw_GBps + c.intra.bw_GBps;
    bound = std::max(bound, gpu_bytes / (link * 1e3));
  }
  return bound;
}

}  // namespace

TEST_CASE("no collective is priced faster than its bytes over the busiest cut", "[model]") {
  std::mt19937_64 rng(2024);
  const auto& presets = cluster_presets();
  std::uniform_int_distribution<std::size_t> pick_cluster(0, presets.size() - 1);
  std::uniform_int_distribution<int> pick_coll(0, 6), pick_nodes(1, 16), pick_channels(1, 64),
      pick_threads(2, 20), pick_algo(0, 6), pick_proto(0, 2), pick_nics(1, 8), pick_gpn(0, 3);
  std::uniform_real_distribution<double> log_bytes(10, 36), scale(0.25, 4.0), eff(0.3, 1.0);
  int checked = 0;
  for (int i = 0; i < 6000; ++i) {
    ClusterSpec cluster = presets[pick_cluster(rng)];
    const int gpn = 1 << pick_gpn(rng);
    cluster.gpus_per_node = gpn;
    cluster.nic.count = pick_nics(rng);
    cluster.nic.gbit *= scale(rng);
    cluster.nic.efficiency = eff(rng);
    cluster.intra.bw_GBps *= scale(rng);
    cluster.intra.pair_bw_GBps *= scale(rng);
    cluster.intra.efficiency = eff(rng);
    cluster.gpu.channel_GBps *= scale(rng);
    cluster.gpu.net_channel_GBps = 30.0 * eff(rng);
    cluster.nvls = rng() % 2 == 0;
    const CostModel model(cluster);
    const Collective c = k_collectives[pick_coll(rng)];
    const int nodes = pick_nodes(rng);
    const int ppn = 1 + static_cast<int>(rng() % static_cast<unsigned>(gpn));
    const CommGroup group{nodes * ppn, nodes};
    if (group.ranks < 2) continue;
    CollConfig config{k_all_algos[static_cast<std::size_t>(pick_algo(rng))],
                      k_all_protos[static_cast<std::size_t>(pick_proto(rng))],
                      std::min(pick_channels(rng), model.max_channels()), 32 * pick_threads(rng),
                      static_cast<std::int64_t>(4096) << (rng() % 12)};
    if (c == Collective::alltoall || c == Collective::sendrecv) config.algo = Algo::p2p;
    if (rng() % 4 == 0) config = model.nccl_default(c, 1e6, group);
    if (!model.nccl_allows(c, config.algo, config.proto, group).ok()) continue;
    const double bytes = std::exp2(log_bytes(rng));
    const double t = model.collective_cost(c, bytes, group, config).time_us;
    const double bound = cut_bound_us(cluster, c, config.algo, bytes, group);
    INFO(to_string(c) << " " << to_string(config.algo) << "/" << to_string(config.proto) << " ch "
                      << config.channels << " ranks " << group.ranks << " nodes " << group.nodes << " bytes "
                      << bytes << " on " << cluster.name << " (" << cluster.nic.count << "x"
                      << cluster.nic.gbit << " Gbit/s, fabric " << cluster.intra.bw_GBps << " GB/s): " << t
                      << " us, cut bound " << bound << " us");
    CHECK(t >= bound * (1 - 1e-12));
    ++checked;
  }
  CHECK(checked > 2000);
}

TEST_CASE("compute time never falls when FLOPs grow", "[model]") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> dim(1, 20000), batch(1, 64);
  for (const ClusterSpec& cluster : cluster_presets()) {
    const CostModel model(cluster);
    for (int i = 0; i < 500; ++i) {
      GemmShape a{dim(rng), dim(rng), dim(rng), batch(rng)};
      GemmShape b = a;
      switch (rng() % 4) {
        case 0:
          b.m += dim(rng);
          break;
        case 1:
          b.n += dim(rng);
          break;
        case 2:
          b.k += dim(rng);
          break;
        default:
          b.batch += batch(rng);
          break;
      }
      INFO(cluster.name << " " << a.m << "x" << a.n << "x" << a.k << "x" << a.batch << " -> " << b.m << "x"
                        << b.n << "x" << b.k << "x" << b.batch);
      // Equal within rounding when the growth stays inside the same padded tiles.
      CHECK(model.gemm_time_us(b, Precision::bf16) >= model.gemm_time_us(a, Precision::bf16) * (1 - 1e-12));
      ComputeOp op;
      op.kind = OpKind::elementwise;
      op.flops = a.flops();
      op.bytes = 1e6;
      const double t1 = model.op_time_us(op, Precision::bf16);
      op.flops = b.flops();
      CHECK(model.op_time_us(op, Precision::bf16) >= t1);
    }
  }
}

TEST_CASE("activation memory never falls when the micro-batch grows", "[model]") {
  std::mt19937_64 rng(11);
  const auto& workloads = workload_presets();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  int checked = 0;
  for (int i = 0; i < 600; ++i) {
    const WorkloadSpec& w = workloads[rng() % workloads.size()];
    Strategy s;
    s.tp = 1 << (rng() % 3);
    s.pp = 1 << (rng() % 3);
    s.gpus = s.tp * s.pp * 2;
    s.sp = s.tp > 1 && rng() % 2 == 0;
    s.recompute = static_cast<Recompute>(rng() % 3);
    s.attention = rng() % 2 == 0 ? Attention::flash : Attention::standard;
    s.schedule = rng() % 2 == 0 ? Schedule::one_f_one_b : Schedule::gpipe;
    s.micro_batch = 1 + static_cast<long>(rng() % 4);
    s.global_batch = 2 * 8 * 16;
    Strategy bigger = s;
    bigger.micro_batch = s.micro_batch * 2;
    auto a = resolve_strategy(s, w, cluster);
    auto b = resolve_strategy(bigger, w, cluster);
    if (!a.ok() || !b.ok()) continue;
    INFO(w.name << " tp " << s.tp << " pp " << s.pp << " mb " << s.micro_batch);
    CHECK(model.memory_per_gpu(w, b.value()).activations_bytes >=
          model.memory_per_gpu(w, a.value()).activations_bytes);
    ++checked;
  }
  CHECK(checked > 100);
}
