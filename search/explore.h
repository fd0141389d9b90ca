// Capacity planning (search/, beside tune: both search a space with the simulator as the judge): every
// valid strategy for a number of GPUs, evaluated with the simulator in parallel,
// best first. Candidates that do not fit in memory are not simulated; the others are visited in order of a
// cheap lower bound of their iteration time (iteration_lower_bound_us) and skipped once it exceeds the K-th
// best time found; a candidate that passes has its task graph built and is skipped if the graph's critical
// path exceeds that time (simulate_unless_slower), and is simulated otherwise. Both are proven lower bounds
// of simulate()'s time (simulator.h), so skipping cannot change the top K: the ranking is by simulate()
// alone (ties by candidate order), and `lagom simulate` with a reported strategy reproduces its numbers
// exactly.
//
// The space (docs/simulator.md): tp dividing heads and kv_heads; cp dividing seq; pp dividing layers; dp =
// gpus/(tp·pp·cp); ep dividing experts and dp·cp (MoE only); sp on/off when tp > 1; vpp 1 or a divisor
// >= 2 of layers/pp when pp > 1; micro-batch a power of two up to 16 dividing global_batch/dp; recompute
// none/selective/full; zero 0–3; tp-overlap none, slice:2, slice:4, slice:8, flash (with sp). Every
// dimension given in `pinned` is fixed; model::resolve_strategy decides validity. Under a framework
// profile (options.framework) every list is the profile's (CP methods too, when cp > 1), its default
// bucket replaces base.bucket_mb unless pinned, and check_strategy drops what the framework cannot run.
//
// Thread safety: explore() runs `threads` std::threads internally; the CostModel is shared read-only.
#pragma once

#include <cstddef>
#include <vector>

#include "core/error.h"
#include "core/progress.h"
#include "model/cost_model.h"
#include "search/framework.h"
#include "simulator/simulator.h"

namespace lagom::search {

struct ExplorePins {
  std::optional<int> tp, pp, dp, cp, ep, vpp, zero;
  std::optional<int> dp_shard;  // else searched where the framework shards hybrid (FrameworkProfile)
  std::optional<bool> sp;
  std::optional<long> micro_batch;
  std::optional<model::Recompute> recompute;
  std::optional<model::OverlapMethod> tp_overlap;
  std::optional<model::CpCommType> cp_comm;  // else the framework's CP methods (any: base.cp_comm)
  bool bucket_mb = false;                    // base.bucket_mb given (else the framework's default)
};

struct ExploreOptions {
  model::Strategy
      base;  // gpus, global_batch and the fixed knobs (dp_overlap, bucket_mb, precision, attention)
  ExplorePins pinned;
  int top = 10;     // results to keep (>= 1)
  int threads = 0;  // 0 = std::thread::hardware_concurrency()
  // Only strategies this framework runs (search/framework.h); any = every strategy Lagom prices.
  Framework framework = Framework::any;
};

struct ExploreEntry {
  model::Strategy strategy;
  simulator::SimulationResult result;
};

struct ExploreResult {
  std::size_t evaluated = 0;      // valid candidate strategies considered (pruned ones included); 0: none
                                  // divides the GPUs under the pinned values (results empty)
  std::size_t pruned = 0;         // not simulated: out of memory, or a bound above the K-th best
  std::size_t out_of_memory = 0;  // of those, because they do not fit
  std::size_t simulated = 0;
  double elapsed_s = 0;
  std::vector<ExploreEntry> results;  // best first, at most `top`, all fitting in memory
};

// invalid_input when a pinned value is one options.framework does not run (check_strategy's message).
Status check_framework_pins(const ExploreOptions& options);

// The valid candidate strategies (resolved) that explore() considers, in its order; ties in iteration time
// rank by this order.
std::vector<model::Strategy> explore_candidates(const model::WorkloadSpec& workload,
                                                const model::ClusterSpec& cluster,
                                                const ExploreOptions& options);

Result<ExploreResult> explore(const model::WorkloadSpec& workload, const model::ClusterSpec& cluster,
                              const model::CostModel& cost_model, const ExploreOptions& options,
                              Progress& progress);

}  // namespace lagom::search
