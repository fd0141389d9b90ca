// CostModel: compute ops of a transformer layer (FLOPs, bytes, time) and the collectives between them.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/cost_model.h"

namespace lagom::model {

namespace {

// GEMM efficiency defaults (docs/model.md "Compute"):
//  * tiles of 128×128 outputs per CTA (cuBLAS/CUTLASS large-tile kernels on sm80/sm90);
//  * wave quantisation: ceil(tiles / SMs) waves, the last one partly empty;
//  * tile padding: edge tiles compute a full 128×128 tile;
//  * k efficiency k / (k + k0): the mainloop's prologue/epilogue cost, k0 = 64 elements // unverified;
//  * sustained fraction of peak of a large, well-shaped GEMM: sm80 0.88 (cuBLAS bf16 8192³ ≈ 270–280
//    TFLOP/s on A100-SXM), sm90 0.75 (≈ 740 TFLOP/s on H100-SXM), other GPUs 0.80 // unverified: public
//    benchmark figures, not measured here; a profile's GemmFit replaces all of this.
constexpr double k_tile = 128.0;
constexpr double k_k0 = 64.0;
// Streaming kernels reach about 80% of datasheet HBM bandwidth // unverified (STREAM-like copy on A100/H100).
constexpr double k_hbm_efficiency = 0.8;

double sustained_fraction(const GpuSpec& gpu) {
  if (gpu.sm_arch == 0) return 1.0;  // localhost: the peak already is a measured throughput
  if (gpu.sm_arch >= 90) return 0.75;
  if (gpu.sm_arch == 80) return 0.88;
  return 0.80;
}

double ceil_div(double a, double b) {
  return std::ceil(a / b);
}

}  // namespace

CostModel::CostModel(ClusterSpec cluster, std::optional<Calibration> calibration)
    : m_cluster(std::move(cluster)), m_calibration(std::move(calibration)) {
  if (m_calibration) {
    const InterferenceFit& fit = m_calibration->interference;
    if (fit.memory_contention) m_interference.memory_contention = *fit.memory_contention;
    if (fit.comm_slowdown) m_interference.comm_slowdown = *fit.comm_slowdown;
    if (fit.compute_slowdown_per_channel)
      m_interference.slowdown_per_channel = *fit.compute_slowdown_per_channel;
  }
}

double CostModel::memory_bw_GBps() const {
  if (m_calibration && m_calibration->memory_bw_GBps) return *m_calibration->memory_bw_GBps;
  return m_cluster.gpu.hbm_GBps * (m_cluster.gpu.sm_arch == 0 ? 1.0 : k_hbm_efficiency);
}

double CostModel::gemm_efficiency(const GemmShape& shape, Precision precision) const {
  if (shape.empty()) return sustained_fraction(m_cluster.gpu);
  if (m_calibration) {
    for (const auto& fit : m_calibration->gemms) {
      if (fit.precision != to_string(precision) || fit.peak_tflops <= 0) continue;
      const double peak = m_cluster.gpu.peak_tflops(precision);
      const double flops = shape.flops();
      const double achieved = fit.peak_tflops * flops / (flops + fit.half_flops);
      return peak > 0 ? achieved / peak : 1.0;
    }
  }
  const double m = static_cast<double>(shape.m);
  const double n = static_cast<double>(shape.n);
  const double k = static_cast<double>(shape.k);
  const double tiles_m = ceil_div(m, k_tile);
  const double tiles_n = ceil_div(n, k_tile);
  const double tiles = tiles_m * tiles_n * static_cast<double>(shape.batch);
  const double sms = std::max(1, m_cluster.gpu.sms);
  const double wave_eff = tiles / (ceil_div(tiles, sms) * sms);
  const double tile_eff = (m * n) / (tiles_m * k_tile * tiles_n * k_tile);
  const double k_eff = k / (k + k_k0);
  return sustained_fraction(m_cluster.gpu) * wave_eff * tile_eff * k_eff;
}

double CostModel::gemm_time_us(const GemmShape& shape, Precision precision) const {
  ComputeOp op;
  op.kind = OpKind::gemm;
  op.flops = shape.flops();
  op.gemm = shape;
  const double e = bytes_per_element(precision);
  op.bytes = e * static_cast<double>(shape.batch) *
             (static_cast<double>(shape.m) * shape.k + static_cast<double>(shape.k) * shape.n +
              static_cast<double>(shape.m) * shape.n);
  return op_time_us(op, precision);
}

double CostModel::op_time_us(const ComputeOp& op, Precision precision) const {
  double compute_us = 0;
  if (op.flops > 0) {
    double peak = m_cluster.gpu.peak_tflops(precision);
    if (peak <= 0) peak = m_cluster.gpu.fp32_tflops;
    const double eff = (op.kind == OpKind::gemm || op.kind == OpKind::attention)
                           ? gemm_efficiency(op.gemm, precision)
                           : sustained_fraction(m_cluster.gpu);
    compute_us = op.flops / (peak * 1e12 * std::max(eff, 1e-6)) * 1e6;
  }
  const double memory_us = op.bytes / (memory_bw_GBps() * 1e3);
  // The host dispatches kernels asynchronously: its per-op cost is hidden behind GPU work that takes
  // longer and bounds ops that are shorter (eager-mode frameworks are host-bound on small kernels).
  return std::max(std::max(compute_us, memory_us), m_cluster.kernel_launch_us);
}

ComputeOp CostModel::make_op(std::string name, OpKind kind, Phase phase, double flops, double model_flops,
                             double bytes, GemmShape gemm, Precision precision) const {
  ComputeOp op;
  op.name = std::move(name);
  op.kind = kind;
  op.phase = phase;
  op.flops = flops;
  op.model_flops = phase == Phase::recompute ? 0.0 : model_flops;
  op.bytes = bytes;
  op.gemm = gemm;
  op.time_us = op_time_us(op, precision);
  return op;
}

// ---------------------------------------------------------------------------------------------------

namespace {

// Builds the forward sequence of a layer; backward and recompute are derived from it.
struct LayerBuilder {
  const CostModel& model;
  const WorkloadSpec& w;
  const Strategy& s;
  std::vector<Step> steps;

