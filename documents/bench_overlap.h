// The `bench-overlap --json` document (docs/kernels.md#command-line): the plan's shape, the measured times,
// the pricing beside them and the check against the fp64 reference. Stamped with its kind and version.
#pragma once

#include <nlohmann/json.hpp>

#include "kernels/bench_overlap.h"

namespace lagom::documents {

nlohmann::json bench_overlap_json(const model::OverlapPlan& plan, const kernels::OverlapBench& bench,
                                  const kernels::BenchOptions& options);

}  // namespace lagom::documents
