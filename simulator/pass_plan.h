// Pass plans: the steps of a layer (model/steps.h) as the compute stream runs them, priced. Each step is
// a compute kernel or a collective the stream waits for (blocking); with a TP overlap method, each
// all-gather → weight GEMM and weight GEMM → reduce-scatter pair is one GEMM plus the exposed part of the
// decomposed pair (simulator/overlap.h). A compute task of the graph runs the plans of its layers one after
// another (stage_plan.h's PassSpan). Internal to simulator/.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "model/overlap_method.h"
#include "model/specs.h"
#include "simulator/costs.h"
#include "simulator/op_classes.h"

namespace lagom::simulator {

// A piece of a pass as it appears in the trace: compute (op_class −1) or a blocking collective.
struct Segment {
  std::string name;
  int op_class = -1;
  double us = 0;  // alone
};

// A run of compute with blocking collectives inside it (one pass of one or more layers), alone.
struct PassPlan {
  double compute_us = 0;
  double blocking_us = 0;
  std::vector<Segment> segments;                     // only when a timeline is recorded
  std::vector<std::pair<int, double>> class_counts;  // op class → calls

  void add_count(int op_class, double count);
  // Runs `other` after this: sums its times (in this order, which the stage plan's totals repeat) and calls.
  void append(const PassPlan& other, bool keep_segments);
  [[nodiscard]] double total_us() const { return compute_us + blocking_us; }
};

// The priced passes every task is made of: per layer variant (IterationCosts::layer_variant) its forward
// and its backward (which starts with the recomputation), the embedding's and the output layer's, and what
// ends a chunk's pass (FP8's amax reduction).
struct LayerPlans {
  std::vector<PassPlan> variant_forward, variant_backward;
  std::vector<int> layer_slot;          // per layer: its index in variant_forward/backward
  std::vector<LayerParams> parameters;  // per layer
  PassPlan embedding_forward, embedding_backward, logits_forward, logits_backward;
  // The output layer's backward without its weight-gradient GEMM, and that GEMM alone: what
  // defer-embedding-wgrad splits (the GEMM runs later, in the pipeline flush).
  PassPlan logits_backward_deferred, logits_wgrad;
  // What ends a model chunk's forward and its backward every micro-batch (IterationCosts::amax_steps).
  PassPlan amax_forward, amax_backward;

  [[nodiscard]] const PassPlan& forward(int layer) const {
    return variant_forward[static_cast<std::size_t>(layer_slot[static_cast<std::size_t>(layer)])];
  }
  [[nodiscard]] const PassPlan& backward(int layer) const {
    return variant_backward[static_cast<std::size_t>(layer_slot[static_cast<std::size_t>(layer)])];
  }
};

// How the steps are priced: the strategy's tp, the method of TP overlap (none: every collective blocks),
// the bytes per element of activations on the wire, and whether to keep trace segments.
struct PassPricing {
  int tp = 1;
  model::OverlapMethod tp_overlap;
  int element_bytes = 2;
  bool keep_segments = false;
  // tp-overlap te: the pipelined reduce-scatters after FP8 GEMMs read the GEMM's FP8 output (1 B per
  // element; model::Strategy::tp_overlap_fp8_rs).
  bool fp8_reduce_scatter = false;
};

// Every layer variant's passes and the embedding's and output layer's, priced with `classes` (which gains
// the classes of their blocking collectives, in step order). failure when a layer's plan is not finite;
// overlap pricing errors as IterationCosts::overlap_cost returns them.
Result<LayerPlans> plan_layers(int layers, const IterationCosts& costs, const PassPricing& pricing,
                               OpClassTable& classes);

}  // namespace lagom::simulator
