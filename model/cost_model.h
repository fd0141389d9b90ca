// The unified cost model of Lagom: one immutable object that prices compute ops, collectives, their
// interference when they overlap, and memory per GPU, for one resolved cluster (+ optional calibration).
//
// Thread safety: every method is const and touches no shared mutable state; one CostModel may be used by
// any number of threads at once (explore evaluates strategies in parallel). Construction is cheap.
// Speed: collective_cost() and op_time_us() do a few dozen floating-point operations and no allocation
// (well over 10^6 calls per second per core); layer_steps() allocates its vector.
//
// Units: bytes, microseconds (_us), 10^9 bytes/s (_GBps), FLOPs. docs/model.md documents every formula
// and constant with its source.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/calibration.h"
#include "model/collective_factors.h"
#include "model/collectives.h"
#include "model/groups.h"
#include "model/pipeline_split.h"
#include "model/specs.h"
#include "model/steps.h"

namespace lagom::model {

// ---------------------------------------------------------------------------------------------------
// Collectives

struct CollectiveCost {
  double time_us = 0;
  double latency_us = 0;     // the size-independent part
  double algbw_GBps = 0;     // bytes / time (nccl-tests)
  double busbw_GBps = 0;     // algbw × busbw_factor (nccl-tests)
  double link_GBps = 0;      // the bus bandwidth the links allow (before channel limits)
  CollConfig config;         // the configuration priced, defaults resolved; channels 0 on the copy engines
  bool copy_engine = false;  // ran on the copy engines (CTA policy zero): no SM held
};

// ---------------------------------------------------------------------------------------------------
// Interference

// How much a collective running beside a compute op slows each (factors >= 1: time multipliers).
struct Interference {
  double compute_factor = 1.0;  // the compute op takes compute_factor × its isolated time
  double comm_factor = 1.0;     // the collective takes comm_factor × its isolated time
  int sms_lost = 0;             // SMs held by the collective's CTAs
  double hbm_share = 0;         // fraction of HBM bandwidth the collective uses
  double l2_share = 0;          // fraction of L2 the collective's in-flight chunks occupy
};

// Every interference parameter, its meaning and default (docs/model.md gives the sources).
struct InterferenceParams {
  int sms_per_channel = 1;  // NCCL runs one CTA per channel; GEMM CTAs cannot share its SM
  double hbm_bytes_per_bus_byte =
      3.0;  // HBM traffic per bus byte (write incoming, read it + local) // unverified
  double l2_chunks_in_flight = 2.0;  // chunks per channel resident in L2 (send + receive) // unverified
  double memory_contention = 1.0;    // extra HBM traffic of a compute op per unit of L2 taken // unverified
  double comm_slowdown = 0.25;       // collective slowdown at full compute HBM use // unverified
  std::optional<double> slowdown_per_channel;  // calibrated: replaces the wave model by 1 + s·channels
};

// ---------------------------------------------------------------------------------------------------
// Memory

struct MemoryBreakdown {
  double weights_bytes = 0, grads_bytes = 0, optimizer_bytes = 0, activations_bytes = 0;
  // What only the optimizer step allocates (the fp32 copy of 16-bit gradients it steps on): it lives when
  // the activations are freed, so the peak holds the larger of the two.
  double step_bytes = 0;
  int stage = 0;  // the pipeline stage it is for (memory_per_gpu: the most loaded one)
  [[nodiscard]] double total_bytes() const {
    return weights_bytes + grads_bytes + optimizer_bytes + std::max(activations_bytes, step_bytes);
  }
};

// ---------------------------------------------------------------------------------------------------

// Whether the stack sends a pipeline stage's activations (and their gradients) split over the stage's TP
// ranks and all-gathers them over TP after the receive (Megatron-DeepSpeed without sequence parallelism).
[[nodiscard]] bool pipeline_splits_over_tp(const Strategy& strategy);
// Whether the strategy runs FSDP's ZeRO-2 (model::Zero2): zero 2 with `--zero2 fsdp` (`auto` is DeepSpeed's
// unless a framework profile made it FSDP's).
[[nodiscard]] bool zero2_as_fsdp(const Strategy& strategy);
// Whether each layer's parameters are all-gathered before its forward in every micro-batch (ZeRO-3, FSDP's
// ZeRO-2), and before its backward too (ZeRO-3 only: reshard after forward).
[[nodiscard]] bool gathers_per_layer(const Strategy& strategy);
// What a layer's gradient moves through HBM in each backward on its way into the reduce-scatter under zero 3
// or FSDP's zero 2 (ShardingLibrary; docs/model.md "The gradient path of sharded data parallelism"): bytes
// per parameter and the kernels that move them; none (0 kernels) without a sharded reduce-scatter (no layer
// gathers, or one shard rank).
struct GradientPath {
  double bytes_per_parameter = 0;
  int kernels = 0;
};
[[nodiscard]] GradientPath sharded_gradient_path(const Strategy& strategy);

class CostModel {
 public:
  // `cluster` must be resolved (a preset, a parsed file, or cluster_from_calibration()).
  // `stack`: the software stack whose host costs bound ops and collective calls (model/specs.h StackCosts);
  // one per model, so a search prices every strategy with the stack it was given.
  explicit CostModel(ClusterSpec cluster, std::optional<Calibration> calibration = std::nullopt,
                     Stack stack = Stack::megatron_core);

