// The flags that `lagom simulate`, `lagom explore` and `lagom tune` share (the model, the cluster and the
// strategy, as docs/cli.md#model-cluster-and-strategy-flags lists them) and what they load: the workload, the
// cluster with its profile fits, the strategy, and the whole scenario (simulator/scenario.h) that simulate
// and tune price. Flags are read here and nowhere else.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/progress.h"
#include "inputs/cluster_source.h"
#include "model/cost_model.h"
#include "model/specs.h"
#include "simulator/scenario.h"
#include "simulator/simulator.h"

namespace lagom::inputs {

struct SpecFlags {
  std::string model;  // --model PRESET|FILE
  int layers = 0, heads = 0, kv_heads = 0;
  long hidden = 0, ffn_hidden = 0, vocab = 0, seq = 0;
  std::string cluster;                       // --cluster PRESET|FILE
  std::string db;                            // --db PATH (profile fits replace the model's defaults)
  std::optional<std::int64_t> run;           // --run ID (default: the latest complete run)
  std::optional<double> memory_reserve_gib;  // --memory-reserve-gib GIB (replaces the cluster's reserve)
  std::optional<std::string> nccl_version;   // --nccl-version X.Y[.Z] (replaces the cluster's)
  // A runs file's row (validate, calibrate): its model and cluster paths were made the CSV folder's, so
  // a name that is not a path (no '/' or ".json") is a preset, never a file of the working directory.
  bool presets_unless_path = false;
};

// The strategy flags: one per knob of model/strategy_knobs.h, each parsed and bounded at the flag (a bad
// value ends the command there: "lagom: error: --recompute: 'some' is not none, selective or full").
struct StrategyFlags {
  model::Strategy values;       // every knob: its flag's value when given, else model::Strategy's default
  std::set<std::string> given;  // the JSON keys of the knobs whose flag was given (explore's pinned ones)
  [[nodiscard]] bool has(const std::string& key) const { return given.count(key) > 0; }
};

void add_spec_flags(CLI::App& command, SpecFlags& flags);
void add_strategy_flags(CLI::App& command, StrategyFlags& flags);

// The workload of --model (shape flags given with it override its values, each override described in
// a warning on `warnings` when given) or of the shape flags alone.
Result<model::WorkloadSpec> load_workload(const SpecFlags& flags, Progress* warnings = nullptr);
// The cluster with its node count set from `gpus` (⌈gpus / GPUs per node⌉), --nccl-version applied, and the
// profile fits of --db / localhost (inputs/cluster_source.h); a warning on `warnings` for an NCCL version
// outside the releases Lagom emulates.
Result<ClusterSource> load_cluster(const SpecFlags& flags, int gpus, Progress* warnings = nullptr);
// Every missing required flag at once (--model or the shape flags, --cluster, --gpus):
// "required: --cluster PRESET|FILE|localhost, --gpus N".
Status check_required_flags(const SpecFlags& spec, const StrategyFlags& strategy);
// The strategy the flags describe (defaults for what is not given), not yet resolved; refuses a --schedule
// that contradicts --vpp > 1.
Result<model::Strategy> strategy_from_flags(const StrategyFlags& flags);

// --issue-priority as-scheduled|critical-first (simulator::IssuePriority).
Result<simulator::IssuePriority> parse_issue_priority_flag(const std::string& value);

// The workload, cluster (with --db / localhost fits) and resolved strategy of the flags, with the cost
// model and the simulator's costs built for them.
Result<std::unique_ptr<simulator::Scenario>> load_scenario(const SpecFlags& spec,
                                                           const StrategyFlags& strategy,
                                                           Progress* warnings = nullptr);

}  // namespace lagom::inputs
