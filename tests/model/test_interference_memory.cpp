#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/presets.h"

using namespace lagom::model;

TEST_CASE("on a40-pcie-ib100 more channels make an overlapped all-gather faster and its GEMM slower",
          "[model]") {
  // The Lagom effect: raising the communicator's CTAs (channels) buys communication speed with compute SMs.
  const CostModel model(cluster_preset("a40-pcie-ib100").value());
  const CommGroup node{8, 1};
  const double bytes = 256.0 * 1024 * 1024;
  ComputeOp gemm;
  gemm.kind = OpKind::gemm;
  gemm.gemm = GemmShape{8192, 8192, 8192, 1};
  gemm.flops = gemm.gemm.flops();
  gemm.bytes = 3.0 * 8192 * 8192 * 2;
  const double gemm_us = model.op_time_us(gemm, Precision::bf16);

  double previous_comm = 1e300, previous_gemm = 0;
  for (int channels : {1, 4}) {
    const CollConfig config{Algo::ring, Proto::simple, channels, 512, 2 << 20};
    const CollectiveCost cost = model.collective_cost(Collective::allgather, bytes, node, config);
    const Interference both = model.interference(gemm, Precision::bf16, cost, Collective::allgather);
    const double comm_us = cost.time_us * both.comm_factor;
    const double overlapped_gemm_us = gemm_us * both.compute_factor;
    INFO("channels " << channels << ": allgather " << comm_us << " us, gemm " << overlapped_gemm_us << " us");
    CHECK(comm_us < previous_comm);
    CHECK(overlapped_gemm_us > previous_gemm);
    CHECK(both.sms_lost == channels);
    previous_comm = comm_us;
    previous_gemm = overlapped_gemm_us;
  }
  // 4096 tiles of k 8192 on 84 SMs: split over k, 399,457.5 + 50·64 + 256 = 402,913.5 k-steps per SM
  // (data-parallel: 49 waves, 404,544); 4 SMs held (80 SMs): 419,430.4 + 53·64 + 256 = 423,078.4 (52 waves:
  // 429,312), 5.0% slower. The all-gather:
  // one channel runs at 24 GB/s × 0.94 (16 chunks of 2 MiB per step, 5.7 µs each) = 22.6 GB/s; four
  // channels reach the PCIe limit 31.5 × 0.79 = 24.9 GB/s.
  const CollectiveCost four = model.collective_cost(Collective::allgather, bytes, node,
                                                    CollConfig{Algo::ring, Proto::simple, 4, 512, 2 << 20});
  CHECK(model.interference(gemm, Precision::bf16, four, Collective::allgather).compute_factor ==
        Approx(423078.4 / 402913.5238).epsilon(1e-6));
}

TEST_CASE("bigger chunks take more L2 and slow a memory-bound GEMM more, a streaming op only by HBM",
          "[model]") {
  const CostModel model(cluster_preset("dgx-a100").value());
  // A GEMM too thin to be compute-bound (k 16): its tiles are reused from L2, so what the collective's
  // chunks evict is fetched again.
  ComputeOp thin;
  thin.kind = OpKind::gemm;
  thin.gemm = GemmShape{16384, 16384, 16, 1};
  thin.flops = thin.gemm.flops();
  thin.bytes = 1e9;
  const CommGroup node{8, 1};
  const auto small = model.collective_cost(Collective::allreduce, 1e9, node,
                                           CollConfig{Algo::ring, Proto::simple, 16, 512, 128 << 10});
  const auto large = model.collective_cost(Collective::allreduce, 1e9, node,
                                           CollConfig{Algo::ring, Proto::simple, 16, 512, 4 << 20});
  const auto a = model.interference(thin, Precision::bf16, small, Collective::allreduce);
  const auto b = model.interference(thin, Precision::bf16, large, Collective::allreduce);
  CHECK(b.l2_share > a.l2_share);
  CHECK(b.compute_factor > a.compute_factor);
  CHECK(a.comm_factor > 1.0);  // a memory-bound op starves the collective
  // A streaming kernel reads each byte once: it loses the HBM bandwidth the collective moves, and no more.
  ComputeOp add;
  add.kind = OpKind::elementwise;
  add.bytes = 1e9;
  for (const auto& cost : {small, large}) {
    const auto i = model.interference(add, Precision::bf16, cost, Collective::allreduce);
    CHECK(i.l2_share > 0);
    CHECK(i.compute_factor == Approx(1.0 / (1.0 - i.hbm_share)).epsilon(1e-12));
  }
}