  double e = 2;          // bytes per activation element
  double tokens = 0;     // tokens per rank in the layer's GEMMs (b · s / cp)
  double tokens_sp = 0;  // tokens per rank in norms/elementwise (÷ tp with SP)
  double t = 1;

  void compute(const std::string& name, OpKind kind, double flops, double bytes, GemmShape gemm = {}) {
    Step step;
    step.compute.name = name;
    step.compute.kind = kind;
    step.compute.flops = flops;
    step.compute.model_flops = (kind == OpKind::gemm || kind == OpKind::attention) ? flops : 0.0;
    step.compute.bytes = bytes;
    step.compute.gemm = gemm;
    steps.push_back(std::move(step));
  }
  void gemm(const std::string& name, double m, double n, double k, double batch = 1) {
    GemmShape g{static_cast<std::int64_t>(m), static_cast<std::int64_t>(n), static_cast<std::int64_t>(k),
                static_cast<std::int64_t>(batch)};
    compute(name, OpKind::gemm, 2.0 * m * n * k * batch, e * batch * (m * k + k * n + m * n), g);
  }
  void comm(const std::string& name, Collective c, Group g, double bytes) {
    Step step;
    step.is_comm = true;
    step.comm.name = name;
    step.comm.collective = c;
    step.comm.group = g;
    step.comm.bytes = bytes;
    steps.push_back(std::move(step));
  }
  // Entering a TP region (f in Megatron): all-gather with SP, nothing otherwise.
  void tp_enter(const std::string& name) {
    if (s.tp > 1 && s.sp) comm(name + ".allgather", Collective::allgather, Group::tp, tokens * w.hidden * e);
  }
  // Leaving a TP region (g): all-reduce, or reduce-scatter with SP.
  void tp_exit(const std::string& name) {
    if (s.tp <= 1) return;
    if (s.sp)
      comm(name + ".reducescatter", Collective::reducescatter, Group::tp, tokens * w.hidden * e);
    else
      comm(name + ".allreduce", Collective::allreduce, Group::tp, tokens * w.hidden * e);
  }
  void norm(const std::string& name) { compute(name, OpKind::norm, 0, 2.0 * tokens_sp * w.hidden * e); }
  void residual(const std::string& name) {
    // read the branch and the residual, write the sum, write a 1-byte dropout mask
    compute(name, OpKind::elementwise, 0, tokens_sp * w.hidden * (3.0 * e + 1.0));
  }

