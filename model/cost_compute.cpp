// CostModel: compute ops of a transformer layer (FLOPs, bytes, time) and the collectives between them.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/checkpoint_policy.h"
#include "model/cost_model.h"
#include "model/elementwise.h"

namespace lagom::model {

namespace {

// GEMM efficiency (docs/model.md "Compute"):
//  * tiles of 128×128 outputs per CTA (cuBLAS/CUTLASS large-tile kernels on sm80/sm90);
//  * the tiles' schedule on the GPU's SMs (108 A100, 132 H100 SXM): data-parallel waves, the last one
//    partly empty, or the k loop split over the SMs, whichever is faster (schedule_efficiency, below);
//  * tile padding: edge tiles compute a full 128×128 tile;
//  * per tile the mainloop's prologue (pipeline fill) and epilogue, worth k0 = 64 elements of the k loop
//    // unverified (a 4-stage pipeline of 64-wide k blocks fills in about one);
//  * the sustained fraction of peak of a large, well-shaped GEMM (GpuSpec::gemm_fraction_*, below).
constexpr double k_tile = 128.0;
constexpr double k_k0 = 64.0;

// Sustained GEMM fractions by architecture and precision class. Each is the kernel's issue efficiency at
// its clock times the clock the GPU holds under a full tensor load over the clock the datasheet assumes.
// The datasheet peaks are the SM count × dense FLOPs per clock per SM × a boost clock: A100 SXM
// 108 × 2048 × 1.41 GHz = 312 TFLOP/s (its maximum boost), H100 SXM 132 × 4096 × 1.83 GHz = 989 TFLOP/s
// (below the 1.98 GHz maximum boost); a 700 W H100 running dense tensor work sits at its power cap, so
// its sustained clock is below that (vboost moves power budget to the SMs), an A100 at 400 W much less so.
//  * sm80 bf16/fp16 0.75 (234 TFLOP/s): fitted jointly with FlashAttention-1's speed (below) and vTrain's
//    host dispatch time on every A100 run the project holds (vTrain's 1,440 + 109 Megatron-DeepSpeed fp16
//    runs, llm-foundry's 139 A100 80GB / 40GB FSDP bf16 rows; scripts/fit-generations.py, docs/calibrate.md
//    "Across generations"): an isolated cuBLAS 8192³ reaches ≈ 270–280 TFLOP/s (0.88, the value before, a
//    public benchmark figure), a training step sustains 0.85 of that, as H100's 0.592 is 0.79 of its
//    isolated 0.75 (the same mechanism, clock under a sustained tensor load, milder at A100's 400 W).
//    0.74 until the ring's pipeline fill (model/cost_collectives.cpp ring_fill_us) made collectives
//    slower; refitted then. Leaving vTrain out, the fit on llm-foundry alone gives 0.73; leaving
//    llm-foundry out, vTrain alone gives 0.77. Plausible 0.65–0.90. tf32 0.72: its isolated 0.85 (≈ 133 of
//    156) // unverified, at the same sustained share (no tf32 run to fit); plausible 0.60–0.90.
//  * sm90 bf16/fp16 0.592 and fp8 0.533: fitted by `lagom calibrate` (Levenberg–Marquardt, only these two
//    constants) on every H100 run the project holds at once: the 86 DGX H100 recipe runs of
//    tests/data/validate/dgxc-h100.csv (Megatron-Core / NeMo, Transformer Engine) and llm-foundry's 77 H100
//    rows (Composer + FSDP1, eager PyTorch); the least-squares point is 0.590 / 0.533, and 0.592 is the
//    nearest that keeps both sets' mean signed error within ±3% (docs/calibrate.md "sm90's GEMM fractions
//    on every H100 run"). The two sets disagree: the DGX runs alone ask 0.612 / 0.535, llm-foundry's alone
//    0.568 / 0.473, and each fit predicts the other set 4.8% fast or 7.3% slow, so a mechanism that
//    separates the stacks on H100 is still missing. 0.592 = 586 TFLOP/s: a large cuBLAS GEMM's issue
//    efficiency (~0.8) at the clock a 700 W H100 holds at its power cap in a training job, ~1.35 GHz
//    against the 1.83 GHz of the datasheet peak (isolated-GEMM benchmarks, cool and short, reach
//    ~740 TFLOP/s = 0.75; a training step runs for seconds at the cap); plausible 0.55–0.85. FP8 is lower
//    still (1,055 TFLOP/s): an FP8 k block of 128 moves the bytes of a BF16 block of 64 in half the math
//    time, so the per-tile prologue, epilogue (BF16 output, 2 B per element) and barrier costs weigh twice as
//    much, and the FP8 tensor cores draw more power at the cap; public cuBLAS FP8 figures for large isolated
//    GEMMs on H100 SXM are 1.2–1.45 PFLOP/s (0.61–0.73); plausible 0.45–0.78.
//  * sm90 tf32 as bf16 // unverified; other GPUs 0.80 // unverified.
double default_gemm_fraction(int sm_arch, Precision precision) {
  const bool fp8 = precision == Precision::fp8;
  const bool wide = precision == Precision::tf32 || precision == Precision::fp32;
  if (sm_arch >= 90) return fp8 ? 0.533 : 0.592;
  if (sm_arch == 80) return wide ? 0.72 : 0.75;
  return 0.80;
}

// Bytes per activation (and 16-bit parameter) element of a run: 4 in fp32 and tf32, else 2 (FP8 runs keep
// BF16 activations and parameters).
double activation_bytes(const Strategy& s) {
  return s.precision == Precision::fp32 || s.precision == Precision::tf32 ? 4.0 : 2.0;
}

// Streaming kernels reach about 80% of datasheet HBM bandwidth // unverified (STREAM-like copy on A100/H100);
// plausible 0.6–0.95.
constexpr double k_hbm_efficiency = 0.8;

// Fused attention at head dim 128, causal, long sequences (≥ 4k), as a fraction of the 16-bit dense peak
// at the kernel's hardware FLOPs (the benchmarks count a causal kernel's FLOPs as half):
//  * sm80: FlashAttention-2 (Dao, arXiv:2307.08691, Figs. 4–6, A100 80GB SXM4) forward ≈ 190–200 TFLOP/s,
//    backward ≈ 160–170 TFLOP/s → 0.62 and 0.52 (the paper's "50–73% of the theoretical maximum").
//  * sm90: FlashAttention-3 (Shah et al., arXiv:2407.08608, Figs. 5–6, H100 80GB SXM5, BF16) forward
//    ≈ 640–660 TFLOP/s, backward ≈ 470–520 TFLOP/s → 0.66 and 0.50; cuDNN's fused attention (TE's
//    F16_arbitrary_seqlen backend) is within ±10% of it in that paper's figures.
// Plausible: forward 0.45–0.80, backward 0.35–0.70. Read off the papers' plots // unverified.
double default_attention_fraction(int sm_arch, bool backward) {
  if (sm_arch >= 90) return backward ? 0.50 : 0.66;
  if (sm_arch == 80) return backward ? 0.52 : 0.62;
  return backward ? 0.45 : 0.55;  // // unverified: FlashAttention-2 on other sm8x parts
}

// FlashAttention-2's kernels on sm90 (Attention::flash2): written for sm80's mma.sync, without Hopper's
// wgmma, TMA or warp specialisation, they reach about a third of H100's dense peak: FlashAttention-3
// (Shah et al., arXiv:2407.08608, §1: "FlashAttention-2 achieves only 35% utilization on H100"; Figs. 5-6,
// the FlashAttention-2 series at head dim 128, causal, 8k-16k: forward ≈ 330-350 TFLOP/s, backward
// ≈ 290-310 TFLOP/s) → 0.35 and 0.30 // unverified (read off the plots); plausible: forward 0.28-0.42,
// backward 0.24-0.36. A property of the kernel, not of the cluster: a cluster's attention fractions
// (GpuSpec) describe its fastest kernel (Attention::flash).
double flash2_sm90_fraction(bool backward) {
  return backward ? 0.30 : 0.35;
}

// FlashAttention-1's kernels (Attention::flash1: flash-attn 1.0.x, whose csrc/flash_attn/src/fmha kernels
// at Dao-AILab/flash-attention@v1.0.9 are sm80 code, mma.sync only) against FlashAttention-2's on the same
// GPU: FlashAttention-2 (Dao, arXiv:2307.08691, abstract) is "around 2× faster than FlashAttention", which
// "reaches only 25-40% of the theoretical maximum FLOPs/s" on A100, the paper's figures 1.7-3× over the
// sequence lengths and head dims (plausible 0.33-0.6). 0.575 (FlashAttention-2 1.74× faster) is fitted
// jointly with sm80's GEMM fraction on llm-foundry's 216 FSDP rows, whose attention share grows with the
// sequence (512 to 65,536) at a fixed GEMM share, which is what separates the two constants
// (scripts/fit-generations.py); the paper's round 2× (0.5) left the 32K-65K rows 13-32% slow and the
// short ones 12-14% fast. FlashAttention-2's fraction is the architecture's own on sm80 (0.62 / 0.52) and
// its sm80 kernels' on sm90 (0.35 / 0.30), so FlashAttention-1 runs at 0.36 / 0.30 of A100's peak and
// 0.20 / 0.17 of H100's. Both v1 kernels split the sequence when
// batch × heads leaves SMs idle (fmha_fwd_launch_template.h:21-38, fmha_bwd_launch_template.h:12-28), so no
// separate occupancy term.
constexpr double k_flash1_over_flash2 = 0.575;

double flash1_fraction(int sm_arch, bool backward) {
  const double flash2 =
      sm_arch >= 90 ? flash2_sm90_fraction(backward) : default_attention_fraction(sm_arch, backward);
  return k_flash1_over_flash2 * flash2;
}

// Head-dim dependence of a fused attention kernel: per score element the kernel does 4·d matmul FLOPs
// (Q·Kᵀ and P·V) and one exponential on the SFU (16 per clock per SM on sm80/sm90: CUDA C++ Programming
// Guide, "Arithmetic Instructions" throughput table, exp2f), which the kernel overlaps only in part. With
// r = matmul FLOPs per clock per SM ÷ 16 (sm80: 2048/16 = 128; sm90: 4096/16 = 256, FA-3's "989 TFLOPS of
// matmul but only 3.9 TFLOPS of exponential"), the matmul share is g(d) = 4d / (4d + r); the fraction at
// head dim d is the fraction at 128 × g(d) / g(128) (H100: 64 → ×0.75, 256 → ×1.20, FA-3's Fig. 5 shows
// about 0.77 and 1.15).
double head_dim_scale(int sm_arch, double d, double peak_ratio) {
  const double per_clock = sm_arch >= 90 ? 4096.0 : 2048.0;
  const double r = per_clock / 16.0 * peak_ratio;
  const double r16 = per_clock / 16.0;
  const double g = 4.0 * d / (4.0 * d + r);
  const double g128 = 4.0 * 128.0 / (4.0 * 128.0 + r16);
  return g / g128;
}

// Hardware FLOPs of a causal fused attention kernel over a full one: the kernel skips the key blocks
// entirely above the diagonal and computes the diagonal blocks in full (FlashAttention-2, arXiv:2307.08691
// §3.1.1): with n = ⌈s / 128⌉ blocks per side, n(n + 1)/2 of n² blocks.
// Whether Megatron's fused scale-mask-softmax kernel runs the standard attention's softmax, or its torch
// fallback does (FusedScaleMaskSoftmax.is_kernel_available, microsoft/Megatron-DeepSpeed@fc7f4f03
// megatron/model/fused_softmax.py:152-172; the same test in Megatron-Core's fusions/fused_softmax.py):
// 16-bit input, 16 < sk <= 4096, sq and sk multiples of 4, and the kernel's rows per CTA dividing the
// batch of score matrices (causal: b · heads per rank; padding mask: sq). Rows per CTA, from
// get_batch_per_block (megatron/fused_kernels/scaled_masked_softmax.h:419-431): 128 threads in warps of
// min(next power of two of sk, 32), each warp 2 rows when that power of two is at most 128, else 1.
// E.g. seq 1024, 16 heads at tp 8 and micro-batch 1: 2 score matrices per rank, not a multiple of 4:
// the fallback.
bool fused_softmax_runs(bool input_16bit, double sq, double sk, double attn_batches, bool causal) {
  const auto q = static_cast<long long>(sq), k = static_cast<long long>(sk);
  const auto batches = static_cast<long long>(attn_batches);
  if (!input_16bit || k <= 16 || k > 4096 || q % 4 != 0 || k % 4 != 0 || batches % 4 != 0) return false;
  long long pow2 = 1;
  while (pow2 < k) pow2 *= 2;
  const long long warp = std::min<long long>(pow2, 32);
  const long long rows_per_block = (128 / warp) * (pow2 <= 128 ? 2 : 1);
  return causal ? batches % rows_per_block == 0 : q % rows_per_block == 0;
}

double causal_fraction(double seq) {
  const double n = std::max(1.0, std::ceil(seq / k_tile));
  return (n + 1.0) / (2.0 * n);
}

// The precision an op's math runs in: an FP8 run computes only its FP8 GEMMs on the FP8 tensor cores
// (Transformer Engine's fp8_autocast covers its linear modules); attention, the output layer and every
// other op stay BF16.
Precision math_precision(const ComputeOp& op, Precision precision) {
  return precision == Precision::fp8 && !op.fp8 ? Precision::bf16 : precision;
}

double ceil_div(double a, double b) {
  return std::ceil(a / b);
}

// torch.utils.checkpoint's early stop (Strategy::recompute_early_stop). The non-reentrant checkpoint counts
// the tensors the layer's forward saved; rerunning it in the backward, it raises once the last of them is
// saved again, and the rest of the forward never runs (PyTorch >= 2.1's default // unverified: that source is
// not readable here; torchtitan turns it off, pytorch/torchtitan@25413d224 "Add config to AC to toggle
// early-stop", whose test had needed torch.utils.checkpoint.set_checkpoint_early_stop(False) to count the
// whole recompute; PyTorch 1.13.1's _checkpoint_without_reentrant, torch/utils/checkpoint.py:326-417, reruns
// the whole function). From the layer's end, what follows its last save:
//  * a collective and the residual add save nothing (dropout at p = 0 launches nothing and saves nothing);
//  * a native linear layer saves its input and weight before its GEMM runs (autograd records them before it
//    redispatches: a pack hook under torch.autograd.graph.saved_tensors_hooks fires before aten.mm, checked
//    on PyTorch 1.13.1), so the stop is raised there and the GEMM is skipped; Transformer Engine's linear (an
//    FP8 GEMM here) saves in its autograd.Function after the GEMM, so the GEMM reruns and only what follows
//    it is skipped.
// With dropout the residual's mask is saved after the dropout runs: the stop comes after it, and nothing
// priced is skipped. Dense layers only: a MoE layer's last save is in its combine, after the experts.
void stop_early(std::vector<Step>& steps, const Strategy& s) {
  while (!steps.empty()) {
    const Step& last = steps.back();
    if (last.is_comm || (s.dropout == 0 && last.compute.name.ends_with(".residual"))) {
      steps.pop_back();
      continue;
    }
    if (last.compute.is_weight_gemm() && !last.compute.fp8) steps.pop_back();
    return;
  }
}

}  // namespace

// How well `tiles` output tiles of depth k keep `sms` SMs busy, in mainloop k-steps of the busiest SM
// against the even share tiles·k/sms. cuBLAS chooses among its kernels per shape; two schedules bound what
// it can reach (docs/model.md "Compute"):
//  * data-parallel: one CTA per tile, ceil(tiles/sms) waves, each tile paying its prologue and epilogue
//    (k0) — the last wave partly empty;
//  * split-k / stream-K (CUTLASS's sm90 StreamKScheduler; cuBLAS's split-k kernels): the k-loop iterations
//    of all tiles dealt evenly over the SMs, each SM paying k0 for each of the (at most ceil(tiles/sms) + 1)
//    tile segments it touches and one fix-up: its fp32 partial tile written to a workspace and read back
//    by the SM that finishes the tile, 4× the bytes of a 16-bit tile epilogue, so k_fixup = 4·k0
//    // unverified; plausible 2–8 k0.
// The better of the two is the schedule's efficiency: shapes that fill whole waves run data-parallel, a
// single partial wave of a deep GEMM (the ring-exchange chunks of TP 8: 72 tiles of k = 16384 on 132
// SMs) is split over k instead of leaving 45% of the SMs idle.
constexpr double k_fixup = 4.0 * k_k0;

double gemm_schedule_efficiency(double tiles, double k, int sms_count) {
  const double sms = std::max(1, sms_count);
  const double even = tiles * k / sms;
  const double waves = ceil_div(tiles, sms);
  const double data_parallel = waves * (k + k_k0);
  const double split = even + (waves + 1.0) * k_k0 + k_fixup;
  return even > 0 ? even / std::min(data_parallel, split) : 1.0;
}

double resolved_gemm_fraction(const GpuSpec& gpu, Precision precision) {
  if (gpu.sm_arch == 0) return 1.0;  // localhost: the peak already is a measured throughput
  double set = gpu.gemm_fraction_16;
  if (precision == Precision::fp8) set = gpu.gemm_fraction_fp8;
  if (precision == Precision::tf32 || precision == Precision::fp32) set = gpu.gemm_fraction_32;
  return set > 0 ? set : default_gemm_fraction(gpu.sm_arch, precision);
}

double resolved_hbm_efficiency(const GpuSpec& gpu) {
  if (gpu.sm_arch == 0) return 1.0;  // localhost: hbm_GBps is the measured bandwidth
  return gpu.hbm_efficiency > 0 ? gpu.hbm_efficiency : k_hbm_efficiency;
}

double resolved_attention_fraction(const GpuSpec& gpu, bool backward) {
  if (gpu.sm_arch == 0) return 1.0;
  const double set = backward ? gpu.attention_bwd_fraction : gpu.attention_fwd_fraction;
  return set > 0 ? set : default_attention_fraction(gpu.sm_arch, backward);
}

CostModel::CostModel(ClusterSpec cluster, std::optional<Calibration> calibration, Stack stack)
    : m_cluster(std::move(cluster)), m_calibration(std::move(calibration)), m_stack(stack) {
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
  return m_cluster.gpu.hbm_GBps * resolved_hbm_efficiency(m_cluster.gpu);
}

double CostModel::gemm_efficiency(const GemmShape& shape, Precision precision) const {
  const double sustained = resolved_gemm_fraction(m_cluster.gpu, precision);
  if (shape.empty()) return sustained;
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
  const double tile_eff = (m * n) / (tiles_m * k_tile * tiles_n * k_tile);
  return sustained * tile_eff * gemm_schedule_efficiency(tiles, k, m_cluster.gpu.sms);
}

double CostModel::gemm_time_us(const GemmShape& shape, Precision precision) const {
  ComputeOp op;
  op.kind = OpKind::gemm;
  op.flops = shape.flops();
  op.gemm = shape;
  op.fp8 = precision == Precision::fp8;  // a GEMM asked for in FP8 runs in FP8
  const double e = bytes_per_element(precision);
  op.bytes = e * static_cast<double>(shape.batch) *
             (static_cast<double>(shape.m) * shape.k + static_cast<double>(shape.k) * shape.n +
              static_cast<double>(shape.m) * shape.n);
  return op_time_us(op, precision);
}

double CostModel::compute_us(const ComputeOp& op, Precision precision) const {
  if (op.flops <= 0) return 0;
  const Precision math = math_precision(op, precision);
  const GpuSpec& gpu = m_cluster.gpu;
  double peak = gpu.peak_tflops(math);
  if (peak <= 0) peak = gpu.fp32_tflops;
  double eff = resolved_gemm_fraction(gpu, math);
  if (op.flash && gpu.sm_arch > 0) {
    // A fused attention kernel: the architecture's attention fraction of the 16-bit peak at head dim 128,
    // scaled to this head dim and precision (op.gemm.k is the head dim).
    const double peak16 = gpu.peak_tflops(Precision::bf16) > 0 ? gpu.peak_tflops(Precision::bf16) : peak;
    const bool backward = op.phase == Phase::backward;
    const double fraction = op.flash1                        ? flash1_fraction(gpu.sm_arch, backward)
                            : op.flash2 && gpu.sm_arch >= 90 ? flash2_sm90_fraction(backward)
                                                             : resolved_attention_fraction(gpu, backward);
    eff = fraction * head_dim_scale(gpu.sm_arch, static_cast<double>(std::max<std::int64_t>(op.gemm.k, 1)),
                                    peak / peak16);
  } else if (op.kind == OpKind::gemm || op.kind == OpKind::attention) {
    eff = gemm_efficiency(op.gemm, math);
  }
  return op.flops / (peak * 1e12 * std::max(eff, 1e-6)) * 1e6;
}

double CostModel::op_time_us(const ComputeOp& op, Precision precision) const {
  const double compute = compute_us(op, precision);
  const double memory_us = op.bytes / (memory_bw_GBps() * 1e3);
  // The host dispatches kernels asynchronously: its per-op cost is hidden behind GPU work that takes
  // longer and bounds ops that are shorter (eager-mode frameworks are host-bound on small kernels).
  return std::max(std::max(compute, memory_us), std::max(op.launches, 1) * op_launch_floor_us());
}

double CostModel::op_launch_floor_us() const {
  return std::max(m_cluster.kernel_launch_us, stack_costs(m_stack).op_dispatch_us);
}

double CostModel::collective_call_floor_us() const {
  return std::max(m_cluster.collective_launch_us, stack_costs(m_stack).collective_call_us);
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

// How an FP8 GEMM of Transformer Engine gets its FP8 input (docs/model.md "FP8"): cast from the BF16
// activation by a kernel of its own (te.Linear), written in FP8 by the norm before it (te.LayerNormLinear:
// the QKV and FC1 GEMMs), or no FP8 at all (a GEMM outside TE's linears, e.g. the MoE router).
enum class Fp8Input { cast, norm_fused, none };

// The FP8 conversions a forward FP8 GEMM implies in its backward, bytes read + written.
struct Fp8Backward {
  double grad_cast = 0;  // the output gradient to E5M2, with its transpose when fused (before the dgrad)
  double grad_cast_local = 0;  // the same on the local rows of a gradient all-gathered over TP (before the
                               // all-gather: TE casts into the gather's buffer, module/base.py:903-935)
  double transposes =
      0;  // transposed FP8 copies the wgrad needs that the casts did not write (after the dgrad)
};

// Builds the forward sequence of a layer; backward and recompute are derived from it.
struct LayerBuilder {
  const CostModel& model;
  const WorkloadSpec& w;
  const Strategy& s;
  std::vector<Step> steps;
  std::vector<Fp8Backward> fp8_backward;  // one per step (zero for all but FP8 GEMMs)

  double e = 2;          // bytes per activation element
  double tokens = 0;     // tokens per rank in the layer's GEMMs (b · s / cp)
  double tokens_sp = 0;  // tokens per rank in norms/elementwise (÷ tp with SP)
  double t = 1;
  bool fp8 = false;  // the layer's linear GEMMs run in FP8 (--precision fp8)

  void compute(const std::string& name, OpKind kind, double flops, double bytes, GemmShape gemm = {}) {
    Step step;
    step.compute.name = name;
    step.compute.kind = kind;
    step.compute.flops = flops;
    step.compute.model_flops = (kind == OpKind::gemm || kind == OpKind::attention) ? flops : 0.0;
    step.compute.bytes = bytes;
    step.compute.gemm = gemm;
    steps.push_back(std::move(step));
    fp8_backward.emplace_back();
  }
  // A linear layer's GEMM. In FP8 (Transformer Engine 1.14 delayed scaling,
  // NVIDIA/TransformerEngine@3b2a7b00:transformer_engine/pytorch/module/linear.py:104-138 forward,
  // :440-545 backward; module/base.py:900-975 the output gradient; module/layernorm_linear.py:130-148, 600)
  // each conversion is a memory-bound kernel: a BF16 tensor read (2 B) and written in FP8 (1 B), plus 1 B
  // for the transposed copy the wgrad GEMM needs (fused into the cast when there is no sequence
  // parallelism, a separate fp8_transpose of the FP8 tensor, 2 B, otherwise). The amax of each tensor is
  // computed inside its cast kernel. `gathers_grad`: the output gradient is all-gathered over TP before the
  // dgrad (the row-parallel projection and FC2 with SP): cast on the local rows, transposed once gathered.
  void gemm(const std::string& name, double m, double n, double k, double batch = 1,
            Fp8Input input = Fp8Input::cast, bool gathers_grad = false) {
    const bool in_fp8 = fp8 && input != Fp8Input::none;
    const bool transpose_in_cast = s.fp8_wgrad && !s.sp;  // linear.py:116-129
    if (in_fp8 && input == Fp8Input::cast)
      compute(name + ".cast", OpKind::elementwise, 0, (transpose_in_cast ? 4.0 : 3.0) * batch * m * k);
    GemmShape g{static_cast<std::int64_t>(m), static_cast<std::int64_t>(n), static_cast<std::int64_t>(k),
                static_cast<std::int64_t>(batch)};
    const double e_in = in_fp8 ? 1.0 : e;  // FP8 operands; the output stays BF16
    compute(name, OpKind::gemm, 2.0 * m * n * k * batch, batch * (e_in * (m * k + k * n) + e * m * n), g);
    if (!in_fp8) return;
    steps.back().compute.fp8 = true;
    Fp8Backward& b = fp8_backward.back();
    const double mn = batch * m * n;
    if (gathers_grad && s.sp) {
      b.grad_cast_local = 3.0 * mn / t;
      if (s.fp8_wgrad) b.transposes += 2.0 * mn;  // the gathered gradient's fp8_transpose
    } else {
      b.grad_cast = (s.fp8_wgrad ? 4.0 : 3.0) * mn;
    }
    if (s.fp8_wgrad && (input == Fp8Input::norm_fused || !transpose_in_cast))
      b.transposes += 2.0 * batch * m * k;
  }
  void comm(const std::string& name, Collective c, Group g, double bytes) {
    Step step;
    step.is_comm = true;
    step.comm.name = name;
    step.comm.collective = c;
    step.comm.group = g;
    step.comm.bytes = bytes;
    steps.push_back(std::move(step));
    fp8_backward.emplace_back();
  }
  // Entering a TP region (f in Megatron): all-gather with SP, nothing otherwise. When the region's first
  // GEMM is an FP8 LayerNormLinear, the norm writes FP8 and TE gathers those 1-byte elements (with or
  // without userbuffers: NVIDIA/TransformerEngine@3b2a7b00:transformer_engine/pytorch/module/
  // layernorm_linear.py:119-133 the norm's output is the FP8 userbuffer or a uint8 tensor, :160-171 it is
  // gathered as it is).
  void tp_enter(const std::string& name, bool fp8_input = false) {
    if (s.tp > 1 && s.sp)
      comm(name + ".allgather", Collective::allgather, Group::tp, tokens * w.hidden * (fp8_input ? 1.0 : e));
  }
  // Leaving a TP region (g): all-reduce, or reduce-scatter with SP.
  void tp_exit(const std::string& name) {
    if (s.tp <= 1) return;
    if (s.sp)
      comm(name + ".reducescatter", Collective::reducescatter, Group::tp, tokens * w.hidden * e);
    else
      comm(name + ".allreduce", Collective::allreduce, Group::tp, tokens * w.hidden * e);
  }
  // LayerNorm / RMSNorm: read the input, write the output (in FP8 when an FP8 GEMM follows: TE's
  // LayerNormLinear casts inside the norm kernel, layernorm_linear.py:130-148).
  // Eager PyTorch's RMSNorm is a chain of kernels in fp32 (model/elementwise.h norm_chain).
  void norm(const std::string& name, bool fp8_out) {
    chain(name, OpKind::norm, tokens_sp * w.hidden, norm_chain(s.stack, w.norm, e, fp8_out));
  }
  // An op that is a chain of `elements`-sized kernels (a fused one a chain of one).
  void chain(const std::string& name, OpKind kind, double elements, const ElementwiseChain& c) {
    compute(name, kind, 0, elements * c.forward_bytes);
    steps.back().compute.backward_bytes = elements * c.backward_bytes;
    steps.back().compute.launches = c.forward_launches;
    steps.back().compute.backward_launches = c.backward_launches;
  }
  // Rotary embedding of this rank's Q and K (rope_chain), before the attention (and before Ulysses'
  // all-to-all, as Megatron-Core applies it).
  void rope(const std::string& name, double kvd) {
    if (!w.rope) return;
    const double elements = tokens * (static_cast<double>(w.q_width()) + kvd) / t;
    chain(name, OpKind::elementwise, elements, rope_chain(s.stack, e));
  }
  // The FFN's activation on rows × f outputs (activation_chain).
  void activation(const std::string& name, double rows, double f) {
    chain(name, OpKind::elementwise, rows * f, activation_chain(s.stack, w.ffn_type, e));
  }
  // bias-dropout-add (model/elementwise.h residual_chain).
  void residual(const std::string& name) {
    chain(name, OpKind::elementwise, tokens_sp * w.hidden, residual_chain(s.stack, s.dropout > 0, e));
  }

  // The standard attention's softmax and its dropout, over `batch` score matrices of seq × seq.
  void softmax(const std::string& prefix, double seq, double batch, double q_rows, double kv_rows,
               bool causal) {
    // softmax: read scores, write probabilities (the dropout after it below). Where Megatron's fused
    // kernel cannot run (fused_softmax_runs), its torch fallback runs
    // one kernel per op (microsoft/Megatron-DeepSpeed@fc7f4f03 megatron/model/fused_softmax.py:192-207;
    // NVIDIA/Megatron-LM@d98e8a64dd megatron/core/fusions/fused_softmax.py:299-340), and the backward the
    // autograd node of each. Megatron-DeepSpeed's defaults scale Q·K^T by 1/layer, which puts the softmax
    // in fp32 (--no-query-key-layer-scaling off: megatron/arguments.py:731-737,
    // megatron/model/transformer.py: 184-196): to fp32 (read e, write 4), × scale (8), masked_fill_ (8),
    // softmax (8), back (read 4, write e): 5 kernels, 2e + 28 bytes. Megatron-Core's defaults (no layer
    // scaling, softmax in fp32: megatron/core/transformer/transformer_config.py:481-487): 4 kernels, 2e +
    // 20 bytes. With fp32 activations there is nothing to cast: 3 kernels, 6e bytes, and 2 kernels, 4e
    // bytes.
    // Eager PyTorch has no Megatron kernel: HuggingFace's eager attention scales, adds the mask, runs the
    // softmax in fp32 and casts back (huggingface/transformers@v4.55.4:src/transformers/models/llama/
    // modeling_llama.py eager_attention_forward), Megatron-Core's fallback chain within 2 bytes; Inductor
    // fuses the chain into one kernel whatever the shape.
    const bool fused =
        s.stack == Stack::pytorch_compile ||
        (s.stack != Stack::pytorch_eager && fused_softmax_runs(e == 2.0, q_rows, kv_rows, batch, causal));
    const bool layer_scaling = s.stack == Stack::megatron_deepspeed;
    const bool cast = e == 2.0;
    const int fallback_kernels = (layer_scaling ? 3 : 2) + (cast ? 2 : 0);
    const double fallback_bytes =
        cast ? 2.0 * e + (layer_scaling ? 28.0 : 20.0) : (layer_scaling ? 6.0 : 4.0) * e;
    // The attention dropout is a kernel of its own after the softmax (Megatron's attention_dropout,
    // microsoft/Megatron-DeepSpeed@fc7f4f03 megatron/model/transformer.py ParallelAttention.forward; HF's
    // eager attention alike): torch's native_dropout reads the probabilities and writes them and a 1-byte
    // mask (2e + 1), its backward reads the gradient and the mask and writes the gradient (2e + 1).
    // Inductor fuses it into the softmax: the probabilities are not read again (e + 1), and the fused
    // backward reads the gradient, the mask and the probabilities and writes the gradient (3e + 1).
    // Megatron's fused softmax backward reads the gradient and the saved probabilities and writes the
    // gradient (3e over whole rows; scaled_masked_softmax.h). The torch fallback's backward stays twice its
    // forward.
    const bool compiled = s.stack == Stack::pytorch_compile;
    const bool dropout = s.dropout > 0;
    const double dropout_bytes = !dropout ? 0.0 : compiled ? e + 1.0 : 2.0 * e + 1.0;
    // With a causal mask Megatron's fused path is the upper-triangular kernel (microsoft/Megatron-DeepSpeed
    // @c08e2cc2 megatron/model/fused_softmax.py:178-183; Megatron-Core's fusions/fused_softmax.py:11-53
    // calls the same scaled_upper_triang_masked_softmax_cuda), which reads only the first i + 1 scores of
    // row i and writes the row in full, zeros above the diagonal (@fc7f4f03
    // megatron/fused_kernels/scaled_upper_triang_masked_softmax.h:117-160 and 195-210 forward, 237-305
    // backward): a row's read is (s + 1)/(2s) of it, forward the scores, backward the gradient and the
    // probabilities (e + e/2 forward, 2e backward at s >> 1, against 2e and 3e for a full row).
    const bool triangular = fused && !compiled && causal && q_rows == kv_rows;
    const double read = triangular ? (seq + 1.0) / (2.0 * seq) : 1.0;
    const double fused_forward = e * read + e;
    compute(prefix + ".softmax", OpKind::elementwise, 0,
            batch * seq * seq * ((fused ? fused_forward : fallback_bytes) + dropout_bytes));
    if (fused) {
      const double backward = compiled ? 3.0 * e + (dropout ? 1.0 : 0.0) : 2.0 * e * read + e + dropout_bytes;
      steps.back().compute.backward_bytes = batch * seq * seq * backward;
    } else {
      steps.back().compute.launches = fallback_kernels;
      steps.back().compute.backward_launches = fallback_kernels;
    }
  }

  void attention_block(const std::string& prefix, bool cross, bool causal) {
    const double h = static_cast<double>(w.hidden);
    const double d = static_cast<double>(w.head_dim());
    const double kvd = static_cast<double>(w.kv_heads) * d;
    const double seq = static_cast<double>(w.seq);
    const double b = static_cast<double>(s.micro_batch);
    norm(prefix + ".norm", fp8);
    tp_enter(prefix, fp8);
    if (cross) {
      gemm(prefix + ".q", tokens, h / t, h, 1, Fp8Input::norm_fused);
      gemm(prefix + ".kv", tokens, 2.0 * kvd / t, h, 1, Fp8Input::norm_fused);
    } else {
      gemm(prefix + ".qkv", tokens, (h + 2.0 * kvd) / t, h, 1, Fp8Input::norm_fused);
      rope(prefix + ".rope", kvd);
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
    // …/attention.py:1742, two of the 2·cp sequence chunks per rank). Model FLOPs count the full score
    // matrix (docs/model.md#flops-convention); a causal fused kernel executes about half of it
    // (causal_fraction), at the GPU's attention fraction (compute_us).
    const double heads_local = static_cast<double>(w.heads) / (t * (ulysses ? s.cp : 1));
    const double batch = b * heads_local;
    const double q_rows = ulysses ? seq : tokens / b;  // query rows per sequence of one attention kernel
    const double kv_rows = ulysses || s.cp == 1 ? seq : tokens / b;  // key rows per kernel (one CP step)
    if (is_fused(s.attention)) {
      GemmShape g{static_cast<std::int64_t>(q_rows), static_cast<std::int64_t>(kv_rows),
                  static_cast<std::int64_t>(d), static_cast<std::int64_t>(2 * batch)};
      const double io = b * seq * (2.0 * h + 2.0 * kvd) / (t * s.cp) * e;  // read q, k, v; write o
      const double full = 4.0 * batch * q_rows * seq * d;
      compute(prefix + ".attention", OpKind::attention, full * (causal ? causal_fraction(seq) : 1.0), io, g);
      steps.back().compute.model_flops = full;
      steps.back().compute.flash = true;
      steps.back().compute.flash2 = s.attention == Attention::flash2;
      steps.back().compute.flash1 = s.attention == Attention::flash1;
      steps.back().compute.fp8 = fp8 && s.fp8_attention;
    } else {
      GemmShape scores{static_cast<std::int64_t>(seq), static_cast<std::int64_t>(seq),
                       static_cast<std::int64_t>(d), static_cast<std::int64_t>(batch)};
      compute(prefix + ".scores", OpKind::attention, 2.0 * batch * seq * seq * d,
              e * batch * (2.0 * seq * d + seq * seq), scores);
      softmax(prefix, seq, batch, q_rows, kv_rows, causal);
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
    gemm(prefix + ".proj", tokens, h, h / t, 1, Fp8Input::cast, true);
    tp_exit(prefix);
    residual(prefix + ".residual");
  }

  void mlp_block(int layer) {
    const double h = static_cast<double>(w.hidden);
    const double mult = is_gated(w.ffn_type) ? 2.0 : 1.0;  // fc1 width multiple (gate + up)
    norm("mlp.norm", fp8 && !w.is_moe_layer(layer));       // MoE: a separate TENorm feeds the BF16 router
    if (!w.is_moe_layer(layer)) {
      tp_enter("mlp", fp8);
      const double f = static_cast<double>(w.ffn_hidden) / t;
      gemm("mlp.fc1", tokens, mult * f, h, 1, Fp8Input::norm_fused);
      // the activation (gelu, squared ReLU: read f, write f; swiglu, geglu: read gate and up, write f)
      activation("mlp.act", tokens, f);
      gemm("mlp.fc2", tokens, h, f, 1, Fp8Input::cast, true);
      tp_exit("mlp");
    } else {
      moe_block();
    }
    residual("mlp.residual");
  }

  // The router's small kernels after its GEMM, Megatron-Core 0.10's aux-loss top-k router with a capacity
  // (NVIDIA/Megatron-LM@core_v0.10.0), counted one launch per PyTorch op on [tokens, experts] tensors:
  //  * topk_softmax_with_capacity (moe/moe_utils.py:231-309): top-k, softmax, type_as, zeros_like +
  //    scatter of the probabilities, zeros_like + int + scatter + bool of the map, the map's sum, the
  //    capacity top-k over tokens, zeros_like + scatter + bool of the capacity mask, the masked probs: 15;
  //  * the aux loss (moe/router.py:137-204; moe_utils.py:11-56): the scores' softmax, the
  //    tokens-per-expert all-reduce over TP × CP (one NCCL launch of 8 integers), sum, product, sum,
  //    scale: 6; the loss tracker (moe_utils.py:312-339): divide, accumulate: 2;
  //  * the dispatcher's preprocess and permutations (moe/token_dispatcher.py:336-373; moe_utils.py:156-221):
  //    the map's sum and long(), permute's transpose, arange and masked_select (a device-to-host sync for
  //    its output size), unpermute's two transposes, masked_select (another sync) and zeros: 9.
  // 32 in the forward; the backward's autograd nodes for them (two softmaxes, the cast, the gather and
  // scatter of the top-k, the mask products, the aux loss's scale, sums and expand, masked_scatter, the
  // transposes, the logits' gradient accumulation): about 20 // unverified (counted from the ops, not
  // profiled). Each reads and writes one fp32 [tokens, experts] tensor, 8 B per element (kilobytes at
  // most: 1024 × 8 × 8 B = 64 KiB for Grok-1), so each takes the host's launch time (kernel_launch_us).
  static constexpr int k_router_kernels = 32;
  static constexpr int k_router_backward_kernels = 20;
  void router_bookkeeping(double local, double experts) {
    compute("moe.router_bookkeeping", OpKind::elementwise, 0, k_router_kernels * 8.0 * local * experts);
    steps.back().compute.launches = k_router_kernels;
    steps.back().compute.backward_launches = k_router_backward_kernels;
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
    gemm("moe.router", local, experts, h, 1, Fp8Input::none);
    router_bookkeeping(local, experts);
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
      activation("moe.act", experts_local * rows, fe);
      gemm("moe.fc2", rows, h, fe, experts_local);
    } else {
      // SequentialMLP: one GEMM pair per local expert, one after another (…/moe/experts.py,
      // moe_layer.py:93-102).
      for (int x = 0; x < static_cast<int>(experts_local); ++x) {
        const std::string name = fmt::format("moe.expert{}", x);
        gemm(name + ".fc1", rows, mult * fe, h);
        activation(name + ".act", rows, fe);
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
      activation("moe.shared.act", tokens, fs);
      gemm("moe.shared.fc2", tokens, h, fs);
      tp_exit("moe.shared");
    }
  }
};

// A GEMM rerun for `share` of its output columns (the unsaved part of a fused projection): n, FLOPs and the
// output's bytes shrink with it; the input (`element_bytes` per element, 1 in FP8) is read whole.
void scale_gemm_width(ComputeOp& op, double share, double element_bytes) {
  const double n = static_cast<double>(op.gemm.n);
  const double kept_n = std::max(1.0, std::round(n * share));
  const double in =
      static_cast<double>(op.gemm.batch) * static_cast<double>(op.gemm.m) * static_cast<double>(op.gemm.k);
  const double out_and_weight = std::max(0.0, op.bytes - in * (op.fp8 ? 1.0 : element_bytes));
  op.flops *= kept_n / n;
  op.model_flops *= kept_n / n;
  op.bytes = (op.bytes - out_and_weight) + out_and_weight * kept_n / n;
  op.gemm.n = static_cast<std::int64_t>(kept_n);
}

// The backward of one forward step list, in reverse: each GEMM splits into dgrad and wgrad; flash attention
// recomputes its scores (5 matmuls against the forward's 2: hardware 2.5×, model 2×); each collective turns
// into its adjoint (all-gather ↔ reduce-scatter, all-reduce at a TP region's entry instead of its exit).
// FP8 GEMMs add their gradient conversions (LayerBuilder::gemm): the output gradient's cast before the dgrad
// (before its all-gather when SP gathers it), the transposes after the dgrad (the wgrad needs them; placed
// so that no conversion separates a TP collective from the GEMM it overlaps); a forward cast has no
// backward of its own. TP collectives carry 1-byte elements where TE gathers FP8: the output gradient
// cast on the local rows (module/base.py:903-935) and the FP8 norm output re-gathered for an FP8 wgrad;
// the gradients they reduce-scatter are BF16 (tp_bytes, the 16-bit size of the layer's TP tensor).
std::vector<Step> backward_of(const std::vector<Step>& fwd, const std::vector<Fp8Backward>& fp8_backward,
                              const Strategy& s, double tp_bytes, double element_bytes) {
  const double fp8_tp_bytes = tp_bytes / element_bytes;
  std::vector<Step> out;
  auto conversion = [&out](const ComputeOp& gemm, const char* what, double bytes) {
    if (bytes <= 0) return;
    Step step;
    step.compute.name = gemm.name + what;
    step.compute.kind = OpKind::elementwise;
    step.compute.phase = Phase::backward;
    step.compute.bytes = bytes;
    out.push_back(std::move(step));
  };
  // The TP region entries of the forward (where tp_enter sat: before qkv/q and before fc1/router): their
  // backward collective follows the dgrad of the first GEMM of the region.
  for (std::size_t index = fwd.size(); index-- > 0;) {
    const Step& f = fwd[index];
    const Fp8Backward& fp8 = fp8_backward[index];
    if (f.is_comm) {
      // A forward reduce-scatter leaving an FP8 GEMM becomes the all-gather of its output gradient.
      if (f.comm.collective == Collective::reducescatter && index > 0)
        conversion(fwd[index - 1].compute, ".grad_cast", fp8_backward[index - 1].grad_cast_local);
      Step b = f;
      b.comm.phase = Phase::backward;
      b.comm.name += ".bwd";
      if (f.comm.collective == Collective::allgather) {
        b.comm.collective = Collective::reducescatter;
        if (f.comm.group == Group::tp) b.comm.bytes = tp_bytes;  // the input's gradient, BF16
      } else if (f.comm.collective == Collective::reducescatter) {
        b.comm.collective = Collective::allgather;
        if (f.comm.group == Group::tp && index > 0 && fp8_backward[index - 1].grad_cast_local > 0)
          b.comm.bytes = fp8_tp_bytes;  // the output gradient, cast to FP8 before the gather
      } else if (f.comm.collective == Collective::allreduce && f.comm.group == Group::tp) {
        continue;  // g's backward is the identity; the all-reduce moves to the region's entry (below)
      }
      out.push_back(std::move(b));
      continue;
    }
    const ComputeOp& op = f.compute;
    if (op.kind == OpKind::elementwise && op.name.ends_with(".cast")) continue;
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
      wgrad.compute.fp8 = op.fp8 && s.fp8_wgrad;
      conversion(op, ".grad_cast", fp8.grad_cast);
      out.push_back(std::move(dgrad));
      conversion(op, ".transpose", fp8.transposes);
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
        // The saved FP8 norm output of a LayerNormLinear (the shared experts' te.Linear gathers BF16).
        const bool fp8_norm_out = op.fp8 && s.fp8_wgrad && op.name != "moe.shared.fc1";
        ag.comm.bytes = fp8_norm_out ? fp8_tp_bytes : tp_bytes;
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
        // read the saved input and the incoming gradient, write the gradient (ComputeOp::backward_bytes)
        b.compute.bytes = op.backward_bytes >= 0 ? op.backward_bytes : op.bytes * 2.0;
        b.compute.launches = op.backward_launches;
      }
      out.push_back(std::move(b));
    }
  }
  return out;
}

}  // namespace

std::vector<Step> CostModel::layer_steps(const WorkloadSpec& w, const Strategy& s, Phase phase,
                                         int layer) const {
  LayerBuilder lb{*this, w, s, {}, {}};
  lb.e = activation_bytes(s);
  lb.t = s.tp;
  lb.tokens = static_cast<double>(s.micro_batch) * static_cast<double>(w.seq) / s.cp;
  lb.tokens_sp = lb.tokens / (s.sp ? s.tp : 1);
  lb.fp8 = s.precision == Precision::fp8;
  const bool decoder = w.decoder_layers == 0 || layer >= w.encoder_layers;  // T5's encoder attends both ways
  lb.attention_block("attn", false, w.causal && decoder);
  if (w.decoder_layers > 0 && layer >= w.encoder_layers) lb.attention_block("cross", true, false);
  lb.mlp_block(layer);

  std::vector<Step> steps;
  if (phase == Phase::forward) {
    steps = std::move(lb.steps);
  } else if (phase == Phase::backward) {
    steps = backward_of(lb.steps, lb.fp8_backward, s, lb.tokens * w.hidden * lb.e, lb.e);
    for (Step& step : gradient_path_steps("grad.path", s, phase, layer_parameters(w, s, layer)))
      steps.push_back(std::move(step));
  } else {
    if (s.checkpoints_layers()) {
      // The forward again, less what the layer's policy saved (full: all of it): a GEMM only part of whose
      // outputs are saved (a fused QKV, gate and up) reruns that part of its width.
      for (auto& step : lb.steps) {
        const double share = recompute_share(s.recompute, step, w);
        if (share <= 0) continue;
        if (share < 1) scale_gemm_width(step.compute, share, lb.e);
        steps.push_back(std::move(step));
      }
      if (s.recompute_early_stop && s.recompute == Recompute::full && !w.is_moe_layer(layer))
        stop_early(steps, s);
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

std::vector<Step> CostModel::gradient_path_steps(std::string name, const Strategy& s, Phase phase,
                                                 double parameters) const {
  const GradientPath path = sharded_gradient_path(s);
  if (phase != Phase::backward || path.kernels == 0) return {};
  Step step;
  step.compute = make_op(std::move(name), OpKind::elementwise, phase, 0, 0,
                         path.bytes_per_parameter * parameters, {}, s.precision);
  step.compute.launches = path.kernels;
  step.compute.time_us = op_time_us(step.compute, s.precision);
  return {step};
}

std::vector<Step> CostModel::embedding_steps(const WorkloadSpec& w, const Strategy& s, Phase phase) const {
  const double e = activation_bytes(s);
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
  // The embedding matrix's gradient (with the output layer's where one stage holds both untied), after
  // the whole backward: FSDP wraps them in the root module.
  const double matrix = static_cast<double>(w.vocab) * static_cast<double>(w.hidden) / s.tp;
  for (Step& step : gradient_path_steps("embedding.grad.path", s, phase,
                                        matrix * (s.pp == 1 && !w.tied_embeddings ? 2.0 : 1.0)))
    steps.push_back(std::move(step));
  return steps;
}

// Megatron-Core's vocabulary-parallel cross-entropy (its default, cross_entropy_loss_fusion=False), bytes per
// logit of the local shard, NVIDIA/Megatron-LM@aa6207e2:megatron/core/tensor_parallel/cross_entropy.py:
// forward: logits.float() (read 2, write 4; :28), max (read 4; :30), subtract the max in place (8; :45),
// exp in place (8; :65), sum (read 4; :66), divide by the sum in place (8; :80) = 38 B; backward: the
// gradient in place, grad_input.mul_ (8; :116), and autograd's fp32 → bf16 of the .float() (6) = 14 B.
// The fused variant (--cross-entropy-fusion, cross_entropy_loss_fusion=True: NeMo 2's Llama and Nemotron
// recipes; …/megatron/core/fusions/fused_cross_entropy.py, the same steps in three jit-fused functions
// whose outputs are materialised): forward logits to fp32 with the max (read 2, write 4; :17-23), subtract,
// exp and sum (read 4, write 4; :26-43), divide (8; :46-57) = 22 B; backward the scaled gradient written
// in BF16 (read 4, write 2; :60-78) = 6 B.
constexpr double k_cross_entropy_fwd_bytes = 38.0;
constexpr double k_cross_entropy_bwd_bytes = 14.0;
constexpr double k_fused_cross_entropy_fwd_bytes = 22.0;
constexpr double k_fused_cross_entropy_bwd_bytes = 6.0;

std::vector<Step> CostModel::head_steps(const WorkloadSpec& w, const Strategy& s, Phase phase) const {
  const double e = activation_bytes(s);
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
  // The final norm as the stack runs it (norm_chain), its launches priced with it.
  const ElementwiseChain final_norm = norm_chain(s.stack, w.norm, e);
  auto add_final_norm = [&](std::string name, double per_element, int launches) {
    add(std::move(name), OpKind::norm, 0, per_element * tokens_sp * h, {});
    ComputeOp& op = steps.back().compute;
    op.launches = launches;
    op.time_us = op_time_us(op, s.precision);
  };
  if (phase == Phase::forward) {
    add_final_norm("final.norm", final_norm.forward_bytes, final_norm.forward_launches);
    if (s.tp > 1 && s.sp) add_comm("logits.allgather", Collective::allgather, tokens * h * e);
    add("logits", OpKind::gemm, logits_flops, logits_bytes, logits);
    // Vocabulary-parallel cross-entropy over the local vocabulary shard, then max, sum and the target logit
    // all-reduced over TP (3 fp32 values per token).
    const double per_logit =
        s.cross_entropy_fusion ? k_fused_cross_entropy_fwd_bytes : k_cross_entropy_fwd_bytes;
    add("loss", OpKind::loss, 0, per_logit * tokens * v, {});
    if (s.tp > 1) add_comm("loss.allreduce", Collective::allreduce, 3.0 * tokens * 4.0);
  } else {
    const double per_logit =
        s.cross_entropy_fusion ? k_fused_cross_entropy_bwd_bytes : k_cross_entropy_bwd_bytes;
    add("loss.bwd", OpKind::loss, 0, per_logit * tokens * v, {});
    add("logits.dgrad", OpKind::gemm, logits_flops, logits_bytes, GemmShape{logits.m, logits.k, logits.n, 1});
    if (s.tp > 1) {
      if (s.sp)
        add_comm("logits.reducescatter.bwd", Collective::reducescatter, tokens * h * e);
      else
        add_comm("logits.allreduce.bwd", Collective::allreduce, tokens * h * e);
    }
    add("logits.wgrad", OpKind::gemm, logits_flops, logits_bytes, GemmShape{logits.k, logits.n, logits.m, 1});
    add_final_norm("final.norm.bwd", final_norm.backward_bytes, final_norm.backward_launches);
    // The last stage's output layer (a copy when tied) on its own stage (pp > 1; embedding_steps prices
    // it with the embedding otherwise).
    if (s.pp > 1) {
      for (Step& step : gradient_path_steps("logits.grad.path", s, phase, v * h))
        steps.push_back(std::move(step));
    }
  }
  return steps;
}

// Transformer Engine's delayed scaling (the FP8 recipe Lagom prices) reduces the amaxes of every FP8 tensor
// once per autocast region and direction: Megatron-Core wraps a model chunk's transformer block in
// fp8_autocast with the amax reduction group (NVIDIA/Megatron-LM@core_v0.10.0:megatron/core/transformer/
// transformer_block.py:476-487, parallel_state.py:1132-1155); on leaving it the forward amaxes are
// concatenated, all-reduced with MAX (on the compute stream, async_op=False) and the fused amax-history and
// scale update runs (NVIDIA/TransformerEngine@3b2a7b00:transformer_engine/pytorch/fp8.py:321-372, 420-427);
// the backward's after the chunk's first FP8 module's backward, the last of the chunk
// (module/layernorm_linear.py:739-740). The global buffer holds every FP8 module of the rank (one key per
// recipe and group, fp8.py:193-245): 3 forward and 2 backward fp32 amaxes per GEMM (module/base.py:543-544),
// with a history of 1024 (recipe/__init__.py:151, NeMo's setting too) that the update rolls (read and
// write). The recompute's forward is not reduced again. Empty without FP8. The simulator counts the rank's
// FP8 GEMMs from the layer steps it holds (simulator::ModelCosts): every layer's over pp, a stage's mean.
constexpr double k_amax_history = 1024;
double CostModel::fp8_gemms(const std::vector<Step>& forward) {
  double n = 0;
  for (const Step& step : forward) {
    if (!step.is_comm && step.compute.kind == OpKind::gemm && step.compute.fp8)
      n += static_cast<double>(
          std::max<std::int64_t>(1, step.compute.gemm.batch));  // a grouped GEMM's experts
  }
  return n;
}

std::vector<Step> CostModel::amax_steps(const Strategy& s, Phase phase, double fp8_gemms_on_rank) const {
  const double tensors = fp8_gemms_on_rank * (phase == Phase::forward ? 3.0 : 2.0);
  if (s.precision != Precision::fp8 || phase == Phase::recompute || tensors <= 0) return {};
  std::vector<Step> steps;
  const std::string name = phase == Phase::forward ? "fp8.amax" : "fp8.amax.bwd";
  Step reduce;
  reduce.is_comm = true;
  reduce.comm.name = name + ".allreduce";
  reduce.comm.collective = Collective::allreduce;
  reduce.comm.group = Group::amax;
  reduce.comm.bytes = 4.0 * tensors;
  reduce.comm.phase = phase;
  steps.push_back(reduce);
  // torch.cat of the amaxes, then the fused update: the history rolled (read and write) and the scales.
  Step update;
  update.compute = make_op(name + ".update", OpKind::elementwise, phase, 0, 0,
                           4.0 * tensors * (2.0 + 2.0 * k_amax_history + 4.0), {}, Precision::fp32);
  update.compute.launches = 2;
  steps.push_back(update);
  return steps;
}

double CostModel::parameters_per_gpu(const WorkloadSpec& w, const Strategy& s) const {
  double most = 0;
  for (const auto& chunks : pipeline_split(w, s)) most = std::max(most, stage_parameters(w, s, chunks));
  return most;
}

double CostModel::layer_parameters(const WorkloadSpec& w, const Strategy& s, int l) const {
  const double h = static_cast<double>(w.hidden);
  const double d = static_cast<double>(w.head_dim());
  double total = (2.0 * h * h + 2.0 * h * w.kv_heads * d) / s.tp + 4.0 * h;
  if (w.decoder_layers > 0 && l >= w.encoder_layers) total += (2.0 * h * h + 2.0 * h * w.kv_heads * d) / s.tp;
  const double mult = ffn_matrices(w.ffn_type);
  if (w.is_moe_layer(l)) {
    const double expert_ffn = mult * h * static_cast<double>(w.moe->expert_ffn_hidden);
    total += expert_ffn / s.expert_tp * static_cast<double>(w.moe->experts) / s.ep +
             expert_ffn / s.tp * w.moe->shared_experts + h * w.moe->experts;
  } else {
    total += mult * h * static_cast<double>(w.ffn_hidden) / s.tp;
  }
  return total;
}

double CostModel::stage_parameters(const WorkloadSpec& w, const Strategy& s,
                                   const std::vector<ChunkLayers>& chunks) const {
  // The first stage holds the embedding; the last the output layer (a copy of it when tied and pp > 1, as
  // Megatron keeps); one stage of both (pp = 1) holds one matrix when tied.
  const double matrix = static_cast<double>(w.vocab) * static_cast<double>(w.hidden) / s.tp;
  const bool embedding = chunks.front().embedding, output = chunks.back().logits;
  double total = (embedding ? matrix : 0.0) + (output && !(embedding && w.tied_embeddings) ? matrix : 0.0);
  for (const ChunkLayers& chunk : chunks) {
    for (int l = chunk.first_layer; l < chunk.first_layer + chunk.layers; ++l)
      total += layer_parameters(w, s, l);
  }
  return total;
}

ComputeOp CostModel::optimizer_op(const WorkloadSpec& w, const Strategy& s) const {
  // Per parameter of the shard this rank updates (÷ dp·cp with ZeRO ≥ 1 / the distributed optimizer),
  // Megatron-Core's distributed optimizer with a fused multi-tensor Adam (apex/TE FusedAdam) on fp32 master
  // weights, NVIDIA/Megatron-LM@aa6207e2:megatron/core/optimizer/:
  //  * the 16-bit gradient shard to its fp32 main gradient: read 2, write 4 (distrib_optimizer.py:1764);
  //  * the gradient norm for clipping: read 4 (clip_grads.py:51 get_grad_norm_fp32, multi_tensor_l2norm);
  //  * Adam: read param, grad, m, v (16), write param, m, v (12);
  //  * the master weight to the model's weight (distrib_optimizer.py:1774): read 4, write 2 (BF16) or 1 (FP8
  //    primary weights, --fp8-params).
  // 16-bit runs 44 B, FP8 primary weights 43 B. With FP8 (--precision fp8), the transformer layers' linear
  // weights on this GPU also need their FP8 form once per iteration (Megatron passes is_first_microbatch,
  // megatron/core/extensions/transformer_engine.py:246-250, so TE caches it over the micro-batches):
  // with FP8 primary weights their transposed copy (read 1, write 1; TE float8_tensor.py's transpose
  // cache, invalidated by the optimizer step), otherwise a cast with transpose (read 2, write 1 + 1).
  // Priced with the optimizer step: it is per-iteration work of the same weights.
  const double all = parameters_per_gpu(w, s);
  double params = all;
  if (s.zero >= 1) params /= static_cast<double>(s.zero_shard_ranks());
  const bool fp8 = s.precision == Precision::fp8;
  double bytes = (fp8 && s.fp8_params ? 43.0 : 44.0) * params;
  if (fp8) {
    // The linear weights: everything but the embedding / output layer matrices and the norms.
    const double h = static_cast<double>(w.hidden);
    const double vocab =
        static_cast<double>(w.vocab) * h / s.tp * (s.pp == 1 && !w.tied_embeddings ? 2.0 : 1.0);
    const double norms = 4.0 * h * (static_cast<double>(w.layers) / s.pp);
    const double linear = std::max(0.0, all - vocab - norms);
    bytes += (s.fp8_params ? 2.0 : 4.0) * linear;
  }
  // Eager Megatron-DeepSpeed accumulates the weight gradients of a rank's micro-batches in the 16-bit
  // `.grad` its GEMMs return: the wgrad GEMM's fused accumulation into a main gradient is commented out
  // (microsoft/Megatron-DeepSpeed@c08e2cc2 megatron/core/tensor_parallel/layers.py:315-319; at fc7f4f03
  // megatron/arguments.py:170-178 turns it off for fp16 without fp32 accumulation), so every micro-batch
  // after the first adds its gradient into the held one (autograd's AccumulateGrad, or Megatron's local
  // DDP hook, megatron/model/distributed.py:176-183 at fc7f4f03, which adds the first too): read 2 + 2,
  // write 2 per parameter. Megatron-Core fuses it into the wgrad GEMM's epilogue (priced in the GEMM).
  // Priced with the optimizer step, as per-iteration GPU work on the same parameters; ZeRO 2/3 shard the
  // held gradient (DeepSpeed's partitioned buckets), not priced here.
  if (s.stack == Stack::megatron_deepspeed && s.zero <= 1)
    bytes += 3.0 * activation_bytes(s) * all * static_cast<double>(std::max(0L, s.micro_batches() - 1));
  return make_op("optimizer", OpKind::optimizer, Phase::forward, 0, 0, bytes, {}, Precision::fp32);
}

double CostModel::pp_message_bytes(const WorkloadSpec& w, const Strategy& s) const {
  const double e = activation_bytes(s);
  return static_cast<double>(s.micro_batch) * static_cast<double>(w.seq) / s.cp * w.hidden * e /
         (s.sp || pipeline_splits_over_tp(s) ? s.tp : 1);
}

bool pipeline_splits_over_tp(const Strategy& s) {
  // Megatron-DeepSpeed splits a stage's output over its TP ranks before the send and gathers it after the
  // receive: DeepSpeed's pipeline engine by default (pipe_partitioned and grad_partitioned, true unless
  // the config says otherwise; microsoft/DeepSpeed runtime/pipe/engine.py:144-145, runtime/config.py's
  // pipeline defaults), Megatron's own schedule with --scatter-gather-tensors-in-pipeline, on by default
  // (microsoft/Megatron-DeepSpeed@f4157bea megatron/arguments.py:1183-1185, p2p_communication.py:51-78,
  // :115-121). Megatron-Core sends the whole tensor (Megatron-LM 23.04's core p2p_communication.py no
  // longer reads the flag); under sequence parallelism the tensor is already split. --pp-tp-split
  // overrides the stack's way.
  if (s.sp || s.tp < 2) return false;
  if (s.pp_tp_split != PipelineSplit::stack) return s.pp_tp_split == PipelineSplit::on;
  return s.stack == Stack::megatron_deepspeed;
}

// The gradient path (docs/model.md "The gradient path of sharded data parallelism"): per parameter of a
// layer, what the layer's gradient moves through HBM between its backward and its reduce-scatter, in
// every backward. e: the unsharded parameters' element bytes (the gradient autograd writes), r: the
// reduction's (Strategy::gradient_dtype).
//  * fsdp1 (FullyShardedDataParallel, one flat parameter per wrapped module; torch v1.13.1
//    torch/distributed/fsdp/): autograd builds the flat gradient from the gradients of the parameters'
//    views (the split's backward concatenates them: read e, write e; flat_param.py:967); on the
//    post-backward stream (fully_sharded_data_parallel.py:3248-3250) it is cast to the reduce dtype
//    (read e, write r where they differ; :3263) and pre-divided in place before the reduce-scatter (read r,
//    write r; distributed/algorithms/_comm_hooks/default_hooks.py:109-110; the factor is > 1 from 2 ranks:
//    :37-41). bf16 reduced in fp32: 18 B; in bf16 8 B. torch 1.13.1 also pads it with a copy (F.pad:
//    :3296, 2r more); later FSDP1 pads only a gradient that does not divide over the ranks, and with
//    use_orig_params its flat parameter already does // unverified (torch 2.x _runtime_utils.py, not
//    line-checked): not priced.
//  * deepspeed (ZeRO-3, microsoft/DeepSpeed@v0.16.4 deepspeed/runtime/zero/stage3.py): each gradient
//    copied into the contiguous bucket (read e, write e; :1283-1285), cast to the communication dtype
//    (:1376-1377), its padded partitions concatenated (read r, write r; runtime/comm/
//    coalesced_collectives.py:199) and pre-divided in place (:201): 26 B bf16 in fp32, 12 B in bf16.
//  * fsdp2 (fully_shard, per-parameter shards): each gradient copied once into the reduce-scatter input,
//    cast on the way (torch._chunk_cat: read e, write r); NCCL averages fp32 and bf16 (ReduceOp.AVG), fp16
//    is pre-divided (read r, write r) // unverified (torch/distributed/_composable/fsdp/
//    _fsdp_collectives.py foreach_reduce, torch 2.4-2.6, from its design: not line-checked).
// Priced on the compute stream after the layer's backward: FSDP1 runs all but the concatenation on a
// stream of its own, but beside the next layer's backward GEMMs these memory-bound kernels take the SMs
// and HBM the GEMMs use; llm-foundry's H100 rows without recompute ask for about all of it
// (docs/calibrate.md "The gradient path").
GradientPath sharded_gradient_path(const Strategy& s) {
  if (!gathers_per_layer(s) || s.zero_shard_ranks() < 2) return {};
  const double e = activation_bytes(s);
  const double r = bytes_per_element(s.gradient_dtype());
  const bool cast = r != e;
  const double cast_bytes = cast ? e + r : 0.0;
  switch (s.sharding) {
    case ShardingLibrary::fsdp2: {
      const bool divide = s.gradient_dtype() == Precision::fp16;
      return {e + r + (divide ? 2 * r : 0.0), divide ? 2 : 1};
    }
    case ShardingLibrary::deepspeed:
      return {2 * e + cast_bytes + 2 * r + 2 * r, cast ? 4 : 3};
    case ShardingLibrary::automatic:
    case ShardingLibrary::fsdp1:
      break;
  }
  return {2 * e + cast_bytes + 2 * r, cast ? 3 : 2};
}

bool zero2_as_fsdp(const Strategy& s) {
  return s.zero == 2 && s.zero2 == Zero2::fsdp;
}

bool gathers_per_layer(const Strategy& s) {
  return s.zero == 3 || zero2_as_fsdp(s);
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
