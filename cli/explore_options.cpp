#include "cli/explore_options.h"

#include <array>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "inputs/flag_context.h"

namespace lagom::cli {

Result<search::ExploreOptions> explore_options(const inputs::StrategyFlags& flags,
                                               const model::WorkloadSpec& workload,
                                               search::Framework framework) {
  LAGOM_TRY(const model::Strategy base, inputs::strategy_from_flags(flags));
  search::ExploreOptions options;
  options.base = base;
  if (options.base.global_batch == 0 && workload.global_batch)
    options.base.global_batch = *workload.global_batch;
  if (options.base.global_batch == 0)
    return make_error(ErrorCode::invalid_input, "global-batch: required (the workload has no global_batch)");
  options.framework = framework;
  const inputs::StrategyFlags& f = flags;
  if (!f.has("stack")) options.base.stack = search::framework_profile(framework).default_stack;
  auto& pins = options.pinned;
  auto pinned = [&f](const char* key, auto value) {
    return f.has(key) ? std::optional<decltype(value)>(value) : std::nullopt;
  };
  pins.tp = pinned("tp", f.values.tp), pins.pp = pinned("pp", f.values.pp),
  pins.dp = pinned("dp", f.values.dp), pins.cp = pinned("cp", f.values.cp),
  pins.ep = pinned("ep", f.values.ep), pins.vpp = pinned("vpp", f.values.vpp),
  pins.zero = pinned("zero", f.values.zero);
  pins.dp_shard = pinned("dp_shard", f.values.dp_shard);
  if (f.values.sp) pins.sp = true;
  pins.micro_batch = pinned("micro_batch", f.values.micro_batch);
  if (f.has("recompute")) pins.recompute = base.recompute;
  if (f.has("tp_overlap")) pins.tp_overlap = base.tp_overlap;
  if (f.has("cp_comm_type")) pins.cp_comm = base.cp_comm;
  pins.bucket_mb = f.has("bucket_mb");
  // The dimensions explore searches (those not pinned) may give a flag its context in some candidates.
  std::set<std::string> free;
  for (const char* key : {"tp", "pp", "dp", "cp", "ep", "vpp", "zero", "dp_shard", "sp", "micro_batch",
                          "recompute", "tp_overlap", "cp_comm_type"}) {
    if (!f.has(key)) free.insert(key);
  }
  LAGOM_TRY_STATUS(inputs::check_flag_contexts(flags, workload, base, free));
  // Each candidate runs 1f1b, or interleaved when its vpp > 1 (search/explore.cpp): another schedule, or
  // interleaved without a pinned vpp > 1, would not be what the candidates run.
  const bool runs_it = base.schedule == model::Schedule::one_f_one_b ||
                       (base.schedule == model::Schedule::interleaved && f.has("vpp") && base.vpp > 1);
  if (f.has("schedule") && !runs_it) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("--schedule {}: each candidate runs 1f1b, or interleaved when its vpp > 1 "
                                  "(pin --vpp N > 1 for interleaved): the flag would have no effect",
                                  to_string(base.schedule)));
  }
  return options;
}

bool names_layout(const inputs::StrategyFlags& flags) {
  static constexpr std::array k_layout{"tp",
                                       "pp",
                                       "dp",
                                       "cp",
                                       "ep",
                                       "vpp",
                                       "sp",
                                       "zero",
                                       "dp_shard",
                                       "micro_batch",
                                       "recompute",
                                       "recompute_layers",
                                       "recompute_every"};
  for (const char* key : k_layout) {
    if (flags.has(key)) return true;
  }
  return false;
}

}  // namespace lagom::cli