  void attention_block(const std::string& prefix, bool cross) {
    const double h = static_cast<double>(w.hidden);
    const double d = static_cast<double>(w.head_dim());
    const double kvd = static_cast<double>(w.kv_heads) * d;
    const double seq = static_cast<double>(w.seq);
    const double b = static_cast<double>(s.micro_batch);
    norm(prefix + ".norm");
    tp_enter(prefix);
    if (cross) {
      gemm(prefix + ".q", tokens, h / t, h);
      gemm(prefix + ".kv", tokens, 2.0 * kvd / t, h);
    } else {
      gemm(prefix + ".qkv", tokens, (h + 2.0 * kvd) / t, h);
    }
    const bool ulysses = s.cp > 1 && s.cp_comm == CpCommType::a2a;
    const bool ring = s.cp > 1 && s.cp_comm == CpCommType::p2p;
    const bool kv_gather = s.cp > 1 && s.cp_comm == CpCommType::allgather;
    if (ulysses)
      comm(prefix + ".cp_alltoall", Collective::alltoall, Group::cp, tokens * (h + 2.0 * kvd) / t * e);
    // One rank's K and V (tokens/cp of the sequence, kv_heads/tp heads): what the ring sends per step
    // and what the all-gather gathers from each rank. TE exchanges them in the attention's dtype (BF16
    // in FP8 runs too: NVIDIA/TransformerEngine@3b2a7b00:transformer_engine/pytorch/attention.py:1963-1994).
    const double kv_block_bytes = 2.0 * tokens * kvd / t * e;
    if (kv_gather) {
      // K and V all-gathered over CP before the attention, exposed (…/attention.py:3506-3509, 3588-3589).
      comm(prefix + ".cp_allgather_k", Collective::allgather, Group::cp, s.cp * kv_block_bytes / 2.0);
      comm(prefix + ".cp_allgather_v", Collective::allgather, Group::cp, s.cp * kv_block_bytes / 2.0);
    }
    // Core attention per rank. Ulysses: heads/(tp·cp) heads over the full sequence. Ring and all-gather:
    // heads/tp heads, the rank's tokens/cp queries against the whole sequence's keys, as cp steps of a
    // (tokens/cp)² block each (the causal load balancing gives every step the same work:
    // …/attention.py:1742, two of the 2·cp sequence chunks per rank). Scores and values in full (no causal
    // halving: docs/model.md#flops-convention), so the three do the same FLOPs.
    const double heads_local = static_cast<double>(w.heads) / (t * (ulysses ? s.cp : 1));
    const double batch = b * heads_local;
    const double q_rows = ulysses ? seq : tokens / b;  // query rows per sequence of one attention kernel
    const double kv_rows = ulysses || s.cp == 1 ? seq : tokens / b;  // key rows per kernel (one CP step)
    if (s.attention == Attention::flash) {
      GemmShape g{static_cast<std::int64_t>(q_rows), static_cast<std::int64_t>(kv_rows),
                  static_cast<std::int64_t>(d), static_cast<std::int64_t>(2 * batch)};
      const double io = b * seq * (2.0 * h + 2.0 * kvd) / (t * s.cp) * e;  // read q, k, v; write o
      compute(prefix + ".attention", OpKind::attention, 4.0 * batch * q_rows * seq * d, io, g);
    } else {
      GemmShape scores{static_cast<std::int64_t>(seq), static_cast<std::int64_t>(seq),
                       static_cast<std::int64_t>(d), static_cast<std::int64_t>(batch)};
      compute(prefix + ".scores", OpKind::attention, 2.0 * batch * seq * seq * d,
              e * batch * (2.0 * seq * d + seq * seq), scores);
      // softmax + dropout: read scores, write probabilities and dropped-out probabilities, 1-byte mask
      compute(prefix + ".softmax", OpKind::elementwise, 0, batch * seq * seq * (3.0 * e + 1.0));
      GemmShape values{static_cast<std::int64_t>(seq), static_cast<std::int64_t>(d),
                       static_cast<std::int64_t>(seq), static_cast<std::int64_t>(batch)};
      compute(prefix + ".values", OpKind::attention, 2.0 * batch * seq * seq * d,
              e * batch * (2.0 * seq * d + seq * seq), values);
    }
    if (ring) {
      // The ring's K/V exchange: cp − 1 sends of one block, each beside one attention step (the simulator
      // prices the overlap: simulator/overlap.h price_ring_attention). Then the per-step output correction
      // (merging each step's partial output with its log-sum-exp, …/attention.py:2465-2530): cp − 1 passes
      // reading the running and the step's output and writing the running one.
      comm(prefix + ".cp_ring", Collective::sendrecv, Group::cp, kv_block_bytes);
      compute(prefix + ".cp_correction", OpKind::elementwise, 0, (s.cp - 1) * 3.0 * tokens * h / t * e);
    }
    if (ulysses) comm(prefix + ".cp_alltoall_out", Collective::alltoall, Group::cp, tokens * h / t * e);
    gemm(prefix + ".proj", tokens, h, h / t);
    tp_exit(prefix);
    residual(prefix + ".residual");
  }

