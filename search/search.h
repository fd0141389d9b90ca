// The four searches of `lagom tune` behind one interface (docs/search.md#the-four-searches), each counting
// its evaluations. One evaluation = one simulation of the whole iteration (simulator::simulate) with one full
// assignment; an assignment already simulated is answered from a cache and not counted again.
//
//   default     NCCL's own choice for every op class (1 evaluation).
//   exhaustive  the cross product of every decision's options (structural ones included); refuses, before
//               simulating anything beyond the op-class discovery, when that is above k_exhaustive_limit.
//   autoccl     AutoCCL (NSDI'25): per op class, coordinate descent over (channels, threads, chunk) inside
//               each (algorithm, protocol) group, minimising that class's own communication time; every
//               class tunes at the same time, one candidate each per simulated iteration, as AutoCCL tunes
//               online. It does not touch structural or per-process knobs.
//   lagom       priority-based (Lagom, arXiv 2602.20656): structural knobs first; then rounds that measure
//               every single-decision move from the current choice, rank the improving moves by
//               H = ΔY / Δx (computation added per unit of communication saved; moves that save both rank
//               first), apply them one at a time in that order keeping each only if the re-simulated
//               iteration is faster, and stop when a round gains less than `threshold`. Options whose price
//               (time, compute slowdown, communication slowdown) is dominated by another option of the
//               same decision are skipped (the simulated iteration cannot get faster through them).
//               Evaluations: at most 3 × Σ options, linear in op classes × options.
//
// Thread safety: a search runs on the calling thread; Problem's referents must outlive it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "search/space.h"
#include "simulator/costs.h"
#include "simulator/simulator.h"

namespace lagom::search {

enum class SearchKind { default_, exhaustive, autoccl, lagom };
// Listed as --search's help offers them, the recommended first.
inline constexpr auto k_search_kind_names = enum_table<SearchKind>({{SearchKind::lagom, "lagom"},
                                                                    {SearchKind::autoccl, "autoccl"},
                                                                    {SearchKind::exhaustive, "exhaustive"},
                                                                    {SearchKind::default_, "default"}});
constexpr const auto& enum_names(SearchKind) {
  return k_search_kind_names;
}

inline constexpr double k_exhaustive_limit = 1e6;  // evaluations the oracle may need at most

// What to tune. Pointers are not owned.
struct Problem {
  const model::WorkloadSpec* workload = nullptr;
  const model::ClusterSpec* cluster = nullptr;
  const simulator::IterationCosts* costs = nullptr;
  SpaceContext space;  // model, resolved strategy, runtime, pins
};

struct SearchOptions {
  double threshold = 1e-3;   // lagom: stop when a round improves the iteration by less than this fraction
  long max_evaluations = 0;  // 0 = the search's own bound
};

// One thing a search tried, for --explain.
struct Trial {
  std::string decision;      // Decision::name
  std::string option;        // Option::label
  double iteration_us = 0;   // simulated iteration
  double compute_us = 0;     // Y: compute (incl. slowdowns) + optimizer, mean over stages
  double comm_us = 0;        // x: Σ count × alone time over op classes
  double class_comm_us = 0;  // the decision's own classes' communication time (autoccl's objective)
  std::string note;          // "kept", "reverted", "pruned: dominated by ...", "H = ...", ...
};

struct TuneResult {
  SearchKind search = SearchKind::lagom;
  model::Runtime runtime = model::Runtime::nccl;
  bool comm_knobs_searched = true;  // false on clusters without NCCL: only the overlap knobs
  long evaluations = 0;
  double search_time_s = 0;
  double baseline_iteration_us = 0;  // NCCL defaults, the strategy's structural knobs
  // The op classes of that baseline simulation (each priced with NCCL's default knobs), for the outputs'
  // default-vs-tuned comparison per op class.
  std::vector<simulator::OpClass> baseline_op_classes;
  double predicted_iteration_us = 0;  // result.iteration_time_s · 1e6 (what the searches compare)
  Choice choice;
  simulator::CommAssignment assignment;  // what the files hold; simulate(assignment) = predicted
  simulator::SimulationResult result;    // the final simulation
  std::vector<Decision> structural;      // the decisions of the final space (for --explain's grid)
  std::vector<Decision> decisions;
  double grid_options = 0;        // Σ options over the decisions (structural included)
  double oracle_evaluations = 0;  // the exhaustive cross product's size (may exceed the limit)
  std::vector<Trial> trials;

  // Seconds as reported: the prediction is the final simulation's own value, not predicted_iteration_us
  // converted back, so that `simulate --comm-config` reproduces it bit for bit.
  [[nodiscard]] double predicted_iteration_s() const { return result.iteration_time_s; }
  [[nodiscard]] double baseline_iteration_s() const { return baseline_iteration_us * 1e-6; }
  [[nodiscard]] double speedup() const {
    return predicted_iteration_s() > 0 ? baseline_iteration_s() / predicted_iteration_s() : 0.0;
  }
  std::vector<std::string> notes;  // e.g. conflicts resolved for the tuner file
};

// Runs one search. invalid_input when the strategy cannot be simulated or the oracle is too large.
Result<TuneResult> run_search(SearchKind kind, const Problem& problem, const SearchOptions& options = {});

}  // namespace lagom::search
