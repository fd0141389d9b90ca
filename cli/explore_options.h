// explore's search options from the strategy flags, shared by `lagom explore` and `lagom tune` (which
// explores first when it is given no layout: one-step tuning).
#pragma once

#include <string>

#include "inputs/scenario.h"
#include "search/explore.h"

namespace lagom::cli {

// The base strategy carries gpus, the global batch (the workload's when not given) and the fixed knobs;
// every searched dimension whose flag was given is pinned. Fails (invalid input) without a global batch.
Result<search::ExploreOptions> explore_options(const inputs::StrategyFlags& flags,
                                               const model::WorkloadSpec& workload,
                                               search::Framework framework);

// Whether the flags name any of the layout explore searches (tp, pp, dp, cp, ep, vpp, sp, zero, dp-shard,
// micro-batch, recompute and its layers): without one, tune takes explore's best.
[[nodiscard]] bool names_layout(const inputs::StrategyFlags& flags);

}  // namespace lagom::cli
