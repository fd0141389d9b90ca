// The simulator's view of a cost model: the seam between simulator/ and model/ (STYLE.md: "the simulator
// takes its cost model as an interface"). One IterationCosts object is bound to one (workload, cluster,
// resolved strategy); the simulator asks it what work exists and what it costs, and never prices anything
// itself. model_costs.h adapts model::CostModel to it; tests use small deterministic fakes.
//
// Contract: times are microseconds on one GPU, alone (no concurrent work), >= 0. Implementations must be
// deterministic and safe to call from several threads at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/collective_factors.h"
#include "model/collectives.h"
#include "model/overlap_method.h"
#include "model/specs.h"
#include "model/steps.h"

namespace lagom::simulator {

// One collective call as priced: what, on which communicator shape, how many bytes.
struct CollectiveCall {
  model::Collective collective = model::Collective::allreduce;
  model::CommGroup group;
  std::int64_t bytes = 0;
  int comm_ctas = 0;  // the communicator's CTAs (ncclConfig_t minCTAs = maxCTAs); 0 = NCCL's default
};

// What one collective costs, and how it interferes with compute on the same GPU while both run.
struct CollectivePrice {
  double time_us = 0;           // alone
  double latency_us = 0;        // the size-independent part of time_us
  double compute_slowdown = 1;  // >= 1: factor by which compute on the GPU slows while it runs
  double comm_slowdown = 1;     // >= 1: factor by which it slows while compute runs beside it
};

// One overlapped pair of a TP layer to price (overlap.h prices it through model's overlap plans).
struct OverlapQuery {
  model::OverlapKernel kernel = model::OverlapKernel::ag_gemm;  // ag_gemm or gemm_rs
  model::OverlapMethod method;                                  // slice:K or flash (none is invalid here)
  int ranks = 2;                                                // tp
  std::int64_t m = 0, n = 0, k = 0;                             // the global GEMM (model/overlap_plan.h)
  int element_bytes = 2;
  double gemm_us = 0;          // the GEMM on one rank, alone
  CollectivePrice collective;  // the unsplit collective on the tp group, alone, and its interference
};

struct OverlapCost {
  double exposed_us = 0;  // time the pair adds beyond gemm_us (exposed communication + slowdowns), >= 0
};

// A GEMM as a decomposed overlap runs it (TE userbuffers' chunks): its time alone, and the factor by which it
// slows while a communication kernel holding some SMs runs beside it.
struct ChunkGemm {
  double us = 0;
  double slowdown = 1;
};

struct LayerParams {
  double dense = 0;   // non-expert parameters of the layer held by one GPU (after tp)
  double expert = 0;  // expert parameters held by one GPU (after tp and ep)
  // Of `dense`, the weights of the layer's linear GEMMs (Transformer Engine's linear modules: QKV,
  // projection, FC1, FC2, shared experts), which FP8 primary weights (--fp8-params) hold in FP8; the rest
  // (norms, the router) stays 16-bit. Every expert parameter is an expert linear's weight.
  double dense_linear = 0;
};

struct MemoryGib {
  double weights = 0, grads = 0, optimizer = 0, activations = 0, total = 0;
  int stage = 0;  // the pipeline stage it is for
  // The optimizer step's own buffers (fp32 copies of 16-bit gradients); total holds the larger of these and
  // the activations, which are freed by then.
  double optimizer_step = 0;
};

struct IterationFlops {
  double model_flops = 0;     // per iteration, all GPUs (docs/model.md#flops-convention)
  double hardware_flops = 0;  // model FLOPs + recomputation
};

class IterationCosts {
 public:
  virtual ~IterationCosts() = default;
  // Layer `layer` (0-based over the whole model), one micro-batch, in issue order. Phase::recompute: what
  // the backward reruns first (nothing without recomputation). The simulator reads a step's name, a
  // compute op's time_us and (for TP overlap) the shape of a weight GEMM (ComputeOp::is_weight_gemm), a
  // collective's collective, group and bytes.
  [[nodiscard]] virtual std::vector<model::Step> layer_steps(int layer, model::Phase phase) const = 0;
  // Layers with the same variant have identical steps (every pass) and parameters, so the simulator prices
  // one of them for all; default: every layer its own. (ModelCosts: dense or MoE.)
  [[nodiscard]] virtual int layer_variant(int layer) const { return layer; }
  // The embedding (first pipeline stage) and the output layer with the loss (last stage); no recompute.
  [[nodiscard]] virtual std::vector<model::Step> embedding_steps(model::Phase phase) const = 0;
  [[nodiscard]] virtual std::vector<model::Step> logits_steps(model::Phase phase) const = 0;
  // What ends a model chunk's forward (after its last layer) and its backward (after its first layer's) in
  // every micro-batch: FP8's amax reduction (model::CostModel::amax_steps); default: nothing.
  [[nodiscard]] virtual std::vector<model::Step> amax_steps(model::Phase /*phase*/) const { return {}; }
  [[nodiscard]] virtual LayerParams layer_params(int layer) const = 0;
  [[nodiscard]] virtual double embedding_params() const = 0;  // on the first stage
  [[nodiscard]] virtual double logits_params() const = 0;     // on the last stage (0 when pp = 1 and tied)
  // Bytes of one pipeline send/recv (activations or their gradients, one micro-batch).
  [[nodiscard]] virtual std::int64_t pp_message_bytes() const = 0;
  // The optimizer step over `params` parameters held by one GPU.
  [[nodiscard]] virtual double optimizer_us(double params) const = 0;
  // An overlapped (GEMM, collective) pair of a TP layer: what it adds beyond the GEMM. Default:
  // price_overlap(query) (overlap.h); implementations may remember results (it is a pure function).
  [[nodiscard]] virtual Result<OverlapCost> overlap_cost(const OverlapQuery& query) const;
  // One GEMM of `shape` (one GPU's chunk of a decomposed GEMM) alone, and its slowdown beside a
  // communication kernel of `comm_sms` SMs moving `comm_GBps` (bus bytes per µs × 10^-3). Default (test
  // fakes): the shape's FLOPs at peak_tflops(), no slowdown; ModelCosts asks the cost model (gemm_time_us,
  // interference).
  [[nodiscard]] virtual ChunkGemm gemm_beside(const model::GemmShape& shape, int comm_sms,
                                              double comm_GBps) const;
  // A collective with the given knobs (nullopt: NCCL's default choice, with call.comm_ctas channels if set).
  [[nodiscard]] virtual CollectivePrice collective(const CollectiveCall& call,
                                                   const std::optional<model::CollConfig>& knobs) const = 0;
  // Memory per GPU of the most loaded pipeline stage, and what a GPU's tensors may take (its usable memory
  // less the reserve, model::GpuSpec::memory_budget_gib).
  [[nodiscard]] virtual MemoryGib memory() const = 0;
  [[nodiscard]] virtual double memory_capacity_gib() const = 0;
  [[nodiscard]] virtual IterationFlops flops() const = 0;
  // Dense peak of one GPU in the strategy's precision, 10^12 FLOP/s.
  [[nodiscard]] virtual double peak_tflops() const = 0;
};

}  // namespace lagom::simulator