  [[nodiscard]] const ClusterSpec& cluster() const { return m_cluster; }
  [[nodiscard]] const std::optional<Calibration>& calibration() const { return m_calibration; }
  [[nodiscard]] Stack stack() const { return m_stack; }
  // The least time of one kernel launch and of one collective call on the host: the larger of the
  // cluster's floor and the stack's cost, µs.
  [[nodiscard]] double op_launch_floor_us() const;
  [[nodiscard]] double collective_call_floor_us() const;

  // --- groups --- (a strategy's communicators: model::communicator_shape, model/groups.h)
  // A communicator of `ranks` consecutive ranks (nodes = ⌈ranks / gpus_per_node⌉).
  [[nodiscard]] CommGroup contiguous_group(int ranks) const;

  // --- compute ---
  // Sustained fraction of peak for a GEMM shape (GemmFit when calibrated, else the documented default).
  [[nodiscard]] double gemm_efficiency(const GemmShape& shape, Precision precision) const;
  [[nodiscard]] double gemm_time_us(const GemmShape& shape, Precision precision) const;
  // Roofline: max(flops / (peak · eff), bytes / (HBM · eff)) + launch, for an op.
  [[nodiscard]] double op_time_us(const ComputeOp& op, Precision precision) const;
  [[nodiscard]] double memory_bw_GBps() const;  // sustained HBM bandwidth used for memory-bound ops

  // The steps of one transformer layer (index `layer`, 0-based over the whole model) on one GPU for one
  // micro-batch, in issue order, for a resolved strategy. Phase::recompute gives what recompute re-runs
  // (selective: core attention; full: the whole forward incl. its TP collectives; none: nothing).
  [[nodiscard]] std::vector<Step> layer_steps(const WorkloadSpec& workload, const Strategy& strategy,
                                              Phase phase, int layer) const;
  // Embedding (first stage) and logits + loss (last stage) for one micro-batch.
  [[nodiscard]] std::vector<Step> embedding_steps(const WorkloadSpec& workload, const Strategy& strategy,
                                                  Phase phase) const;
  [[nodiscard]] std::vector<Step> head_steps(const WorkloadSpec& workload, const Strategy& strategy,
                                             Phase phase) const;
  // FP8 (--precision fp8): the amax reduction and scale update at the end of a model chunk's forward and
  // of its backward, every micro-batch (Transformer Engine's delayed scaling), for the FP8 GEMMs on the rank
  // (fp8_gemms of each of its layers' forward steps, summed); empty otherwise.
  [[nodiscard]] std::vector<Step> amax_steps(const Strategy& strategy, Phase phase,
                                             double fp8_gemms_on_rank) const;
  // FP8 GEMMs among a layer's forward steps (a grouped GEMM counts each expert's).
  [[nodiscard]] static double fp8_gemms(const std::vector<Step>& forward);
  // The optimizer step of one pipeline stage (Adam, fp32 master weights) on its shard.
  [[nodiscard]] ComputeOp optimizer_op(const WorkloadSpec& workload, const Strategy& strategy) const;
  // Bytes of one pipeline send/recv of activations (one micro-batch, one direction): a TP rank's share
  // under sequence parallelism or when the stack splits the tensor (pipeline_splits_over_tp), else the
  // whole tensor.
  [[nodiscard]] double pp_message_bytes(const WorkloadSpec& workload, const Strategy& strategy) const;