TEST_CASE("a calibrated interference fit replaces the defaults", "[model]") {
  Calibration cal;
  cal.interference.compute_slowdown_per_channel = 0.01;
  const CostModel model(cluster_preset("dgx-a100").value(), cal);
  ComputeOp gemm;
  gemm.kind = OpKind::gemm;
  gemm.gemm = GemmShape{8192, 8192, 8192, 1};
  gemm.flops = gemm.gemm.flops();
  const auto cost = model.collective_cost(Collective::allreduce, 1e8, CommGroup{8, 1},
                                          CollConfig{Algo::ring, Proto::simple, 10});
  CHECK(model.interference(gemm, Precision::bf16, cost, Collective::allreduce).compute_factor == Approx(1.1));
}

namespace {
Strategy resolved(const WorkloadSpec& w, const ClusterSpec& c, Strategy s) {
  return resolve_strategy(s, w, c).value();
}
}  // namespace

TEST_CASE("activation memory per layer follows Korthikanti's Table 2", "[model]") {
  const WorkloadSpec w = workload_preset("gpt3-175b").value();
  const ClusterSpec c = cluster_preset("dgx-a100").value();
  const CostModel model(c);
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  Strategy base;
  base.gpus = 8;
  base.tp = 8;
  base.global_batch = 1;
  base.attention = Attention::standard;
  base.dropout = 0.1;  // the paper's GPT-3 runs: its formulas count the dropout masks
  // no recompute, TP: sbh(10 + 24/t + 5as/(ht))
  CHECK(model.activation_bytes_per_layer(w, resolved(w, c, base), 0) ==
        Approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t))));
  Strategy sp = base;
  sp.sp = true;
  // TP + SP: sbh/t · (34 + 5as/h)
  CHECK(model.activation_bytes_per_layer(w, resolved(w, c, sp), 0) ==
        Approx(s * b * h / t * (34 + 5 * a * s / h)));
  sp.recompute = Recompute::selective;
  CHECK(model.activation_bytes_per_layer(w, resolved(w, c, sp), 0) == Approx(34 * s * b * h / t));
  Strategy flash = sp;
  flash.recompute = Recompute::none;
  flash.attention = Attention::flash;
  CHECK(model.activation_bytes_per_layer(w, resolved(w, c, flash), 0) == Approx(34 * s * b * h / t));
  Strategy full = base;
  full.recompute = Recompute::full;
  CHECK(model.activation_bytes_per_layer(w, resolved(w, c, full), 0) == Approx(2 * s * b * h));
  // Without dropout no mask is saved (PyTorch's dropout returns its input at p = 0): the two hidden masks
  // (sbh each) and the attention mask and dropout output (3as²b) go: sbh(8 + 24/t + 2as/(ht)), and with
  // SP sbh/t · (32 + 2as/h).
  Strategy no_dropout = base;
  no_dropout.dropout = 0;
  CHECK(model.activation_bytes_per_layer(w, resolved(w, c, no_dropout), 0) ==
        Approx(s * b * h * (8 + 24 / t + 2 * a * s / (h * t))));
  no_dropout.sp = true;
  CHECK(model.activation_bytes_per_layer(w, resolved(w, c, no_dropout), 0) ==
        Approx(s * b * h / t * (32 + 2 * a * s / h)));
}

