// The strategy flags that act only in some context, as one table (inputs/flag_context.cpp): the MoE
// knobs need a MoE model, the FP8 knobs --precision fp8, the pipeline knobs pp > 1, ... A flag given with
// a value other than its default whose context is missing would change nothing: that is an error naming the
// flag, what it needs and what the scenario has ("--moe-capacity-factor needs a MoE model: llama3-8b has no
// experts"), never a silent no-op. A flag given at its default changes nothing and is accepted anywhere (a
// strategy document replayed as flags names every knob). docs/cli.md#flags-that-need-a-context lists the
// table.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "inputs/scenario.h"
#include "model/specs.h"

namespace lagom::inputs {

// One row: the knob (its JSON key, StrategyFlags::given), the strategy keys its condition reads, whether
// the scenario lets it act, what it needs and what the scenario has instead.
struct FlagContext {
  std::string_view key;
  std::vector<std::string_view> reads;  // strategy keys the condition reads (explore skips free ones)
  bool (*acts)(const model::WorkloadSpec& workload, const model::Strategy& strategy);
  std::string_view needs;
  std::string (*instead)(const model::WorkloadSpec& workload, const model::Strategy& strategy);
};

// The table, in the knobs' order.
const std::vector<FlagContext>& flag_contexts();

// Every given flag of `flags` (at a value other than its default) that cannot act on `workload` and
// `strategy` (resolved where the caller has it), all named in one error. A row that reads a key of
// `free` (a dimension explore searches) is skipped: some candidates may give it its context.
Status check_flag_contexts(const StrategyFlags& flags, const model::WorkloadSpec& workload,
                           const model::Strategy& strategy, const std::set<std::string>& free = {});

}  // namespace lagom::inputs
