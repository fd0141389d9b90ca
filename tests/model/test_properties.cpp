// Property tests over random specs (fixed seeds: reproducible).
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
