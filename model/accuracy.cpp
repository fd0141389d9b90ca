#include "model/accuracy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "lagom/accuracy_table.h"
#include "model/fabric.h"

namespace lagom::model {

RegimeKey regime_of(const ClusterSpec& cluster, const Strategy& strategy, const WorkloadSpec& workload) {
  RegimeKey key;
  key.sm_arch = cluster.gpu.sm_arch;
  key.stack = strategy.stack;
  const bool split = strategy.tp > 1 || strategy.pp > 1 || strategy.cp > 1 || strategy.ep > 1;
  key.sharding = !split && strategy.zero >= 2 ? Sharding::sharded_dp : Sharding::model_parallel;
  key.moe = workload.moe.has_value();
  key.fp8 = strategy.precision == Precision::fp8;
  key.multi_node = strategy.gpus > cluster.gpus_per_node;
  if (key.multi_node) {
    std::vector<std::string> parts;
    if (cluster.nic.kind != NicKind::ib) parts.emplace_back(to_string(cluster.nic.kind));
    if (resolved_routing(cluster) == Routing::ecmp) parts.emplace_back("ECMP routing");
    if (!cluster.nic.gpudirect) parts.emplace_back("no GPUDirect RDMA");
    if (cluster.nic.fabric.oversubscription > 1)
      parts.push_back(fmt::format("{:g}:1 oversubscribed", cluster.nic.fabric.oversubscription));
    for (const std::string& part : parts) key.network += (key.network.empty() ? "" : ", ") + part;
  }
  return key;
}

namespace {

std::string name_of(int sm_arch, Stack stack, Sharding sharding, std::optional<bool> moe,
                    std::optional<bool> fp8, std::optional<bool> multi_node) {
  std::string name = fmt::format("sm{} {} {}", sm_arch, to_string(stack), to_string(sharding));
  if (moe) name += *moe ? " moe" : " dense";
  if (fp8) name += *fp8 ? " fp8" : " 16-bit";
  if (multi_node) name += *multi_node ? " multi-node" : " single-node";
  return name;
}

// The regime holds runs of `key`: the fixed dimensions equal, the pooled ones any.
bool holds(const Regime& r, const RegimeKey& key) {
  return r.sm_arch == key.sm_arch && r.stack == key.stack && r.sharding == key.sharding &&
         (!r.moe || *r.moe == key.moe) && (!r.fp8 || *r.fp8 == key.fp8) &&
         (!r.multi_node || *r.multi_node == key.multi_node);
}

int fixed_dimensions(const Regime& r) {
  return static_cast<int>(r.moe.has_value()) + static_cast<int>(r.fp8.has_value()) +
         static_cast<int>(r.multi_node.has_value());
}

// The most specific regime that holds `key` (the one its runs were assigned to), or none.
const Regime* regime_holding(const RegimeKey& key, const std::vector<Regime>& regimes) {
  const Regime* best = nullptr;
  for (const Regime& r : regimes) {
    if (holds(r, key) && (best == nullptr || fixed_dimensions(r) > fixed_dimensions(*best))) best = &r;
  }
  return best;
}

double residual(const ResidualRun& run) {
  return std::log(run.measured_s / run.predicted_s);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The 90% bounds on the residuals of `runs` other than `excluded`'s (none excluded: ""), in ln(measured /
// predicted). Runs of one model share its error (its shape, its recipe), so a new model's runs sit farther
// from the others' than the runs of one model sit from each other: each run is scored by its distance from
// the median of the OTHER models' runs, and the bounds are the median of all plus the conformal bounds of
// those scores. With a single model there is no other: the plain residuals about their median.
std::optional<std::pair<double, double>> model_bounds(const std::vector<const ResidualRun*>& runs,
                                                      const std::string& excluded) {
  std::vector<const ResidualRun*> kept;
  std::set<std::string> models;
  for (const ResidualRun* run : runs) {
    if (run->model == excluded) continue;
    kept.push_back(run);
    models.insert(run->model);
  }
  if (kept.empty()) return std::nullopt;
  std::vector<double> all;
  for (const ResidualRun* run : kept) all.push_back(residual(*run));
  const double center = median(all);
  std::map<std::string, double> center_without;  // the median of the other models' runs, per model
  for (const std::string& model : models) {
    std::vector<double> others;
    for (const ResidualRun* run : kept) {
      if (run->model != model) others.push_back(residual(*run));
    }
    center_without[model] = others.empty() ? center : median(others);
  }
  std::vector<double> scores;
  for (const ResidualRun* run : kept) scores.push_back(residual(*run) - center_without[run->model]);
  const auto bounds = conformal_bounds(std::move(scores));
  if (!bounds) return std::nullopt;
  return std::make_pair(center + bounds->first, center + bounds->second);
}

// The regime of `runs` (all of one projected key: `pattern` with the pooled dimensions unset).
Regime summarise(Regime pattern, const std::vector<const ResidualRun*>& runs) {
  std::set<std::string> models, files;
  double signed_sum = 0, abs_sum = 0;
  pattern.min_gpus = runs.front()->gpus;
  pattern.max_gpus = runs.front()->gpus;
  for (const ResidualRun* run : runs) {
    models.insert(run->model);
    files.insert(run->file);
    const double error = 100.0 * (run->predicted_s - run->measured_s) / run->measured_s;
    signed_sum += error;
    abs_sum += std::abs(error);
    pattern.min_gpus = std::min(pattern.min_gpus, run->gpus);
    pattern.max_gpus = std::max(pattern.max_gpus, run->gpus);
  }
  pattern.runs = static_cast<int>(runs.size());
  pattern.models = static_cast<int>(models.size());
  for (const std::string& file : files) pattern.data += (pattern.data.empty() ? "" : ", ") + file;
  pattern.bias_pct = signed_sum / static_cast<double>(runs.size());
  pattern.mape_pct = abs_sum / static_cast<double>(runs.size());
  if (const auto bounds = model_bounds(runs, "")) {
    pattern.low_ratio = std::exp(bounds->first);
    pattern.high_ratio = std::exp(bounds->second);
  }
  return pattern;
}

// `key` as a regime pattern with the first `pooled` of (scale, precision, experts) left unset.
Regime pattern_of(const RegimeKey& key, int pooled) {
  Regime r;
  r.sm_arch = key.sm_arch;
  r.stack = key.stack;
  r.sharding = key.sharding;
  if (pooled < 3) r.moe = key.moe;
  if (pooled < 2) r.fp8 = key.fp8;
  if (pooled < 1) r.multi_node = key.multi_node;
  return r;
}

constexpr int k_pool_levels = 4;           // full key; then scale, precision and experts pooled in turn
constexpr std::size_t k_enough_runs = 19;  // the fewest runs conformal_bounds bounds at level 0.9

// The regimes' patterns and their runs (indices into `runs`): grouped by the full key; a group with too few
// runs for bounds waits to be pooled at the next level (scale, then precision, then experts left unset),
// where its group holds every run of the coarser key. The last level takes what is left, bounded or not.
std::vector<std::pair<Regime, std::vector<std::size_t>>> regime_groups(const std::vector<ResidualRun>& runs) {
  std::vector<std::pair<Regime, std::vector<std::size_t>>> out;
  std::vector<bool> placed(runs.size(), false);
  for (int pooled = 0; pooled < k_pool_levels; ++pooled) {
    std::map<std::string, std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      groups[regime_name(pattern_of(runs[i].key, pooled))].push_back(i);
    }
    for (const auto& [name, members] : groups) {
      const bool waiting =
          std::any_of(members.begin(), members.end(), [&](std::size_t i) { return !placed[i]; });
      if (!waiting || (members.size() < k_enough_runs && pooled + 1 < k_pool_levels)) continue;
      for (const std::size_t i : members) placed[i] = true;
      out.emplace_back(pattern_of(runs[members.front()].key, pooled), members);
    }
  }
  return out;
}

// One run judged by the bounds of its regime computed without its model's runs.
struct HeldOut {
  const Regime* home = nullptr;
  bool counted = false;  // enough runs of other models remained to bound
  bool covered = false;
};
std::vector<HeldOut> hold_out_models(const std::vector<ResidualRun>& runs,
                                     const std::vector<Regime>& regimes) {
  // The bounds depend only on the regime and the model left out: computed once per pair.
  std::map<std::pair<const Regime*, std::string>, std::optional<std::pair<double, double>>> bounds_without;
  std::vector<HeldOut> out;
  for (const ResidualRun& run : runs) {
    HeldOut h;
    h.home = regime_holding(run.key, regimes);
    if (h.home != nullptr) {
      const auto key = std::make_pair(h.home, run.model);
      auto it = bounds_without.find(key);
      if (it == bounds_without.end()) {
        std::vector<const ResidualRun*> members;
        for (const ResidualRun& other : runs) {
          if (holds(*h.home, other.key)) members.push_back(&other);
        }
        it = bounds_without.emplace(key, model_bounds(members, run.model)).first;
      }
      if (const auto& bounds = it->second) {
        const double r = residual(run);
        h.counted = true;
        h.covered = r >= bounds->first && r <= bounds->second;
      }
    }
    out.push_back(h);
  }
  return out;
}

}  // namespace

std::string regime_name(const Regime& r) {
  return name_of(r.sm_arch, r.stack, r.sharding, r.moe, r.fp8, r.multi_node);
}

std::string regime_name(const RegimeKey& k) {
  return name_of(k.sm_arch, k.stack, k.sharding, k.moe, k.fp8, k.multi_node);
}

std::optional<std::pair<double, double>> conformal_bounds(std::vector<double> residuals) {
  // Level 0.9 split evenly: the ⌊(n+1)/20⌋-th and ⌈19(n+1)/20⌉-th order statistics (1-based), in integers so
  // that no rounding moves a rank. A new exchangeable run falls between them with probability ≥ 0.9.
  static_assert(k_interval_level == 0.9);
  const std::size_t n = residuals.size();
  const std::size_t low_rank = (n + 1) / 20;
  const std::size_t high_rank = (19 * (n + 1) + 19) / 20;
  if (low_rank < 1 || high_rank > n) return std::nullopt;
  std::sort(residuals.begin(), residuals.end());
  return std::make_pair(residuals[low_rank - 1], residuals[high_rank - 1]);
}

std::vector<Regime> compute_regimes(const std::vector<ResidualRun>& runs) {
  std::vector<Regime> regimes;
  for (const auto& [pattern, members] : regime_groups(runs)) {
    std::vector<const ResidualRun*> group;
    for (const std::size_t i : members) group.push_back(&runs[i]);
    regimes.push_back(summarise(pattern, group));
  }
  std::sort(regimes.begin(), regimes.end(),
            [](const Regime& a, const Regime& b) { return regime_name(a) < regime_name(b); });
  const std::vector<HeldOut> held_out = hold_out_models(runs, regimes);
  for (Regime& r : regimes) {
    int covered = 0;
    for (const HeldOut& h : held_out) {
      if (h.home != &r || !h.counted) continue;
      ++r.held_out_runs;
      covered += h.covered ? 1 : 0;
    }
    if (r.held_out_runs > 0) r.held_out_coverage = static_cast<double>(covered) / r.held_out_runs;
  }
  return regimes;
}

std::pair<int, int> held_out_coverage(const std::vector<ResidualRun>& runs) {
  std::vector<Regime> regimes;
  for (const auto& group : regime_groups(runs)) regimes.push_back(group.first);
  int covered = 0, counted = 0;
  for (const HeldOut& h : hold_out_models(runs, regimes)) {
    counted += h.counted ? 1 : 0;
    covered += h.covered ? 1 : 0;
  }
  return {covered, counted};
}

static_assert(k_accuracy_table_level == k_interval_level,
              "model/accuracy.json was written for another interval level: run scripts/update-accuracy.sh");

const std::vector<Regime>& shipped_regimes() {
  static const std::vector<Regime> regimes = accuracy_table();
  return regimes;
}

std::optional<std::pair<double, double>> PredictionInterval::of(double predicted) const {
  if (!low_ratio || !high_ratio) return std::nullopt;
  return std::make_pair(predicted * *low_ratio, predicted * *high_ratio);
}

std::string PredictionInterval::source() const {
  if (regime == nullptr) return why;
  std::string text = fmt::format("{} runs ({}) of {}", regime->runs, regime->data, regime_name(*regime));
  if (!differs.empty()) {
    std::string list;
    for (const std::string& d : differs) list += (list.empty() ? "" : ", ") + d;
    text += "; the nearest validated regime: its " + list + " differs";
  }
  if (!extrapolated.empty()) text += "; " + extrapolated;
  if (!why.empty()) text += "; " + why;
  // Bounds that did not hold the regime's runs of a model left out (a regime of one model, or one pooled
  // from others) are weaker than their level: say so where the interval is read (from 10 runs on: one or
  // two runs outside say little).
  if (regime->held_out_coverage && regime->held_out_runs >= 10 &&
      *regime->held_out_coverage < k_interval_level - 0.05) {
    text += fmt::format("; caution: with each model left out, these bounds held {:.0f}% of its {} runs",
                        100 * *regime->held_out_coverage, regime->held_out_runs);
  }
  return text;
}

PredictionInterval interval_for(const RegimeKey& key, int gpus, const std::vector<Regime>& regimes) {
  PredictionInterval out;
  out.regime = regime_holding(key, regimes);
  if (out.regime == nullptr) {
    // The nearest regime of the same GPU, stack and sharding: the fewest dimensions that differ.
    int best = 4;
    for (const Regime& r : regimes) {
      if (r.sm_arch != key.sm_arch || r.stack != key.stack || r.sharding != key.sharding) continue;
      std::vector<std::string> differs;
      if (r.moe && *r.moe != key.moe) differs.emplace_back("dense/MoE");
      if (r.fp8 && *r.fp8 != key.fp8) differs.emplace_back("precision");
      if (r.multi_node && *r.multi_node != key.multi_node) differs.emplace_back("node count");
      const int n = static_cast<int>(differs.size());
      if (n < best || (n == best && out.regime != nullptr && r.runs > out.regime->runs)) {
        best = n;
        out.regime = &r;
        out.differs = std::move(differs);
      }
    }
  }
  if (out.regime == nullptr) {
    const auto any = [&](auto&& pred) { return std::any_of(regimes.begin(), regimes.end(), pred); };
    const std::string stack(to_string(key.stack));
    if (!any([&](const Regime& r) { return r.sm_arch == key.sm_arch; })) {
      out.why = fmt::format("no validated runs on sm{} GPUs: no interval", key.sm_arch);
    } else if (!any([&](const Regime& r) { return r.sm_arch == key.sm_arch && r.stack == key.stack; })) {
      out.why =
          fmt::format("no validated runs of the {} stack on sm{} GPUs: no interval", stack, key.sm_arch);
    } else {
      out.why = fmt::format("no validated {} runs of the {} stack on sm{} GPUs: no interval",
                            to_string(key.sharding), stack, key.sm_arch);
    }
    return out;
  }
  const Regime& r = *out.regime;
  if (!key.network.empty()) out.differs.push_back("network (" + key.network + ")");
  if (gpus > r.max_gpus || gpus < r.min_gpus) {
    out.extrapolated = fmt::format("{} GPUs, outside its runs' {}–{}", gpus, r.min_gpus, r.max_gpus);
  }
  out.low_ratio = r.low_ratio;
  out.high_ratio = r.high_ratio;
  if (!r.low_ratio) out.why = fmt::format("{} runs are too few to bound a 90% interval", r.runs);
  return out;
}

PredictionInterval interval_for(const RegimeKey& key, int gpus) {
  return interval_for(key, gpus, shipped_regimes());
}

}  // namespace lagom::model
