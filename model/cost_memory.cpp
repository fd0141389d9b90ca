// CostModel: memory per GPU (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", Table 2, generalised to GQA/SwiGLU/MoE), interference, and the localhost cluster.
#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "model/checkpoint_policy.h"
#include "model/cost_model.h"
#include "model/elementwise.h"
#include "model/pipeline_split.h"

namespace lagom::model {

double CostModel::activation_bytes_per_layer(const WorkloadSpec& w, const Strategy& s, int layer) const {
  const double sb = static_cast<double>(w.seq) / s.cp * static_cast<double>(s.micro_batch);
  const double h = static_cast<double>(w.hidden);
  const double kvd = static_cast<double>(w.kv_heads) * static_cast<double>(w.head_dim());
  const double t = s.tp;
  const double sp_div = s.sp ? t : 1.0;
  // A checkpointed layer keeps its input and what its policy saves (full: the input only).
  if (s.checkpoints_layers()) return checkpointed_layer_bytes(w, s, layer);
  // Bytes per element of the inputs the weight-gradient GEMMs keep: FP8 runs keep the FP8 cast of them
  // (Transformer Engine 1.14 Linear saves the FP8 input when the wgrad GEMM runs in FP8,
  // NVIDIA/TransformerEngine@3b2a7b00:transformer_engine/pytorch/module/linear.py:296-305; LayerNormLinear
  // makes its norm output FP8, layernorm_linear.py:130), 16-bit otherwise.
  const double gemm_input_b = s.precision == Precision::fp8 ? 1.0 : 2.0;
  // A dropout mask (1 B per element) is saved only when dropout runs: PyTorch's dropout returns its input
  // unchanged for p = 0 (pytorch/pytorch:aten/src/ATen/native/Dropout.cpp:
  // is_fused_kernel_acceptable needs p > 0, _dropout_impl returns the input when p == 0), and so do
  // Megatron's bias-dropout-add and TE's fused attention. Korthikanti's 34sbh + 5as²b assume dropout.
  const double mask = s.dropout > 0 ? 1.0 : 0.0;
  // Replicated across TP (split by SP): two norm inputs 4sbh, QKV and fc1 inputs 2·sbh per byte, with
  // dropout its two masks 2sbh (bf16: 10sbh with dropout, 8sbh without).
  double replicated = (4.0 + 2.0 * mask) * sb * h + 2.0 * gemm_input_b * sb * h;
  // Split by TP: Q 2sbh, K and V 2sb·kvd each (attention runs in 16 bits), projection input sbh per byte
  // (MHA bf16: 8sbh).
  double split = 2.0 * sb * h + 4.0 * sb * kvd + gemm_input_b * sb * h;
  if (w.decoder_layers > 0 && layer >= w.encoder_layers) {  // cross-attention: norm, input, mask + the same
    replicated += (4.0 + mask) * sb * h;
    split += 4.0 * sb * h + 4.0 * sb * kvd;
  }
  const double mult = is_gated(w.ffn_type) ? 2.0 : 1.0;
  // What an unfused stack's chains keep beyond a fused kernel's inputs (model/elementwise.h): eager
  // RMSNorm's fp32 copy, an unfused gated activation's silu output.
  const double act_e = s.precision == Precision::fp32 || s.precision == Precision::tf32 ? 4.0 : 2.0;
  const double norms = w.decoder_layers > 0 && layer >= w.encoder_layers ? 3.0 : 2.0;
  replicated += norms * sb * h * norm_chain(s.stack, w.norm, act_e).extra_saved_bytes;
  const double unfused_act = activation_chain(s.stack, w.ffn_type, act_e).extra_saved_bytes;
  if (!w.is_moe_layer(layer)) {
    // fc1 output (activation input) 2sb·f·mult, fc2 input sbf per byte: bf16 gelu 4sbf (= 16sbh at f = 4h),
    // swiglu 6sbf.
    split += sb * static_cast<double>(w.ffn_hidden) * (2.0 * mult + gemm_input_b + unfused_act);
  } else {
    const MoeSpec& moe = *w.moe;
    const double fe = static_cast<double>(moe.expert_ffn_hidden);
    split += sb * fe * (2.0 * mult + gemm_input_b + unfused_act) * (moe.top_k + moe.shared_experts);
    replicated +=
        2.0 * sb * h * moe.top_k + 4.0 * sb * moe.experts;  // permuted tokens, router probabilities (fp32)
  }
  double scores = 0;
  if (s.attention == Attention::standard && s.recompute == Recompute::none) {
    // softmax output 2as²b; with dropout its mask as²b and output 2as²b (Korthikanti's 5as²b), per cp rank.
    scores = (2.0 + 3.0 * mask) * w.heads * static_cast<double>(w.seq) * sb;
  }
  return replicated / sp_div + (split + scores) / t;
}

namespace {

// Chunk forwards whose activations stage `stage` holds at once, per chunk: its warm-up forwards and the
// one its first backward follows (schedule.h: 1F1B warms up min(p − s − 1, m) forwards, the interleaved
// schedule (p − s − 1)·2 + (v − 1)·p, the k-th of chunk (k mod p·v) / p; GPipe runs all m first). From
// there every forward is matched by a backward: the count stays. For stage 0 this is Megatron's
// p·(1 + (p − 1)/(p·v)) stage-sized micro-batches (Korthikanti et al. 2022 §4.2.3).
double chunk_forwards_in_flight(const Strategy& s, int stage, int chunk) {
  const long m = std::max(1L, s.micro_batches());
  const long p = s.pp, v = s.vpp;
  switch (s.schedule) {
    case Schedule::gpipe:
      return chunk == 0 ? static_cast<double>(m) : 0.0;
    case Schedule::one_f_one_b:
      return chunk == 0 ? static_cast<double>(std::min<long>(p - stage, m)) : 0.0;
    case Schedule::interleaved: {
      const long forwards = std::min<long>(2L * (p - stage - 1) + (v - 1) * p + 1, m * v);
      // Of the first `forwards`, those with (k mod p·v) / p == chunk.
      const long rounds = forwards / (p * v), rest = forwards % (p * v);
      return static_cast<double>(rounds * p + std::clamp<long>(rest - chunk * p, 0, p));
    }
  }
  return 0.0;
}

}  // namespace

MemoryBreakdown CostModel::memory_per_gpu(const WorkloadSpec& w, const Strategy& s) const {
  const auto split = pipeline_split(w, s);
  MemoryBreakdown most;
  for (int stage = 0; stage < s.pp; ++stage) {
    MemoryBreakdown m = stage_memory(w, s, split[static_cast<std::size_t>(stage)], stage);
    if (stage == 0 || m.total_bytes() > most.total_bytes()) most = m;
  }
  return most;
}

MemoryBreakdown CostModel::stage_memory(const WorkloadSpec& w, const Strategy& s,
                                        const std::vector<ChunkLayers>& chunks, int stage) const {
  MemoryBreakdown m;
  m.stage = stage;
  const double params = stage_parameters(w, s, chunks);
  // Mixed precision (Megatron): bf16/fp16 weights 2 B; the gradient buffer in the dtype it is reduced in
  // (grad_dtype = fp32 if grad_reduce_in_fp32 else the parameter's, NVIDIA/Megatron-LM@aa6207e2:
  // megatron/core/distributed/distributed_data_parallel.py:123); the optimizer's fp32 master weights and
  // Adam moments 12 B; with a 16-bit buffer the step makes an fp32 copy of the gradients it steps on, 4 B
  // while it runs (megatron/core/optimizer/distrib_optimizer.py:1764 `shard_model_grad.float()`, the same
  // in optimizer.py for the plain optimizer). fp32 gradients: 2 + 4 + 12 = 18 B per parameter (Korthikanti
  // et al.'s count); bf16: 2 + 2 + 12 and 4 B during the step. fp32 training: weights 4, gradients 4, Adam
  // moments 8. FP8 primary weights (--fp8-params) are 2 B too: the FP8 data and the transposed FP8 copy TE
  // caches beside it for the other GEMM layout (NVIDIA/TransformerEngine@3b2a7b00:transformer_engine/
  // pytorch/tensor/float8_tensor.py:344-345, 134-135).
  const bool full_precision = s.precision == Precision::fp32 || s.precision == Precision::tf32;
  const double weight_b = full_precision ? 4.0 : 2.0;
  const double grad_b = bytes_per_element(s.gradient_dtype());
  const double opt_b = full_precision ? 8.0 : 12.0;
  const double step_b = grad_b < 4.0 ? 4.0 : 0.0;
  // The distributed optimizer shards over dp·cp; hybrid sharding over dp_shard·cp (Strategy::dp_shard).
  const double shard = s.zero_shard_ranks();
  m.weights_bytes = params * weight_b / (s.zero >= 3 ? shard : 1.0);
  m.grads_bytes = params * grad_b / (s.zero >= 2 ? shard : 1.0);
  m.optimizer_bytes = params * opt_b / (s.zero >= 1 ? shard : 1.0);
  m.step_bytes = params * step_b / (s.zero >= 1 ? shard : 1.0);

  // Activations: each chunk forward in flight holds its chunk's layers for one micro-batch. A layer's bytes
  // depend only on whether it is a MoE and a cross-attention layer and whether it is recomputed (the block
  // method keeps every activation of the layers past the first recompute_layers of a chunk): computed once
  // per kind.
  Strategy kept = s;
  kept.recompute = Recompute::none;
  std::array<double, 8> kind_bytes{};
  kind_bytes.fill(-1.0);
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const double in_flight = chunk_forwards_in_flight(s, stage, static_cast<int>(c));
    if (in_flight <= 0) continue;
    double bytes = 0;
    for (int l = chunks[c].first_layer; l < chunks[c].first_layer + chunks[c].layers; ++l) {
      const bool recomputed = s.recomputes_layer(l - chunks[c].first_layer);
      const auto kind = static_cast<std::size_t>((w.is_moe_layer(l) ? 1 : 0) +
                                                 (w.decoder_layers > 0 && l >= w.encoder_layers ? 2 : 0) +
                                                 (recomputed ? 0 : 4));
      if (kind_bytes[kind] < 0) kind_bytes[kind] = activation_bytes_per_layer(w, recomputed ? s : kept, l);
      bytes += kind_bytes[kind];
    }
    m.activations_bytes += in_flight * bytes;
  }
  if (s.checkpoints_layers()) {
    // Backward recomputes one layer at a time: its activations are live once, less the outputs its policy
    // saved, which are held already (full: all of them).
    const int first = chunks.front().first_layer;
    Strategy input_only = s;
    input_only.recompute = Recompute::full;
    const double held =
        checkpointed_layer_bytes(w, s, first) - checkpointed_layer_bytes(w, input_only, first);
    m.activations_bytes += std::max(0.0, activation_bytes_per_layer(w, kept, first) - held);
  }
  if (chunks.back().logits) {
    // Output layer input and fp32 logits of the micro-batch the last virtual stage holds (Megatron
    // theoretical_memory_usage: 4·s·b·h·(1 + V/h) / t); its forward is followed by its backward at once.
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

  // 1. SMs held by the collective's CTAs: a tiled kernel is scheduled on the free SMs (ceil(tiles / free
  //    SMs) waves, or its k loop split over fewer SMs; gemm_schedule_efficiency).
  double sm_factor = 1.0;
  if (m_interference.slowdown_per_channel) {
    sm_factor = 1.0 + *m_interference.slowdown_per_channel * channels;
  } else if ((op.kind == OpKind::gemm || op.kind == OpKind::attention) && !op.gemm.empty()) {
    const double tiles = std::ceil(op.gemm.m / 128.0) * std::ceil(op.gemm.n / 128.0) * op.gemm.batch;
    const auto k = static_cast<double>(op.gemm.k);
    const int free = sms - out.sms_lost;
    // Time ∝ tiles·k / (SMs · schedule efficiency).
    sm_factor =
        sms * gemm_schedule_efficiency(tiles, k, sms) / (free * gemm_schedule_efficiency(tiles, k, free));
  }
  // 2. HBM bandwidth the collective consumes (its bus traffic lands in and leaves from HBM) and L2 its
  //    in-flight chunks occupy (evicting the compute op's reuse: extra HBM traffic).
  //    On the copy engines (CTA policy zero) a bus byte is read once from the sender's HBM and written once
  //    into the receiver's, and every GPU sends and receives as much: 2 bytes of HBM traffic per bus byte,
  //    no FIFO staging (ce_coll.cc copies window to window).
  const double hbm_per_bus_byte = comm.copy_engine ? 2.0 : m_interference.hbm_bytes_per_bus_byte;
  const double comm_hbm = comm.busbw_GBps * hbm_per_bus_byte;
  out.hbm_share = std::min(0.9, comm_hbm / std::max(1.0, gpu.hbm_GBps));
  const double l2_bytes = gpu.l2_mib * 1024.0 * 1024.0;
  out.l2_share = l2_bytes > 0 ? std::min(1.0, channels * static_cast<double>(comm.config.chunk_bytes) *
                                                  m_interference.l2_chunks_in_flight / l2_bytes)
                              : 0.0;
  const double compute_us = this->compute_us(op, precision);
  const double memory_us = op.bytes / (memory_bw_GBps() * 1e3);
  const double isolated = std::max(compute_us, memory_us);
  // Only a kernel that reuses what it cached (a GEMM's or attention's tiles) fetches again what the
  // collective's chunks evicted; a streaming kernel (elementwise, norm) reads each byte once either way.
  const bool reuses = op.kind == OpKind::gemm || op.kind == OpKind::attention;
  const double refetch = reuses ? m_interference.memory_contention * out.l2_share : 0.0;
  const double contended =
      std::max(compute_us * sm_factor, memory_us * (1.0 + refetch) / (1.0 - out.hbm_share));
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
    const auto p = k_precision_names.parse(fit.precision);
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