  // Model FLOPs per iteration (docs/model.md#flops-convention), the whole model, all GPUs.
  [[nodiscard]] static double model_flops_per_iteration(const WorkloadSpec& workload, long global_batch);
  // Parameters held by one GPU (its stage, TP/EP shards; before ZeRO sharding): the most of any stage.
  [[nodiscard]] double parameters_per_gpu(const WorkloadSpec& workload, const Strategy& strategy) const;
  // Parameters held by one GPU of the stage holding `chunks` (model/pipeline_split.h).
  [[nodiscard]] double stage_parameters(const WorkloadSpec& workload, const Strategy& strategy,
                                        const std::vector<ChunkLayers>& chunks) const;
  // Parameters of transformer layer `layer` on one rank (its TP / EP shares; no embedding).
  [[nodiscard]] double layer_parameters(const WorkloadSpec& workload, const Strategy& strategy,
                                        int layer) const;

  // --- collectives ---
  // Whether NCCL allows (algo, proto) for the collective on this group and cluster, with the reason when not.
  [[nodiscard]] Status nccl_allows(Collective collective, Algo algo, Proto proto,
                                   const CommGroup& group) const;
  // The communicator's default channel count (NCCL's topology search; "N coll channels" in NCCL's log).
  [[nodiscard]] int default_channels(const CommGroup& group) const;
  // The most channels a call may use (NCCL's MAXCHANNELS, and at most SMs/2 so compute keeps SMs).
  [[nodiscard]] int max_channels() const;
  // NCCL's own choice for this call (its tuning model, src/graph/tuning.cc): algorithm and protocol with
  // the communicator's default channels, threads and chunk.
  [[nodiscard]] CollConfig nccl_default(Collective collective, double bytes, const CommGroup& group) const;
  // NCCL's choice when the user fixed the algorithm, the protocol or both (`lagom cost --algo/--proto`): the
  // pair NCCL's model finds fastest among those left, defaults resolved; nccl_default when neither is fixed.
  [[nodiscard]] CollConfig nccl_choice(Collective collective, double bytes, const CommGroup& group,
                                       std::optional<Algo> algo, std::optional<Proto> proto) const;
  // NCCL's own predicted time for (algo, proto) with its constants (+inf when not allowed).
  [[nodiscard]] double nccl_model_time_us(Collective collective, Algo algo, Proto proto, double bytes,
                                          const CommGroup& group) const;
  // Whether NCCL runs this call on the copy engines (docs/model.md "Copy-engine collectives"): CTA policy
  // zero, an AllGather or AlltoAll, every rank on one node of NVSwitch-joined GPUs (NCCL's symmetric
  // windows need all ranks load/store-reachable over NVLink, v2.30.7-1:src/ce_coll.cc:112-131; one node
  // only before 2.30's hierarchical path, v2.28.9-1:src/enqueue.cc:2580), NCCL 2.28 or later (the first
  // with ce_coll.cc). Symmetric buffers are the framework's part and assumed here (search/ checks which
  // framework registers them).
  [[nodiscard]] bool copy_engine_eligible(Collective collective, const CommGroup& group,
                                          const CollConfig& config) const;
  // Whether the call could run on the copy engines under CTA policy zero, with the reason when not.
  [[nodiscard]] Status copy_engine_support(Collective collective, const CommGroup& group) const;
  // Lagom's physical price of one call with a fully specified configuration (defaults resolved first).
  // Precondition: nccl_allows(...) is ok (validate_config checks everything); otherwise time is +inf.
  [[nodiscard]] CollectiveCost collective_cost(Collective collective, double bytes, const CommGroup& group,
                                               const CollConfig& config) const;
  // Checks a user-given configuration: allowed algorithm/protocol, channels within 1..max, threads a multiple
  // of 32 within 64..640, chunk >= 4 KiB, bytes >= 0, ranks >= 2.
  [[nodiscard]] Status validate_config(Collective collective, double bytes, const CommGroup& group,
                                       const CollConfig& config) const;
  [[nodiscard]] CollConfig resolve_defaults(Collective collective, double bytes, const CommGroup& group,
                                            CollConfig config) const;

