// CostModel: memory per GPU (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", Table 2, generalised to GQA/SwiGLU/MoE), interference, and the localhost cluster.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/cost_model.h"

namespace lagom::model {

double CostModel::activation_bytes_per_layer(const WorkloadSpec& w, const Strategy& s, int layer) const {
  const double sb = static_cast<double>(w.seq) / s.cp * static_cast<double>(s.micro_batch);
  const double h = static_cast<double>(w.hidden);
  const double kvd = static_cast<double>(w.kv_heads) * static_cast<double>(w.head_dim());
  const double t = s.tp;
  const double sp_div = s.sp ? t : 1.0;
  if (s.recompute == Recompute::full) return 2.0 * sb * h / sp_div;  // the layer's input only
  // Replicated across TP (split by SP): two norm inputs 4sbh, QKV and fc1 inputs 4sbh, two dropout masks
  // 2sbh.
  double replicated = 10.0 * sb * h;
  // Split by TP: Q 2sbh, K and V 2sb·kvd each, projection input 2sbh (MHA: 8sbh).
  double split = 4.0 * sb * h + 4.0 * sb * kvd;
  if (w.decoder_layers > 0 && layer >= w.encoder_layers) {  // cross-attention: norm, input, mask + the same
    replicated += 5.0 * sb * h;
    split += 4.0 * sb * h + 4.0 * sb * kvd;
  }
  const double mult = is_gated(w.ffn_type) ? 2.0 : 1.0;
  if (!w.is_moe_layer(layer)) {
    // fc1 output (activation input) 2sb·f·mult, fc2 input 2sbf: gelu 4sbf (= 16sbh at f = 4h), swiglu 6sbf.
    split += 2.0 * sb * static_cast<double>(w.ffn_hidden) * (mult + 1.0);
  } else {
    const MoeSpec& moe = *w.moe;
    const double fe = static_cast<double>(moe.expert_ffn_hidden);
    split += 2.0 * sb * fe * (mult + 1.0) * (moe.top_k + moe.shared_experts);
    replicated +=
        2.0 * sb * h * moe.top_k + 4.0 * sb * moe.experts;  // permuted tokens, router probabilities (fp32)
  }
  double scores = 0;
  if (s.attention == Attention::standard && s.recompute == Recompute::none) {
    // softmax output 2as²b, dropout mask as²b, dropout output 2as²b (Korthikanti's 5as²b), per cp rank.
    scores = 5.0 * w.heads * static_cast<double>(w.seq) * sb;
  }
  return replicated / sp_div + (split + scores) / t;
}

MemoryBreakdown CostModel::memory_per_gpu(const WorkloadSpec& w, const Strategy& s) const {
  MemoryBreakdown m;
  const double params = parameters_per_gpu(w, s);
  // Mixed precision (Megatron): bf16/fp16 weights 2 B, fp32 main gradients 4 B, fp32 master weights + Adam
  // moments 12 B = 18 B per parameter; fp32 training: weights 4, gradients 4, Adam moments 8.
  const bool full_precision = s.precision == Precision::fp32 || s.precision == Precision::tf32;
  const double weight_b = full_precision ? 4.0 : 2.0;
  const double grad_b = 4.0;
  const double opt_b = full_precision ? 8.0 : 12.0;
  const double shard = static_cast<double>(s.dp) * s.cp;  // the distributed optimizer shards over dp·cp
  m.weights_bytes = params * weight_b / (s.zero >= 3 ? shard : 1.0);
  m.grads_bytes = params * grad_b / (s.zero >= 2 ? shard : 1.0);
  m.optimizer_bytes = params * opt_b / (s.zero >= 1 ? shard : 1.0);

  // Activations on the first stage: its layers × the micro-batches in flight there.
  const long micro_batches = std::max(1L, s.micro_batches());
  double in_flight = 1;
  switch (s.schedule) {
    case Schedule::gpipe:
      in_flight = static_cast<double>(micro_batches);
      break;
    case Schedule::one_f_one_b:
      in_flight = static_cast<double>(std::min<long>(s.pp, micro_batches));
      break;
    case Schedule::interleaved:
      // Megatron: p micro-batches of the stage's layers, × (1 + (p−1)/(p·v)).
      in_flight = std::min<double>(s.pp, static_cast<double>(micro_batches)) *
                  (1.0 + (s.pp - 1.0) / (static_cast<double>(s.pp) * s.vpp));
      break;
  }
  const int per_stage = w.layers / s.pp;
  double per_micro_batch = 0;
  for (int l = 0; l < per_stage; ++l) per_micro_batch += activation_bytes_per_layer(w, s, l);
  m.activations_bytes = per_micro_batch * in_flight;
  if (s.recompute == Recompute::full) {
    // Backward recomputes one layer at a time: its full activations are live once.
    Strategy none = s;
    none.recompute = Recompute::none;
    m.activations_bytes += activation_bytes_per_layer(w, none, 0);
  }
  if (s.pp == 1) {
    // Output layer and fp32 logits (Megatron theoretical_memory_usage: 4·s·b·h·(1 + V/h) / t).
    const double sb = static_cast<double>(w.seq) / s.cp * static_cast<double>(s.micro_batch);
    m.activations_bytes += 4.0 * sb * (static_cast<double>(w.hidden) + static_cast<double>(w.vocab)) / s.tp;
  }
  return m;
}

// ---------------------------------------------------------------------------------------------------

Interference CostModel::interference(const ComputeOp& op, Precision precision, const CollectiveCost& comm,
                                     Collective collective) const {
  Interference out;
  const GpuSpec& gpu = m_cluster.gpu;
  const int sms = std::max(1, gpu.sms);
  const int channels = std::max(0, comm.config.channels);
  out.sms_lost = std::min(sms - 1, channels * m_interference.sms_per_channel);

  // 1. SMs held by the collective's CTAs: a tiled kernel needs ceil(tiles / free SMs) waves instead of
  //    ceil(tiles / SMs); a kernel with fewer tiles than free SMs loses nothing.
  double sm_factor = 1.0;
  if (m_interference.slowdown_per_channel) {
    sm_factor = 1.0 + *m_interference.slowdown_per_channel * channels;
  } else if ((op.kind == OpKind::gemm || op.kind == OpKind::attention) && !op.gemm.empty()) {
    const double tiles = std::ceil(op.gemm.m / 128.0) * std::ceil(op.gemm.n / 128.0) * op.gemm.batch;
    const double before = std::ceil(tiles / sms);
    const double after = std::ceil(tiles / (sms - out.sms_lost));
    sm_factor = after / before;
  }
  // 2. HBM bandwidth the collective consumes (its bus traffic lands in and leaves from HBM) and L2 its
  //    in-flight chunks occupy (evicting the compute op's reuse: extra HBM traffic).
  const double comm_hbm = comm.busbw_GBps * m_interference.hbm_bytes_per_bus_byte;
  out.hbm_share = std::min(0.9, comm_hbm / std::max(1.0, gpu.hbm_GBps));
  const double l2_bytes = gpu.l2_mib * 1024.0 * 1024.0;
  out.l2_share = l2_bytes > 0 ? std::min(1.0, channels * static_cast<double>(comm.config.chunk_bytes) *
                                                  m_interference.l2_chunks_in_flight / l2_bytes)
                              : 0.0;
  const double compute_us = this->compute_us(op, precision);
  const double memory_us = op.bytes / (memory_bw_GBps() * 1e3);
  const double isolated = std::max(compute_us, memory_us);
  const double contended =
      std::max(compute_us * sm_factor,
               memory_us * (1.0 + m_interference.memory_contention * out.l2_share) / (1.0 - out.hbm_share));
  out.compute_factor = isolated > 0 ? std::max(1.0, contended / isolated) : 1.0;

  // 3. The collective starved by compute: proportional to the HBM bandwidth the compute op uses.
  const double op_us = std::max(1e-9, isolated);
  const double compute_hbm_share = std::min(1.0, op.bytes / (op_us * 1e3) / std::max(1.0, gpu.hbm_GBps));
  out.comm_factor = 1.0 + m_interference.comm_slowdown * compute_hbm_share;
  (void)collective;
  return out;
}

// ---------------------------------------------------------------------------------------------------

Result<ClusterSpec> cluster_from_calibration(const Calibration& cal, int ranks, int cores_per_rank) {
  auto missing = [](const char* what) {
    return make_error(
        ErrorCode::unavailable,
        fmt::format("cluster localhost: the profile has no {}; run 'lagom profile' first", what));
  };
  if (cal.gemms.empty()) return missing("GEMM fit");
  if (!cal.memory_bw_GBps) return missing("memory bandwidth measurement");
  ClusterSpec c;
  c.name = "localhost";
  c.description = fmt::format("this machine ({}), from profile run {}",
                              cal.host.empty() ? "unknown host" : cal.host, cal.run_id);
  c.gpus_per_node = std::max(1, ranks);
  c.nodes = 1;
  c.has_nccl = false;
  c.nccl_channels = 1;
  c.gpu.name = "cpu";
  for (const auto& fit : cal.gemms) {
    const auto p = parse_precision(fit.precision);
    if (!p || fit.peak_tflops <= 0) continue;
    switch (*p) {
      case Precision::bf16:
        c.gpu.bf16_tflops = fit.peak_tflops;
        break;
      case Precision::fp16:
        c.gpu.fp16_tflops = fit.peak_tflops;
        break;
      case Precision::fp8:
        c.gpu.fp8_tflops = fit.peak_tflops;
        break;
      case Precision::tf32:
        c.gpu.tf32_tflops = fit.peak_tflops;
        break;
      case Precision::fp32:
        c.gpu.fp32_tflops = fit.peak_tflops;
        break;
    }
  }
  if (c.gpu.fp32_tflops <= 0) {
    c.gpu.fp32_tflops = std::max({c.gpu.bf16_tflops, c.gpu.fp16_tflops, c.gpu.tf32_tflops, c.gpu.fp8_tflops});
  }
  if (c.gpu.fp32_tflops <= 0) return missing("usable GEMM fit");
  c.gpu.hbm_GBps = *cal.memory_bw_GBps;
  c.gpu.memory_gib = cal.memory_gib.value_or(0) > 0 ? *cal.memory_gib : 1.0;
  c.gpu.sms = std::max(1, cores_per_rank);
  c.gpu.sm_arch = 0;
  c.gpu.l2_mib = 0;
  c.intra.kind = FabricKind::shm;
  c.intra.efficiency = 1.0;
  // Intra-node transport from the widest intra-node collective fit: its bus bandwidth, and its latency per
  // ring step (an all-reduce has 2(n−1) steps).
  const CollectiveFit* best = nullptr;
  for (const auto& fit : cal.collectives) {
    if (fit.nodes == 1 && fit.bus_bw_GBps > 0 && (best == nullptr || fit.ranks > best->ranks)) best = &fit;
  }
  if (best != nullptr) {
    c.intra.bw_GBps = best->bus_bw_GBps;
    const int steps = best->collective == "allreduce" ? 2 * (best->ranks - 1) : std::max(1, best->ranks - 1);
    c.intra.latency_us = best->latency_us / std::max(1, steps);
  } else {
    c.intra.bw_GBps = *cal.memory_bw_GBps / 2.0;  // a shared-memory copy reads and writes each byte
    c.intra.latency_us = 1.0;
  }
  c.gpu.channel_GBps = c.intra.bw_GBps;
  return c;
}

}  // namespace lagom::model
