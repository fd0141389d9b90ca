#include "inputs/flag_context.h"

#include <map>

#include <fmt/format.h>

#include "model/groups.h"
#include "model/strategy_knobs.h"

namespace lagom::inputs {

namespace {

using model::Strategy;
using model::WorkloadSpec;

bool moe(const WorkloadSpec& w, const Strategy&) {
  return w.moe.has_value();
}
std::string no_experts(const WorkloadSpec& w, const Strategy&) {
  return fmt::format("{} has no experts", w.name);
}
bool fp8(const WorkloadSpec&, const Strategy& s) {
  return s.precision == model::Precision::fp8;
}
std::string precision(const WorkloadSpec&, const Strategy& s) {
  return fmt::format("precision is {}", to_string(s.precision));
}
bool te(const WorkloadSpec&, const Strategy& s) {
  return s.tp_overlap.kind == model::OverlapMethodKind::te;
}
std::string overlap(const WorkloadSpec&, const Strategy& s) {
  return fmt::format("tp-overlap is {}", to_string(s.tp_overlap));
}
bool pipeline(const WorkloadSpec&, const Strategy& s) {
  return s.pp > 1;
}
std::string pp(const WorkloadSpec&, const Strategy& s) {
  return fmt::format("pp={}", s.pp);
}
bool interleaved(const WorkloadSpec&, const Strategy& s) {
  return s.vpp > 1;
}
bool tensor_parallel(const WorkloadSpec&, const Strategy& s) {
  return s.tp > 1;
}
std::string tp(const WorkloadSpec&, const Strategy& s) {
  return fmt::format("tp={}", s.tp);
}
bool no_sp(const WorkloadSpec&, const Strategy& s) {
  return !s.sp;
}
std::string sp(const WorkloadSpec&, const Strategy&) {
  return "sequence parallelism already sends a TP rank's share";
}
std::string vpp(const WorkloadSpec&, const Strategy& s) {
  return fmt::format("vpp={}", s.vpp);
}
bool context_parallel(const WorkloadSpec&, const Strategy& s) {
  return s.cp > 1;
}
std::string cp(const WorkloadSpec&, const Strategy& s) {
  return fmt::format("cp={}", s.cp);
}
bool zero_two(const WorkloadSpec&, const Strategy& s) {
  return s.zero == 2;
}
// Layers are gathered and their gradients reduce-scattered in every backward: zero 3, or zero 2 that is
// not DeepSpeed's (auto is FSDP's under --framework torch-fsdp, which resolves it later).
bool shards_layers(const WorkloadSpec&, const Strategy& s) {
  return s.zero == 3 || (s.zero == 2 && s.zero2 != model::Zero2::deepspeed);
}
std::string zero(const WorkloadSpec&, const Strategy& s) {
  return fmt::format("zero={}", s.zero);
}
std::string zero_kind(const WorkloadSpec& w, const Strategy& s) {
  return s.zero == 2 ? "zero=2 with zero2 deepspeed" : zero(w, s);
}
bool full_recompute(const WorkloadSpec&, const Strategy& s) {
  return s.recompute == model::Recompute::full;
}
std::string recompute(const WorkloadSpec&, const Strategy& s) {
  return fmt::format("recompute={}", to_string(s.recompute));
}
// torch.utils.checkpoint's early stop: a PyTorch stack's checkpointing (Megatron's and DeepSpeed's rerun the
// whole forward). The stack is final here: explore and tune set the framework's before these checks.
bool pytorch_stack(const WorkloadSpec&, const Strategy& s) {
  return s.stack == model::Stack::pytorch_eager || s.stack == model::Stack::pytorch_compile;
}
std::string stack(const WorkloadSpec&, const Strategy& s) {
  return fmt::format("stack {}", to_string(s.stack));
}
// Gradients are reduced over the dp·cp ranks that hold the same weights.
bool reduced(const WorkloadSpec&, const Strategy& s) {
  return static_cast<long>(s.dp) * s.cp > 1;
}
std::string dp_cp(const WorkloadSpec&, const Strategy& s) {
  return fmt::format("dp·cp={}·{}: no gradient reduction", s.dp, s.cp);
}

// ZeRO shards over the dp·cp ranks that hold the same weights, and a MoE model's expert weights over the
// expert data-parallel ranks (model/groups.h): with one of each there is nothing to shard.
bool shardable(const WorkloadSpec& w, const Strategy& s) {
  if (reduced(w, s)) return true;
  return w.moe.has_value() && model::communicator_shape(model::Group::expert_dp, s, 1).ranks > 1;
}
std::string one_replica(const WorkloadSpec& w, const Strategy& s) {
  return fmt::format("dp·cp={}·{}{}: nothing to shard", s.dp, s.cp,
                     w.moe.has_value() ? ", one expert replica" : "");
}

}  // namespace

const std::vector<FlagContext>& flag_contexts() {
  static const std::vector<FlagContext> table{
      {"pp_tp_split", {"pp"}, pipeline, "pp > 1", pp},
      {"pp_tp_split", {"tp"}, tensor_parallel, "tp > 1", tp},
      {"pp_tp_split", {"sp"}, no_sp, "no sequence parallelism", sp},
      {"cp_comm_type", {"cp"}, context_parallel, "cp > 1", cp},
      {"zero2", {"zero"}, zero_two, "zero 2", zero},
      {"sharding", {"zero", "zero2"}, shards_layers, "zero 3 or FSDP's zero 2", zero_kind},
      {"recompute_early_stop", {"recompute"}, full_recompute, "recompute full", recompute},
      {"recompute_early_stop",
       {"stack"},
       pytorch_stack,
       "a PyTorch stack (pytorch-eager or pytorch-compile)",
       stack},
      {"schedule", {"pp", "vpp"}, pipeline, "pp > 1", pp},
      {"zero",
       {"dp", "cp", "tp", "ep", "expert_tp"},
       shardable,
       "dp·cp > 1 or experts on more than one replica",
       one_replica},
      {"dp_overlap", {"dp", "cp"}, reduced, "dp·cp > 1", dp_cp},
      {"bucket_mb", {"dp", "cp"}, reduced, "dp·cp > 1", dp_cp},
      {"bucket_mb_per_chunk", {"dp", "cp"}, reduced, "dp·cp > 1", dp_cp},
      {"moe_dispatcher", {}, moe, "a MoE model", no_experts},
      {"moe_capacity_factor", {}, moe, "a MoE model", no_experts},
      {"moe_pad_to_capacity", {}, moe, "a MoE model", no_experts},
      {"moe_grouped_gemm", {}, moe, "a MoE model", no_experts},
      {"expert_tp", {}, moe, "a MoE model", no_experts},
      {"p2p_overlap", {"vpp"}, interleaved, "the interleaved schedule (vpp > 1)", vpp},
      {"defer_embedding_wgrad", {"pp"}, pipeline, "pp > 1", pp},
      {"tp_overlap_fp8_rs", {}, fp8, "--precision fp8", precision},
      {"tp_overlap_fp8_rs", {"tp_overlap"}, te, "--tp-overlap te", overlap},
      {"fp8_params", {}, fp8, "--precision fp8", precision},
      {"fp8_wgrad", {}, fp8, "--precision fp8", precision},
      {"fp8_attention", {}, fp8, "--precision fp8", precision},
  };
  return table;
}

Status check_flag_contexts(const StrategyFlags& flags, const model::WorkloadSpec& workload,
                           const model::Strategy& strategy, const std::set<std::string>& free) {
  const nlohmann::json given = model::to_json(flags.values);
  const nlohmann::json defaults = model::to_json(model::Strategy{});
  std::map<std::string_view, std::string_view> flag_of;
  model::for_each_knob(flags.values, [&flag_of](const auto& knob, const auto&) {
    flag_of[knob.name.key] = knob.name.flag.empty() ? std::string_view("--bucket-mb") : knob.name.flag;
  });
  std::string problems;
  for (const FlagContext& row : flag_contexts()) {
    const std::string key(row.key);
    if (!flags.has(key) || given.value(key, nlohmann::json()) == defaults.value(key, nlohmann::json()))
      continue;
    bool skip = false;
    for (std::string_view read : row.reads) skip = skip || free.count(std::string(read)) > 0;
    if (skip || row.acts(workload, strategy)) continue;
    problems += fmt::format("{}{} needs {} ({})", problems.empty() ? "" : "; ", flag_of[row.key], row.needs,
                            row.instead(workload, strategy));
  }
  if (problems.empty()) return {};
  return make_error(ErrorCode::invalid_input, problems + ": the flag would have no effect");
}

}  // namespace lagom::inputs