  // --- interference ---
  // The slowdown of a compute op and of a collective (priced as `comm`) running at the same time.
  [[nodiscard]] Interference interference(const ComputeOp& op, Precision precision,
                                          const CollectiveCost& comm, Collective collective) const;

  // --- memory ---
  // Memory per GPU on the most loaded (first) pipeline stage for a resolved strategy.
  [[nodiscard]] MemoryBreakdown memory_per_gpu(const WorkloadSpec& workload, const Strategy& strategy) const;
  // The memory of one GPU of pipeline stage `stage`, which holds `chunks` (model/pipeline_split.h).
  [[nodiscard]] MemoryBreakdown stage_memory(const WorkloadSpec& workload, const Strategy& strategy,
                                             const std::vector<ChunkLayers>& chunks, int stage) const;
  // Activation bytes of one layer for one micro-batch on one GPU (Korthikanti, generalised to
  // GQA/SwiGLU/MoE).
  [[nodiscard]] double activation_bytes_per_layer(const WorkloadSpec& workload, const Strategy& strategy,
                                                  int layer) const;

 private:
  [[nodiscard]] const CollectiveFit* find_fit(Collective collective, const CollConfig& config,
                                              const CommGroup& group) const;
  [[nodiscard]] double physical_busbw(Collective collective, double bytes, const CommGroup& group,
                                      const CollConfig& config, double* link_GBps) const;
  [[nodiscard]] double link_bus_GBps(const CommGroup& group, Algo algo) const;
  // An op's compute-bound time in isolation (0 without FLOPs): its FLOPs at the peak of the precision it
  // computes in (an FP8 run's non-FP8 ops in BF16) times the GEMM, attention or sustained fraction.
  [[nodiscard]] double compute_us(const ComputeOp& op, Precision precision) const;
  [[nodiscard]] ComputeOp make_op(std::string name, OpKind kind, Phase phase, double flops,
                                  double model_flops, double bytes, GemmShape gemm,
                                  Precision precision) const;
  // The step that moves `parameters`' gradients along the strategy's gradient path (sharded_gradient_path)
  // in the backward: one step, or none where there is no such path.
  [[nodiscard]] std::vector<Step> gradient_path_steps(std::string name, const Strategy& strategy, Phase phase,
                                                      double parameters) const;

  ClusterSpec m_cluster;
  std::optional<Calibration> m_calibration;
  Stack m_stack = Stack::megatron_core;
  InterferenceParams m_interference;
};

// The cluster spec of `localhost` from a profile's fitted parameters: one node of `ranks` processes
// (the profile's MPI ranks), the measured GEMM throughput as peak, the measured memory bandwidth, shared
// memory as the fabric (bandwidth and latency from the intra-node collective fits), no NCCL.
Result<ClusterSpec> cluster_from_calibration(const Calibration& calibration, int ranks, int cores_per_rank);

}  // namespace lagom::model