  void mlp_block(int layer) {
    const double h = static_cast<double>(w.hidden);
    const double mult = is_gated(w.ffn_type) ? 2.0 : 1.0;  // fc1 width multiple (gate + up)
    norm("mlp.norm");
    if (!w.is_moe_layer(layer)) {
      tp_enter("mlp");
      const double f = static_cast<double>(w.ffn_hidden) / t;
      gemm("mlp.fc1", tokens, mult * f, h);
      compute("mlp.act", OpKind::elementwise, 0, tokens * f * e * (mult + 1.0));
      gemm("mlp.fc2", tokens, h, f);
      tp_exit("mlp");
    } else {
      moe_block();
    }
    residual("mlp.residual");
  }

  // A MoE layer as Megatron-Core 0.10 runs it (docs/model.md "Mixture of experts"). The layer takes the
  // sequence-parallel shard of the hidden states (tokens/tp rows; resolve_strategy requires sp with tp > 1,
  // as Megatron does: NVIDIA/Megatron-LM@core_v0.10.0:megatron/core/transformer/moe/moe_layer.py:131-139),
  // routes it, and the dispatcher brings every local expert its rows from the expert-TP × EP ranks:
  // alltoall = permute → all-to-all over EP → all-gather over expert TP → sort by local expert, and back
  // (…/moe/token_dispatcher.py:260-268, 502-513, 560-575); allgather = all-gather of the tokens over
  // expert TP × EP, each rank computing its experts' rows, reduce-scatter back (:155-185, 235-250).
  void moe_block() {
    const MoeSpec& moe = *w.moe;
    const double h = static_cast<double>(w.hidden);
    const double mult = is_gated(w.ffn_type) ? 2.0 : 1.0;
    const double experts = moe.experts;
    const double etp = s.expert_tp;
    const double fe = static_cast<double>(moe.expert_ffn_hidden) / etp;
    const double experts_local = experts / s.ep;
    const double local = tokens_sp;  // rows this rank routes
    // Rows per expert from this rank: balanced routing local·top_k/experts; with a capacity factor F the
    // capacity ⌈local·top_k/experts·F⌉ (…/moe/moe_utils.py:91-107) caps them (rows beyond it dropped) or,
    // padded to capacity, every expert gets exactly that many (…/token_dispatcher.py:354-372).
    double per_expert = local * moe.top_k / experts;
    if (s.moe_capacity_factor > 0) {
      const double capacity = std::ceil(per_expert * s.moe_capacity_factor);
      per_expert = s.moe_pad_to_capacity ? capacity : std::min(per_expert, capacity);
    }
    const double sent = per_expert * experts;  // rows this rank dispatches (every expert's share)
    // Rows one local expert computes: its share from each of the ep·etp ranks of its expert-TP × EP group.
    const double rows = per_expert * s.ep * etp;
    gemm("moe.router", local, experts, h);
    compute("moe.permute", OpKind::elementwise, 0, (local + sent) * h * e);
    if (s.moe_dispatcher == MoeDispatcher::alltoall) {
      if (s.ep > 1) comm("moe.dispatch", Collective::alltoall, Group::ep, sent * h * e);
      if (etp > 1)
        comm("moe.dispatch_allgather", Collective::allgather, Group::expert_tp, etp * sent * h * e);
      if (experts_local > 1) compute("moe.sort_chunks", OpKind::elementwise, 0, 2.0 * etp * sent * h * e);
    } else if (etp * s.ep > 1) {
      comm("moe.dispatch_allgather", Collective::allgather, Group::expert_tp_ep, etp * s.ep * local * h * e);
    }
    if (s.moe_grouped_gemm) {
      gemm("moe.fc1", rows, mult * fe, h, experts_local);
      compute("moe.act", OpKind::elementwise, 0, experts_local * rows * fe * e * (mult + 1.0));
      gemm("moe.fc2", rows, h, fe, experts_local);
    } else {
      // SequentialMLP: one GEMM pair per local expert, one after another (…/moe/experts.py,
      // moe_layer.py:93-102).
      for (int x = 0; x < static_cast<int>(experts_local); ++x) {
        const std::string name = fmt::format("moe.expert{}", x);
        gemm(name + ".fc1", rows, mult * fe, h);
        compute(name + ".act", OpKind::elementwise, 0, rows * fe * e * (mult + 1.0));
        gemm(name + ".fc2", rows, h, fe);
      }
    }
    if (s.moe_dispatcher == MoeDispatcher::alltoall) {
      if (experts_local > 1) compute("moe.unsort_chunks", OpKind::elementwise, 0, 2.0 * etp * sent * h * e);
      if (etp > 1)
        comm("moe.combine_reducescatter", Collective::reducescatter, Group::expert_tp, etp * sent * h * e);
      if (s.ep > 1) comm("moe.combine", Collective::alltoall, Group::ep, sent * h * e);
    } else if (etp * s.ep > 1) {
      comm("moe.combine_reducescatter", Collective::reducescatter, Group::expert_tp_ep,
           etp * s.ep * local * h * e);
    }
    compute("moe.unpermute", OpKind::elementwise, 0, (local + sent) * h * e);
    if (moe.shared_experts > 0) {
      // Shared experts: a dense TP MLP of shared_experts × the expert width beside the routed ones.
      const double fs = static_cast<double>(moe.expert_ffn_hidden) / t * moe.shared_experts;
      tp_enter("moe.shared");
      gemm("moe.shared.fc1", tokens, mult * fs, h);
      compute("moe.shared.act", OpKind::elementwise, 0, tokens * fs * e * (mult + 1.0));
      gemm("moe.shared.fc2", tokens, h, fs);
      tp_exit("moe.shared");
    }
  }
};

// The backward of one forward step list, in reverse: each GEMM splits into dgrad and wgrad; flash attention
// recomputes its scores (5 matmuls against the forward's 2: hardware 2.5×, model 2×); each collective turns
// into its adjoint (all-gather ↔ reduce-scatter, all-reduce at a TP region's entry instead of its exit).
std::vector<Step> backward_of(const std::vector<Step>& fwd, const Strategy& s, double tp_bytes) {
  std::vector<Step> out;
  // The TP region entries of the forward (where tp_enter sat: before qkv/q and before fc1/router): their
  // backward collective follows the dgrad of the first GEMM of the region.
  for (auto it = fwd.rbegin(); it != fwd.rend(); ++it) {
    const Step& f = *it;
    if (f.is_comm) {
      Step b = f;
      b.comm.phase = Phase::backward;
      b.comm.name += ".bwd";
      if (f.comm.collective == Collective::allgather) {
        b.comm.collective = Collective::reducescatter;
      } else if (f.comm.collective == Collective::reducescatter) {
        b.comm.collective = Collective::allgather;
      } else if (f.comm.collective == Collective::allreduce && f.comm.group == Group::tp) {
        continue;  // g's backward is the identity; the all-reduce moves to the region's entry (below)
      }
      out.push_back(std::move(b));
      continue;
    }
    const ComputeOp& op = f.compute;
    const bool region_entry = op.name.ends_with(".qkv") || op.name.ends_with(".q") || op.name == "mlp.fc1" ||
                              op.name == "moe.shared.fc1";
    if (op.kind == OpKind::gemm) {
      Step dgrad = f;
      dgrad.compute.name += ".dgrad";
      dgrad.compute.phase = Phase::backward;
      dgrad.compute.gemm = GemmShape{op.gemm.m, op.gemm.k, op.gemm.n, op.gemm.batch};
      Step wgrad = f;
      wgrad.compute.name += ".wgrad";
      wgrad.compute.phase = Phase::backward;
      wgrad.compute.gemm = GemmShape{op.gemm.k, op.gemm.n, op.gemm.m, op.gemm.batch};
      out.push_back(std::move(dgrad));
      if (region_entry && s.tp > 1 && !s.sp) {
        Step ar;
        ar.is_comm = true;
        ar.comm.name = op.name.substr(0, op.name.find('.')) + ".allreduce.bwd";
        if (op.name.ends_with(".qkv") || op.name.ends_with(".q")) ar.comm.name = op.name + ".allreduce.bwd";
        ar.comm.collective = Collective::allreduce;
        ar.comm.group = Group::tp;
        ar.comm.bytes = tp_bytes;
        ar.comm.phase = Phase::backward;
        out.push_back(std::move(ar));
      }
      if (region_entry && s.tp > 1 && s.sp) {
        // Megatron re-gathers the layer-norm output for the weight gradient (overlapped with dgrad).
        Step ag;
        ag.is_comm = true;
        ag.comm.name = op.name + ".wgrad_allgather";
        ag.comm.collective = Collective::allgather;
        ag.comm.group = Group::tp;
        ag.comm.bytes = tp_bytes;
        ag.comm.phase = Phase::backward;
        out.push_back(std::move(ag));
      }
      out.push_back(std::move(wgrad));
    } else {
      Step b = f;
      b.compute.name += ".bwd";
      b.compute.phase = Phase::backward;
      if (op.kind == OpKind::attention && s.cp > 1 && s.cp_comm == CpCommType::allgather) {
        // The backward gathers K and V again (only the rank's own were saved; …/attention.py:3766-3767);
        // the forward gathers' adjoints reduce-scatter dK and dV after it (below).
        const std::string prefix = op.name.substr(0, op.name.find('.'));
        for (const Step& g : fwd) {
          if (!g.is_comm || g.comm.group != Group::cp || !g.comm.name.starts_with(prefix + ".cp_allgather"))
            continue;
          Step again = g;
          again.comm.name += ".bwd_regather";
          again.comm.phase = Phase::backward;
          out.push_back(std::move(again));
        }
      }
      if (op.kind == OpKind::attention) {
        const bool flash = op.name.ends_with(".attention");
        b.compute.flops = op.flops * (flash ? 2.5 : 2.0);
        b.compute.model_flops = op.model_flops * 2.0;
        b.compute.bytes = op.bytes * 2.0;
      } else {
        b.compute.bytes =
            op.bytes * 2.0;  // read the saved input and the incoming gradient, write the gradient
      }
      out.push_back(std::move(b));
    }
  }
  return out;
}

}  // namespace

std::vector<Step> CostModel::layer_steps(const WorkloadSpec& w, const Strategy& s, Phase phase,
                                         int layer) const {
  LayerBuilder lb{*this, w, s, {}};
  lb.e = s.precision == Precision::fp32 || s.precision == Precision::tf32 ? 4.0 : 2.0;
  lb.t = s.tp;
  lb.tokens = static_cast<double>(s.micro_batch) * static_cast<double>(w.seq) / s.cp;
  lb.tokens_sp = lb.tokens / (s.sp ? s.tp : 1);
  lb.attention_block("attn", false);
  if (w.decoder_layers > 0 && layer >= w.encoder_layers) lb.attention_block("cross", true);
  lb.mlp_block(layer);

  std::vector<Step> steps;
  if (phase == Phase::forward) {
    steps = std::move(lb.steps);
  } else if (phase == Phase::backward) {
    steps = backward_of(lb.steps, s, lb.tokens * w.hidden * lb.e);
  } else {
    if (s.recompute == Recompute::full) {
      steps = std::move(lb.steps);
    } else if (s.recompute == Recompute::selective) {
      for (auto& step : lb.steps) {
        if (!step.is_comm &&
            (step.compute.kind == OpKind::attention || step.compute.name.ends_with(".softmax"))) {
          steps.push_back(std::move(step));
        }
      }
    }
    for (auto& step : steps) {
      step.compute.phase = Phase::recompute;
      step.comm.phase = Phase::recompute;
      step.compute.name += step.is_comm ? "" : ".recompute";
      step.comm.name += step.is_comm ? ".recompute" : "";
    }
  }
  // Flash attention's backward recomputes scores (hardware FLOPs only); model FLOPs never include recompute.
  for (auto& step : steps) {
    if (step.is_comm) {
      step.comm.phase = phase;
      continue;
    }
    step.compute.phase = phase;
    if (phase == Phase::recompute) step.compute.model_flops = 0;
    step.compute.time_us = op_time_us(step.compute, s.precision);
  }
  return steps;
}

std::vector<Step> CostModel::embedding_steps(const WorkloadSpec& w, const Strategy& s, Phase phase) const {
  const double e = s.precision == Precision::fp32 || s.precision == Precision::tf32 ? 4.0 : 2.0;
  const double tokens = static_cast<double>(s.micro_batch) * static_cast<double>(w.seq) / s.cp;
  std::vector<Step> steps;
  Step lookup;
  lookup.compute =
      make_op(phase == Phase::forward ? "embedding" : "embedding.bwd", OpKind::embedding, phase, 0, 0,
              (phase == Phase::forward ? 2.0 : 3.0) * tokens * w.hidden * e, {}, s.precision);
  if (phase == Phase::backward || phase == Phase::forward) steps.push_back(lookup);
  // The vocabulary-parallel embedding sums partial lookups over TP (reduce-scatter with SP).
  if (phase == Phase::forward && s.tp > 1) {
    Step c;
    c.is_comm = true;
    c.comm.name = s.sp ? "embedding.reducescatter" : "embedding.allreduce";
    c.comm.collective = s.sp ? Collective::reducescatter : Collective::allreduce;
    c.comm.group = Group::tp;
    c.comm.bytes = tokens * w.hidden * e;
    c.comm.phase = phase;
    steps.push_back(c);
  }
  if (phase == Phase::recompute) steps.clear();
  return steps;
}

std::vector<Step> CostModel::head_steps(const WorkloadSpec& w, const Strategy& s, Phase phase) const {
  const double e = s.precision == Precision::fp32 || s.precision == Precision::tf32 ? 4.0 : 2.0;
  const double tokens = static_cast<double>(s.micro_batch) * static_cast<double>(w.seq) / s.cp;
  const double tokens_sp = tokens / (s.sp ? s.tp : 1);
  const double h = static_cast<double>(w.hidden);
  const double v = static_cast<double>(w.vocab) / s.tp;
  std::vector<Step> steps;
  if (phase == Phase::recompute) return steps;
  auto add = [&](std::string name, OpKind kind, double flops, double bytes, GemmShape g) {
    Step st;
    st.compute = make_op(std::move(name), kind, phase, flops, kind == OpKind::gemm ? flops : 0.0, bytes, g,
                         s.precision);
    steps.push_back(std::move(st));
  };
  auto add_comm = [&](std::string name, Collective c, double bytes) {
    Step st;
    st.is_comm = true;
    st.comm = CommOp{std::move(name), c, Group::tp, bytes, phase};
    steps.push_back(std::move(st));
  };
  const GemmShape logits{static_cast<std::int64_t>(tokens), static_cast<std::int64_t>(v),
                         static_cast<std::int64_t>(h), 1};
  const double logits_flops = 2.0 * tokens * v * h;
  const double logits_bytes = e * (tokens * h + h * v + tokens * v);
  if (phase == Phase::forward) {
    add("final.norm", OpKind::norm, 0, 2.0 * tokens_sp * h * e, {});
    if (s.tp > 1 && s.sp) add_comm("logits.allgather", Collective::allgather, tokens * h * e);
    add("logits", OpKind::gemm, logits_flops, logits_bytes, logits);
    // Vocabulary-parallel cross-entropy: fp32 softmax over the local vocabulary shard, then max, sum and the
    // target logit all-reduced over TP (3 fp32 values per token).
    add("loss", OpKind::loss, 0, 2.0 * tokens * v * 4.0, {});
    if (s.tp > 1) add_comm("loss.allreduce", Collective::allreduce, 3.0 * tokens * 4.0);
  } else {
    add("loss.bwd", OpKind::loss, 0, 2.0 * tokens * v * 4.0, {});
    add("logits.dgrad", OpKind::gemm, logits_flops, logits_bytes, GemmShape{logits.m, logits.k, logits.n, 1});
    if (s.tp > 1) {
      if (s.sp)
        add_comm("logits.reducescatter.bwd", Collective::reducescatter, tokens * h * e);
      else
        add_comm("logits.allreduce.bwd", Collective::allreduce, tokens * h * e);
    }
    add("logits.wgrad", OpKind::gemm, logits_flops, logits_bytes, GemmShape{logits.k, logits.n, logits.m, 1});
    add("final.norm.bwd", OpKind::norm, 0, 4.0 * tokens_sp * h * e, {});
  }
  return steps;
}

double CostModel::parameters_per_gpu(const WorkloadSpec& w, const Strategy& s) const {
  double most = 0;
  for (const auto& chunks : pipeline_split(w, s)) most = std::max(most, stage_parameters(w, s, chunks));
  return most;
}

double CostModel::stage_parameters(const WorkloadSpec& w, const Strategy& s,
                                   const std::vector<ChunkLayers>& chunks) const {
  const double h = static_cast<double>(w.hidden);
  const double d = static_cast<double>(w.head_dim());
  const double attention = (2.0 * h * h + 2.0 * h * w.kv_heads * d) / s.tp + 4.0 * h;
  const double mult = ffn_matrices(w.ffn_type);
  // The first stage holds the embedding; the last the output layer (a copy of it when tied and pp > 1, as
  // Megatron keeps); one stage of both (pp = 1) holds one matrix when tied.
  const double matrix = static_cast<double>(w.vocab) * h / s.tp;
  const bool embedding = chunks.front().embedding, output = chunks.back().logits;
  double total = (embedding ? matrix : 0.0) + (output && !(embedding && w.tied_embeddings) ? matrix : 0.0);
  for (const ChunkLayers& chunk : chunks) {
    for (int l = chunk.first_layer; l < chunk.first_layer + chunk.layers; ++l) {
      total += attention;
      if (w.decoder_layers > 0 && l >= w.encoder_layers)
        total += (2.0 * h * h + 2.0 * h * w.kv_heads * d) / s.tp;
      if (w.is_moe_layer(l)) {
        const double expert_ffn = mult * h * static_cast<double>(w.moe->expert_ffn_hidden);
        total += expert_ffn / s.expert_tp * static_cast<double>(w.moe->experts) / s.ep +
                 expert_ffn / s.tp * w.moe->shared_experts + h * w.moe->experts;
      } else {
        total += mult * h * static_cast<double>(w.ffn_hidden) / s.tp;
      }
    }
  }
  return total;
}

ComputeOp CostModel::optimizer_op(const WorkloadSpec& w, const Strategy& s) const {
  // Adam on fp32 master weights: read param, grad, m, v (16 B), write param, m, v and the bf16 copy
  // (14 B) per parameter of the shard this rank updates (÷ dp·cp with ZeRO ≥ 1 / distributed optimizer).
  double params = parameters_per_gpu(w, s);
  if (s.zero >= 1) params /= static_cast<double>(s.dp) * s.cp;
  return make_op("optimizer", OpKind::optimizer, Phase::forward, 0, 0, 30.0 * params, {}, Precision::fp32);
}

double CostModel::pp_message_bytes(const WorkloadSpec& w, const Strategy& s) const {
  const double e = s.precision == Precision::fp32 || s.precision == Precision::tf32 ? 4.0 : 2.0;
  return static_cast<double>(s.micro_batch) * static_cast<double>(w.seq) / s.cp * w.hidden * e /
         (s.sp ? s.tp : 1);
}

double CostModel::model_flops_per_iteration(const WorkloadSpec& w, long global_batch) {
  // Forward matmul FLOPs per token, × 3 for forward + backward (docs/model.md#flops-convention).
  const double h = static_cast<double>(w.hidden);
  const double d = static_cast<double>(w.head_dim());
  const double kvd = static_cast<double>(w.kv_heads) * d;
  const double seq = static_cast<double>(w.seq);
  const double mult = ffn_matrices(w.ffn_type);
  const double attention = 2.0 * h * (h + 2.0 * kvd) + 4.0 * seq * h + 2.0 * h * h;
  double per_token = 2.0 * h * static_cast<double>(w.vocab);  // logits
  for (int l = 0; l < w.layers; ++l) {
    per_token += attention;
    if (w.decoder_layers > 0 && l >= w.encoder_layers)
      per_token += 2.0 * h * h + 2.0 * h * 2.0 * kvd + 4.0 * seq * h + 2.0 * h * h;
    if (w.is_moe_layer(l)) {
      const double expert = 2.0 * mult * h * static_cast<double>(w.moe->expert_ffn_hidden);
      per_token += (w.moe->top_k + w.moe->shared_experts) * expert + 2.0 * h * w.moe->experts;
    } else {
      per_token += 2.0 * mult * h * static_cast<double>(w.ffn_hidden);
    }
  }
  return 3.0 * per_token * seq * static_cast<double>(global_batch);
}

}  // namespace lagom::model
