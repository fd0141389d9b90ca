// The flags that `lagom simulate`, `lagom explore` and `lagom tune` share (the model, the cluster and the
// strategy, as docs/cli.md#model-cluster-and-strategy-flags lists them) and what they load: the workload, the
// cluster with its profile fits, the strategy, and the whole scenario (simulator/scenario.h) that simulate
// and tune price. Flags are read here and nowhere else.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/cluster_source.h"
#include "core/progress.h"
#include "model/cost_model.h"
#include "model/specs.h"
#include "simulator/scenario.h"
#include "simulator/simulator.h"

namespace lagom::cli {

struct SpecFlags {
  std::string model;  // --model PRESET|FILE
  int layers = 0, heads = 0, kv_heads = 0;
  long hidden = 0, ffn_hidden = 0, vocab = 0, seq = 0;
  std::string cluster;                       // --cluster PRESET|FILE
  std::string db;                            // --db PATH (profile fits replace the model's defaults)
  std::optional<std::int64_t> run;           // --run ID (default: the latest complete run)
  std::optional<double> memory_reserve_gib;  // --memory-reserve-gib GIB (replaces the cluster's reserve)
};

// Strategy flags; every field is optional so that explore can tell which dimensions are pinned.
struct StrategyFlags {
  std::optional<int> gpus, tp, pp, dp, cp, ep, vpp, zero;
  bool sp = false;
  std::optional<long> global_batch, micro_batch;
  std::optional<std::string> recompute, schedule, dp_overlap, precision, attention;
  std::optional<model::OverlapMethod> tp_overlap;  // parsed at the flag (model::parse_overlap_method)
  std::optional<double> bucket_mb;
  // Context parallelism's communication and MoE as run (docs/cli.md; model::Strategy's fields).
  std::optional<std::string> cp_comm_type, moe_dispatcher, moe_pad_to_capacity, moe_grouped_gemm;
  std::optional<double> moe_capacity_factor;
  std::optional<int> expert_tp;
  bool bucket_per_chunk = false;  // --bucket-mb chunk
  // Pipeline split, pipeline and optimizer overlap, gradient dtype, vocabulary padding.
  std::optional<int> first_stage_layers, last_stage_layers, vocab_divisible_by, defer_embedding_wgrad;
  bool embedding_in_split = false, loss_in_split = false;
  std::optional<std::string> p2p_overlap, param_gather_overlap, param_gather_with_optimizer,
      grad_reduce_dtype, cross_entropy_fusion, tp_overlap_fp8_rs;
  std::optional<std::string> fp8_params, fp8_wgrad, fp8_attention;  // true|false (on|off)
  std::optional<double> dropout;
};

void add_spec_flags(CLI::App& command, SpecFlags& flags);
void add_strategy_flags(CLI::App& command, StrategyFlags& flags);

// The workload of --model (shape flags given with it override its values, each override described in
// a warning on `warnings` when given) or of the shape flags alone.
Result<model::WorkloadSpec> load_workload(const SpecFlags& flags, Progress* warnings = nullptr);
// The cluster with its node count set from `gpus` (⌈gpus / GPUs per node⌉), and the profile fits of
// --db / localhost (cli/cluster_source.h).
Result<ClusterSource> load_cluster(const SpecFlags& flags, int gpus);
// Every missing required flag at once (--model or the shape flags, --cluster, --gpus):
// "required: --cluster PRESET|FILE|localhost, --gpus N".
Status check_required_flags(const SpecFlags& spec, const StrategyFlags& strategy);
// The strategy the flags describe (defaults for what is not given), not yet resolved.
Result<model::Strategy> strategy_from_flags(const StrategyFlags& flags);

// --issue-priority as-scheduled|critical-first (simulator::IssuePriority).
Result<simulator::IssuePriority> parse_issue_priority_flag(const std::string& value);

// The workload, cluster (with --db / localhost fits) and resolved strategy of the flags, with the cost
// model and the simulator's costs built for them.
Result<std::unique_ptr<simulator::Scenario>> load_scenario(const SpecFlags& spec,
                                                           const StrategyFlags& strategy,
                                                           Progress* warnings = nullptr);

}  // namespace lagom::cli
