// Copy-engine collectives (CTA policy zero, docs/model.md "Copy-engine collectives"): which calls NCCL
// moves to the copy engines, their price from the constants by hand, and what they take from a GEMM beside
// them (HBM only: no SM).
#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/presets.h"

using namespace lagom::model;

namespace {

CollConfig zero_policy() {
  CollConfig config;
  config.cta_policy = CtaPolicy::zero;
  return config;
}

}  // namespace

TEST_CASE("a one-node all-gather under CTA policy zero runs on the copy engines, priced by hand", "[model]") {
  const ClusterSpec h100 = cluster_preset("dgx-h100").value();
  const CostModel model(h100);
  const CommGroup node{8, 1};
  const double bytes = 64.0 * 1024 * 1024;  // the gathered buffer (nccl-tests' all-gather size)
  const CollectiveCost ce = model.collective_cost(Collective::allgather, bytes, node, zero_policy());
  REQUIRE(ce.copy_engine);
  CHECK(ce.config.channels == 0);  // no CTA: no SM held
  // Host launch 4 µs (the preset's collective floor) + two ncclMemOpSync barriers of 5 µs + 7 copies of
  // 2 µs (one to each peer, in place); then 7/8 of the buffer over NVLink at 0.85 × 450 × 0.82 GB/s.
  const double latency = 4.0 + 2 * 5.0 + 7 * 2.0;
  const double rate = 0.85 * h100.intra.bw_GBps * h100.intra.efficiency;
  CHECK(rate == Approx(313.65));
  CHECK(ce.latency_us == Approx(latency));
  CHECK(ce.time_us == Approx(latency + bytes * 7.0 / 8.0 / (rate * 1e3)));
  CHECK(ce.busbw_GBps == Approx(bytes / (ce.time_us * 1e3) * 7.0 / 8.0));
  // An all-to-all of the same per-rank buffer: 8 copies (its own piece too), the same bytes on the link.
  const CollectiveCost a2a = model.collective_cost(Collective::alltoall, bytes, node, zero_policy());
  REQUIRE(a2a.copy_engine);
  CHECK(a2a.latency_us == Approx(4.0 + 2 * 5.0 + 8 * 2.0));
}

TEST_CASE("CTA policy zero leaves every call NCCL cannot move to the copy engines on its kernel", "[model]") {
  const CostModel h100(cluster_preset("dgx-h100").value());
  const double bytes = 64.0 * 1024 * 1024;
  auto same_as_default = [&](const CostModel& model, Collective c, const CommGroup& g) {
    const CollectiveCost zero = model.collective_cost(c, bytes, g, zero_policy());
    const CollectiveCost kernel = model.collective_cost(c, bytes, g, CollConfig{});
    CHECK_FALSE(zero.copy_engine);
    CHECK(zero.time_us == kernel.time_us);
    CHECK(zero.config.channels == kernel.config.channels);
    CHECK_FALSE(model.copy_engine_support(c, g).ok());
  };
  same_as_default(h100, Collective::allreduce, CommGroup{8, 1});      // not AllGather/AlltoAll
  same_as_default(h100, Collective::reducescatter, CommGroup{8, 1});  // idem
  same_as_default(h100, Collective::allgather, CommGroup{16, 2});     // two nodes (enqueue.cc:2580)
  // NVLink pairs: not every peer reachable over NVLink (ce_coll.cc:118 at v2.30.7-1).
  same_as_default(CostModel(cluster_preset("a40-nvlink-ib400").value()), Collective::allgather,
                  CommGroup{8, 1});
  ClusterSpec old = cluster_preset("dgx-h100").value();
  old.nccl_version = "2.27.7";  // ce_coll.cc arrived in 2.28
  same_as_default(CostModel(old), Collective::allgather, CommGroup{8, 1});
  CHECK(h100.copy_engine_support(Collective::allgather, CommGroup{8, 1}).ok());
  CHECK(h100.copy_engine_support(Collective::alltoall, CommGroup{4, 1}).ok());
}

TEST_CASE("a GEMM beside a copy-engine all-gather is slowed by HBM sharing only", "[model]") {
  const ClusterSpec h100 = cluster_preset("dgx-h100").value();
  const CostModel model(h100);
  const CommGroup node{8, 1};
  const double bytes = 256.0 * 1024 * 1024;
  const CollectiveCost ce = model.collective_cost(Collective::allgather, bytes, node, zero_policy());
  const CollectiveCost kernel = model.collective_cost(Collective::allgather, bytes, node, CollConfig{});
  REQUIRE(ce.copy_engine);
  REQUIRE(kernel.config.channels > 0);

  // A compute-bound GEMM: the kernel all-gather's CTAs take SMs from it; the copy engines take none.
  ComputeOp gemm;
  gemm.kind = OpKind::gemm;
  gemm.gemm = GemmShape{8192, 8192, 8192, 1};
  gemm.flops = gemm.gemm.flops();
  gemm.bytes = 3.0 * 8192 * 8192 * 2;
  const Interference on_kernel = model.interference(gemm, Precision::bf16, kernel, Collective::allgather);
  const Interference on_ce = model.interference(gemm, Precision::bf16, ce, Collective::allgather);
  CHECK(on_kernel.sms_lost == kernel.config.channels);
  CHECK(on_kernel.compute_factor > 1.0);
  CHECK(on_ce.sms_lost == 0);
  CHECK(on_ce.l2_share == 0.0);
  CHECK(on_ce.compute_factor == 1.0);  // its HBM share does not bind a compute-bound GEMM

  // A memory-bound op: slowed by exactly the HBM the copies take, 2 bytes per bus byte (read at the
  // sender, written at the receiver; every GPU does both).
  ComputeOp add;
  add.kind = OpKind::elementwise;
  add.bytes = 1e9;
  const Interference on_add = model.interference(add, Precision::bf16, ce, Collective::allgather);
  const double share = ce.busbw_GBps * 2.0 / h100.gpu.hbm_GBps;
  CHECK(on_add.hbm_share == Approx(share));
  CHECK(on_add.sms_lost == 0);
  CHECK(on_add.compute_factor == Approx(1.0 / (1.0 - share)));
}