TEST_CASE(
    "with fp32 gradients weights, gradients and optimizer take 18 bytes per parameter, 6 + 12/dp with "
    "ZeRO-1",
    "[model]") {
  const WorkloadSpec w = workload_preset("llama2-7b").value();
  const ClusterSpec c = cluster_preset("dgx-a100").value();
  const CostModel model(c);
  Strategy s;
  s.gpus = 8;
  s.global_batch = 8;
  s.grad_reduce_dtype = Precision::fp32;
  const Strategy plain = resolved(w, c, s);
  const double p = model.parameters_per_gpu(w, plain);
  CHECK(p == Approx(w.parameters()).epsilon(1e-12));
  const MemoryBreakdown m0 = model.memory_per_gpu(w, plain);
  CHECK(m0.weights_bytes + m0.grads_bytes + m0.optimizer_bytes == Approx(18 * p));
  s.zero = 1;
  const MemoryBreakdown m1 = model.memory_per_gpu(w, resolved(w, c, s));
  CHECK(m1.weights_bytes + m1.grads_bytes + m1.optimizer_bytes == Approx((6 + 12.0 / 8) * p));
  s.zero = 3;
  const MemoryBreakdown m3 = model.memory_per_gpu(w, resolved(w, c, s));
  CHECK(m3.weights_bytes + m3.grads_bytes + m3.optimizer_bytes == Approx(18 * p / 8));
}

TEST_CASE("1F1B holds pp micro-batches on the first stage, GPipe all of them", "[model]") {
  const WorkloadSpec w = workload_preset("gpt2-xl").value();
  const ClusterSpec c = cluster_preset("dgx-a100").value();
  const CostModel model(c);
  Strategy s;
  s.gpus = 4;
  s.pp = 4;
  s.global_batch = 16;
  auto first_stage = [&](const Strategy& r) {
    return model.stage_memory(w, r, pipeline_split(w, r).front(), 0).activations_bytes;
  };
  const Strategy one = resolved(w, c, s);
  const double per_layer = model.activation_bytes_per_layer(w, one, 0);
  CHECK(first_stage(one) == Approx(per_layer * 12 * 4));
  CHECK(model.memory_per_gpu(w, one).stage == 0);
  s.schedule = Schedule::gpipe;
  CHECK(first_stage(resolved(w, c, s)) == Approx(per_layer * 12 * 16));
  s.schedule = Schedule::one_f_one_b;
  s.vpp = 2;
  // interleaved, m = p = 4: every one of the 8 chunk forwards runs before the first backward: 8 × 6 layers.
  s.global_batch = 4;
  CHECK(first_stage(resolved(w, c, s)) == Approx(per_layer * 6 * 8));
  // m = 16: warm-up (p − 1)·2 + (v − 1)·p = 10 chunk forwards and one more, 11 × 6 = 4 micro-batches × (1
  // + 3/8) of the stage's 12 layers (Megatron's formula).
  s.global_batch = 16;
  CHECK(first_stage(resolved(w, c, s)) == Approx(per_layer * 12 * 4 * 1.375));
}

TEST_CASE("localhost's cluster comes from a calibration", "[model]") {
  Calibration cal;
  CHECK(cluster_from_calibration(cal, 2, 1).error().message ==
        "cluster localhost: the profile has no GEMM fit; run 'lagom profile' first");
  cal.gemms.push_back(GemmFit{"fp32", 0.05, 1e6, 0});
  cal.memory_bw_GBps = 10;
  cal.collectives.push_back(CollectiveFit{"allreduce", "", "", 2, 1, 0, 20, 4, 0.1, 0, 0});
  const ClusterSpec c = cluster_from_calibration(cal, 2, 1).value();
  CHECK(c.gpu.fp32_tflops == 0.05);
  CHECK(c.gpu.hbm_GBps == 10);
  CHECK(c.intra.bw_GBps == 4);
  CHECK(c.intra.latency_us == 10);
  CHECK_FALSE(c.has_nccl);
  const CostModel model(c, cal);
  CHECK(model.nccl_default(Collective::allreduce, 1e6, CommGroup{2, 1}).algo == Algo::ring);
  CHECK(model.collective_cost(Collective::allreduce, 1e6, CommGroup{2, 1}, CollConfig{}).time_us ==
        Approx(20 + 1e6 / 4e3));
  CHECK(parse_cluster(to_json(c), "localhost").value() == c);
}
