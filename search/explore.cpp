#include "search/explore.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/parallel.h"
#include "core/units.h"
#include "model/pipeline_split.h"
#include "simulator/model_costs.h"

namespace lagom::search {

using namespace simulator;

namespace {

std::vector<int> divisors(long n, long cap) {
  std::vector<int> out;
  for (long d = 1; d <= n && d <= cap; ++d) {
    if (n % d == 0) out.push_back(static_cast<int>(d));
  }
  return out;
}

template <typename T>
std::vector<T> pin(const std::optional<T>& pinned, std::vector<T> all) {
  if (pinned) return {*pinned};
  return all;
}

// Hybrid sharding's shard groups for `zero` over `dp` ranks where the profile runs it: 0 (the whole dp
// group) and every power of two from 2 below dp that divides it (torchtitan's and FSDP's shard groups are
// a node's GPUs or a few nodes'; 1 would shard nothing, which zero 0 already covers).
std::vector<int> dp_shards(const FrameworkProfile& profile, int zero, int dp) {
  std::vector<int> out{0};
  if (std::find(profile.hybrid_zero_stages.begin(), profile.hybrid_zero_stages.end(), zero) ==
      profile.hybrid_zero_stages.end())
    return out;
  for (int d = 2; d < dp; d *= 2) {
    if (dp % d == 0) out.push_back(d);
  }
  return out;
}

}  // namespace

std::vector<model::Strategy> explore_candidates(const model::WorkloadSpec& w,
                                                const model::ClusterSpec& cluster,
                                                const ExploreOptions& options) {
  const model::Strategy& base = options.base;
  const ExplorePins& p = options.pinned;
  const int gpus = base.gpus;
  std::vector<model::Strategy> out;
  const FrameworkProfile& profile = framework_profile(options.framework);
  const std::vector<model::OverlapMethod>& overlaps = profile.tp_overlaps;
  for (const int tp : pin(p.tp, divisors(gpus, gpus))) {
    if (w.heads % tp != 0 || w.kv_heads % tp != 0) continue;
    for (const int cp : pin(p.cp, divisors(gpus / tp, gpus))) {
      if (gpus % tp != 0 || (gpus / tp) % cp != 0 || w.seq % cp != 0 || (w.heads / tp) % cp != 0) continue;
      for (const int pp : pin(p.pp, divisors(gpus / tp / cp, w.layers))) {
        if ((gpus / tp / cp) % pp != 0 || w.layers % pp != 0) continue;
        const int dp = gpus / tp / cp / pp;
        if (p.dp && *p.dp != dp) continue;
        if (base.global_batch % dp != 0) continue;
        std::vector<int> eps{1};
        if (w.moe && profile.expert_parallel)
          eps = divisors(std::min<long>(w.moe->experts, static_cast<long>(dp) * cp), w.moe->experts);
        for (const int ep : pin(p.ep, eps)) {
          std::vector<bool> sps{false};
          if (tp > 1 && profile.sequence_parallel) sps = {false, true};
          for (const bool sp : pin(p.sp, sps)) {
            std::vector<int> vpps{1};
            if (pp > 1 && profile.interleaved_pipeline) {
              for (const int v : divisors(w.layers / pp, w.layers)) {
                if (v >= 2) vpps.push_back(v);
              }
            }
            for (const int vpp : pin(p.vpp, vpps)) {
              std::vector<long> mbs;
              for (long mb = 1; mb <= 16; mb *= 2) {
                if ((base.global_batch / dp) % mb == 0) mbs.push_back(mb);
              }
              for (const long mb : pin(p.micro_batch, mbs)) {
                for (const auto recompute : pin(p.recompute, profile.recomputes)) {
                  for (const int zero : pin(p.zero, profile.zero_stages)) {
                    std::vector<model::OverlapMethod> ovs{overlaps.front()};
                    if (sp) ovs = overlaps;
                    std::vector<model::CpCommType> cp_comms{base.cp_comm};
                    if (cp > 1 && !profile.cp_comms.empty()) cp_comms = profile.cp_comms;
                    for (const auto& overlap : pin(p.tp_overlap, ovs)) {
                      for (const auto cp_comm : pin(p.cp_comm, cp_comms)) {
                        for (const int shard : pin(p.dp_shard, dp_shards(profile, zero, dp))) {
                          model::Strategy s = base;
                          s.tp = tp, s.cp = cp, s.pp = pp, s.dp = dp, s.ep = ep, s.sp = sp, s.vpp = vpp;
                          s.micro_batch = mb, s.recompute = recompute, s.zero = zero, s.tp_overlap = overlap;
                          s.cp_comm = cp_comm, s.dp_shard = shard;
                          // --recompute-early-stop is how the framework checkpoints: it acts on the
                          // full-recompute candidates, the others have nothing to stop.
                          s.recompute_early_stop =
                              base.recompute_early_stop && recompute == model::Recompute::full;
                          s.schedule = vpp > 1 ? model::Schedule::interleaved : model::Schedule::one_f_one_b;
                          auto resolved = model::resolve_strategy(s, w, cluster);
                          if (!resolved.ok()) continue;
                          *resolved = with_framework_defaults(profile, *resolved);
                          if (!p.bucket_mb) resolved->bucket_mb = default_bucket_mb(profile, w, *resolved);
                          if (check_strategy(profile, *resolved).ok())
                            out.push_back(std::move(resolved).value());
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

Status check_framework_pins(const ExploreOptions& options) {
  // The pinned dimensions on a strategy whose other dimensions every framework runs.
  const ExplorePins& p = options.pinned;
  model::Strategy s = options.base;
  s.tp = p.tp.value_or(1), s.pp = p.pp.value_or(1), s.cp = p.cp.value_or(1), s.ep = p.ep.value_or(1);
  s.vpp = p.vpp.value_or(1), s.zero = p.zero.value_or(0), s.sp = p.sp.value_or(false);
  s.recompute = p.recompute.value_or(model::Recompute::none);
  s.tp_overlap = p.tp_overlap.value_or(model::OverlapMethod{});
  // A pinned shard group, checked as a hybrid one (dp twice the shard) with the pinned zero or ZeRO-3.
  if (p.dp_shard) s.dp_shard = *p.dp_shard, s.dp = 2 * *p.dp_shard, s.zero = p.zero.value_or(3);
  // The CP method is searched unless pinned; a pinned one is checked as if CP ran.
  s.cp = p.cp_comm ? std::max(2, s.cp) : 1;
  if (p.tp_overlap && p.tp_overlap->kind != model::OverlapMethodKind::none) s.sp = true;
  const FrameworkProfile& profile = framework_profile(options.framework);
  return check_strategy(profile, with_framework_defaults(profile, s));
}

namespace {

// body(i) for every i < n on up to `threads` threads (core/parallel.h). A thread the system refuses (a
// process or memory limit) leaves the work to the others, with one warning; a body's exception (out of
// memory) ends the phase and reaches the command.
template <typename Body>
void run_parallel(std::size_t n, unsigned threads, Progress& progress, bool& warned, Body&& body) {
  const ParallelRun run = parallel_for(n, threads, body);
  if (!run.refused.empty() && !warned) {
    progress.warn(fmt::format("explore: {} of {} worker threads started ({}); continuing with {}",
                              run.threads, std::min<std::size_t>(threads, n), run.refused, run.threads));
    warned = true;
  }
}

// A full-recompute candidate recomputes only as many layers per chunk as it needs to fit (Megatron's block
// method, recompute_layers N): the smallest N whose memory fits the budget, found by bisection (memory falls
// as N grows). 0 (every layer) when no N short of the largest chunk fits, when nothing needs recomputing
// and the candidate without recompute is enumerated too (`without_enumerated`: it fits and dominates), or
// when recompute is not full or the base pinned N. Under a pinned --recompute full the same candidate is
// not enumerated, so the fewest N is given even where 1 fits.
// The layer knob searches below: whether `s` fits with its recompute set to `recompute` and the knob
// `field` (recompute_layers or recompute_every) to n, and the most layers a model chunk of `s` holds.
struct RecomputeFit {
  const model::WorkloadSpec& w;
  const model::ClusterSpec& cluster;
  const model::CostModel& cost_model;
  const model::Strategy& s;
  int model::Strategy::*field;

  [[nodiscard]] bool operator()(model::Recompute recompute, int n) const {
    model::Strategy t = s;
    t.recompute = recompute;
    t.*field = n;
    return units::bytes_to_gib(cost_model.memory_per_gpu(w, t).total_bytes()) <=
           cluster.gpu.memory_budget_gib();
  }
  [[nodiscard]] int largest_chunk() const {
    int largest = 0;
    for (const auto& stage : model::pipeline_split(w, s)) {
      for (const model::ChunkLayers& chunk : stage) largest = std::max(largest, chunk.layers);
    }
    return largest;
  }
};

int fewest_recomputed_layers(const model::WorkloadSpec& w, const model::ClusterSpec& cluster,
                             const model::CostModel& cost_model, const model::Strategy& s,
                             bool without_enumerated) {
  if (s.recompute != model::Recompute::full || s.recompute_layers > 0 || s.recompute_every > 0)
    return s.recompute_layers;
  const RecomputeFit fits{w, cluster, cost_model, s, &model::Strategy::recompute_layers};
  const int largest = fits.largest_chunk();
  if (largest < 2 || (without_enumerated && fits(model::Recompute::none, 0)) ||
      !fits(model::Recompute::full, largest - 1)) {
    return 0;
  }
  int lo = 1, hi = largest - 1;  // fits(full, hi)
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (fits(model::Recompute::full, mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return hi;
}

// Under a framework with torchtitan's layer policy but not Megatron's block method (torch-fsdp), a
// full-recompute candidate checkpoints only every k-th layer (recompute_every): the largest k whose memory
// fits (memory falls as k shrinks), by bisection over 2 .. the largest chunk. 0 (every layer) when k = 2
// does not fit, when nothing needs recomputing and the candidate without recompute is enumerated, or when
// recompute is not full or the base pinned k.
int sparsest_recompute_every(const model::WorkloadSpec& w, const model::ClusterSpec& cluster,
                             const model::CostModel& cost_model, const model::Strategy& s,
                             bool without_enumerated) {
  if (s.recompute != model::Recompute::full || s.recompute_every > 0) return s.recompute_every;
  const RecomputeFit fits{w, cluster, cost_model, s, &model::Strategy::recompute_every};
  const int largest = fits.largest_chunk();
  if (largest < 2 || (without_enumerated && fits(model::Recompute::none, 0)) ||
      !fits(model::Recompute::full, 2)) {
    return 0;
  }
  int lo = 2, hi = largest;  // fits(full, lo)
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (fits(model::Recompute::full, mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// A full-recompute candidate's layers to recompute, as few as fit, by the framework's method: Megatron's
// block method where the framework has it, else torchtitan's every k-th layer where it has that.
void recompute_fewest_layers(const model::WorkloadSpec& w, const model::ClusterSpec& cluster,
                             const model::CostModel& cost_model, const FrameworkProfile& profile,
                             model::Strategy& s, bool without_enumerated) {
  if (profile.recompute_block) {
    s.recompute_layers = fewest_recomputed_layers(w, cluster, cost_model, s, without_enumerated);
  } else if (profile.recompute_every) {
    s.recompute_every = sparsest_recompute_every(w, cluster, cost_model, s, without_enumerated);
  }
}

}  // namespace

Result<ExploreResult> explore(const model::WorkloadSpec& workload, const model::ClusterSpec& cluster,
                              const model::CostModel& cost_model, const ExploreOptions& options,
                              Progress& progress) {
  const auto started = std::chrono::steady_clock::now();
  LAGOM_TRY_STATUS(check_framework_pins(options));
  if (options.top < 1) return make_error(ErrorCode::invalid_input, "top must be at least 1");
  if (options.base.gpus < 1) return make_error(ErrorCode::invalid_input, "gpus: required (--gpus N)");
  // The cost model prices every candidate with its one stack; the candidates copy the base's.
  if (options.base.stack != cost_model.stack()) {
    return make_error(
        ErrorCode::failure,
        fmt::format("explore: internal error: the base strategy's stack {} is not the cost "
                    "model's {}",
                    model::to_string(options.base.stack), model::to_string(cost_model.stack())));
  }
  if (options.base.global_batch < 1) return make_error(ErrorCode::invalid_input, "global-batch: required");
  std::vector<model::Strategy> candidates = explore_candidates(workload, cluster, options);
  const FrameworkProfile& profile = framework_profile(options.framework);
  ExploreResult out;
  out.evaluated = candidates.size();
  if (candidates.empty()) return out;  // evaluated 0: the caller says what that means for its user
  const unsigned threads = options.threads > 0 ? static_cast<unsigned>(options.threads)
                                               : std::max(1U, std::thread::hardware_concurrency());
  bool warned_threads = false;
  auto parallel = [&](std::size_t n, auto&& body) {
    run_parallel(n, threads, progress, warned_threads, body);
  };

  // Phase 1: memory (the same figure simulate reports) and the cheap lower bound, for every candidate.
  constexpr double k_inf = std::numeric_limits<double>::infinity();
  const auto prices = std::make_shared<const SharedPrices>(cost_model);
  std::vector<double> bound(candidates.size(), k_inf);
  // Progress counts what each phase is made of: phase 1 every candidate (its memory and bound), phase 2 every
  // candidate that fits, simulated or pruned, with how many were simulated so far (the work a user waits
  // for). Steps come from the workers, so they are serialized, and drawn about a hundred times per phase.
  std::mutex progress_mutex;
  std::size_t progress_done = 0;
  auto advance = [&](std::size_t total, auto&& detail) {
    std::lock_guard lock(progress_mutex);
    ++progress_done;
    if (progress_done == total || progress_done % std::max<std::size_t>(1, total / 100) == 0) {
      progress.step(static_cast<long>(progress_done), detail());
    }
  };
  progress.begin("explore: memory and lower bound per candidate", static_cast<long>(candidates.size()));
  parallel(candidates.size(), [&](std::size_t i) {
    model::Strategy& s = candidates[i];
    recompute_fewest_layers(workload, cluster, cost_model, profile, s, !options.pinned.recompute.has_value());
    const double total_gib = units::bytes_to_gib(cost_model.memory_per_gpu(workload, s).total_bytes());
    if (total_gib <= cluster.gpu.memory_budget_gib()) {
      const ModelCosts costs(cost_model, workload, s, prices);
      // A strategy the simulator refuses gets bound 0: phase 2 reaches it and reports simulate()'s error.
      const Result<double> lower_us = iteration_lower_bound_us(workload, cluster, s, costs);
      bound[i] = lower_us.ok() ? *lower_us : 0.0;
    }
    advance(candidates.size(), [] { return std::string(); });
  });
  progress.end();
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (bound[i] < k_inf) order.push_back(i);
  }
  out.out_of_memory = candidates.size() - order.size();
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return bound[a] < bound[b]; });

  // Phase 2, best bound first: skip a candidate once its bound passes the K-th best time; otherwise build its
  // task graph and skip it if the graph's critical path passes that time; otherwise simulate it.
  std::mutex mutex;
  std::vector<std::pair<double, std::size_t>> best;  // (iteration time, candidate) sorted
  std::vector<std::optional<SimulationResult>> results(candidates.size());
  std::atomic<double> kth_us{k_inf};
  std::atomic<std::size_t> simulated{0};
  std::optional<Error> failure;
  progress_done = 0;
  progress.begin("explore: candidates that fit, best bound first, each simulated or pruned by its bound",
                 static_cast<long>(order.size()));
  auto examine = [&](std::size_t k) {
    const std::size_t i = order[k];
    const double limit_us = kth_us.load();
    if (bound[i] > limit_us) return;
    const ModelCosts costs(cost_model, workload, candidates[i], prices);
    auto result = simulate_unless_slower(workload, cluster, candidates[i], costs, limit_us);
    std::lock_guard lock(mutex);
    if (!result.ok()) {
      if (!failure) failure = result.error();
      return;
    }
    if (!result->has_value()) return;
    ++simulated;
    SimulationResult& r = **result;
    best.emplace_back(r.iteration_time_s, i);
    std::sort(best.begin(), best.end());
    if (best.size() > static_cast<std::size_t>(options.top)) {
      results[best.back().second].reset();
      best.pop_back();
    }
    if (std::find_if(best.begin(), best.end(), [&](const auto& e) { return e.second == i; }) != best.end()) {
      results[i] = std::move(r);
    }
    if (best.size() == static_cast<std::size_t>(options.top)) kth_us = best.back().first * 1e6;
  };
  parallel(order.size(), [&](std::size_t k) {
    examine(k);
    advance(order.size(), [&] { return fmt::format("{} simulated", simulated.load()); });
  });
  progress.end();
  if (failure) return *failure;
  out.simulated = simulated.load();
  out.pruned = candidates.size() - out.simulated;
  for (const auto& [t, i] : best) out.results.push_back({candidates[i], *results[i]});
  out.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace lagom::search
