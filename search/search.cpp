#include "search/search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "simulator/comm_config.h"

namespace lagom::search {

namespace {

using model::Group;
using simulator::OpClass;
using simulator::OpClassKey;

constexpr double k_inf = std::numeric_limits<double>::infinity();
// A move counts as an improvement only when it beats the current iteration by more than this fraction
// (simulation noise is zero, but sums of thousands of floating-point terms differ in the last bits).
constexpr double k_improvement = 1e-9;

bool is_p2p(model::Collective collective) {
  return collective == model::Collective::alltoall || collective == model::Collective::sendrecv;
}

struct Evaluation {
  double iteration_us = 0;
  double compute_us = 0;
  double comm_us = 0;
  std::shared_ptr<const simulator::SimulationResult> result;

  [[nodiscard]] double class_us(const OpClassKey& key) const {
    for (const auto& c : result->op_classes) {
      if (c.key == key) return c.time_us;
    }
    return 0;
  }
  [[nodiscard]] double group_p2p_us(Group group) const {
    double sum = 0;
    for (const auto& c : result->op_classes) {
      if (c.key.group == group && is_p2p(c.key.collective)) sum += c.time_us * c.count;
    }
    return sum;
  }
};

// Simulates choices, counting every simulation; an assignment seen before comes from the cache.
class Evaluator {
 public:
  Evaluator(const Problem& problem, const SearchOptions& options) : m_problem(problem), m_options(options) {}

  Result<Evaluation> evaluate(const Choice& choice) {
    const simulator::CommAssignment assignment = to_assignment(m_problem.space, choice);
    std::string key = simulator::to_json(assignment).dump();
    if (auto it = m_cache.find(key); it != m_cache.end()) return it->second;
    if (m_options.max_evaluations > 0 && m_count >= m_options.max_evaluations) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("search: evaluation limit of {} reached", m_options.max_evaluations));
    }
    LAGOM_TRY(simulator::SimulationResult r,
              simulator::simulate(*m_problem.workload, *m_problem.cluster, m_problem.space.strategy,
                                  *m_problem.costs, assignment));
    ++m_count;
    Evaluation e;
    e.iteration_us = r.iteration_time_s * 1e6;
    e.compute_us = (r.breakdown.compute_s + r.breakdown.optimizer_s) * 1e6;
    for (const auto& c : r.op_classes) e.comm_us += c.count * c.time_us;
    e.result = std::make_shared<const simulator::SimulationResult>(std::move(r));
    m_cache.emplace(std::move(key), e);
    return e;
  }

  [[nodiscard]] long count() const { return m_count; }

 private:
  const Problem& m_problem;
  const SearchOptions& m_options;
  long m_count = 0;
  std::map<std::string, Evaluation> m_cache;
};

Trial trial_of(const std::string& decision, const std::string& option, const Evaluation& e,
               std::string note = {}) {
  return Trial{decision, option, e.iteration_us, e.compute_us, e.comm_us, 0, std::move(note)};
}

// Fills in NCCL's defaults for the op classes the choice's structure issues (one evaluation to discover
// them, one more when the completed choice differs).
Result<Evaluation> settle(Evaluator& evaluator, const Problem& problem, Choice& choice) {
  LAGOM_TRY(Evaluation e, evaluator.evaluate(choice));
  if (!comm_knobs_searchable(problem.space)) return e;
  Choice completed = choice;
  complete_choice(problem.space, e.result->op_classes, completed);
  if (completed == choice) return e;
  choice = std::move(completed);
  return evaluator.evaluate(choice);
}

double options_product(const std::vector<Decision>& decisions) {
  double product = 1;
  for (const auto& d : decisions) product *= static_cast<double>(std::max<std::size_t>(1, d.options.size()));
  return product;
}

double options_sum(const std::vector<Decision>& decisions) {
  double sum = 0;
  for (const auto& d : decisions) sum += static_cast<double>(d.options.size());
  return sum;
}

// Odometer over the options of `decisions`: calls visit(choice) for every combination.
template <typename Visit>
Status for_each_combination(const std::vector<Decision>& decisions, const Choice& base, Visit&& visit) {
  std::vector<std::size_t> index(decisions.size(), 0);
  while (true) {
    Choice choice = base;
    for (std::size_t i = 0; i < decisions.size(); ++i)
      apply(decisions[i], decisions[i].options[index[i]], choice);
    LAGOM_TRY_STATUS(visit(choice));
    std::size_t i = 0;
    for (; i < decisions.size(); ++i) {
      if (++index[i] < decisions[i].options.size()) break;
      index[i] = 0;
    }
    if (i == decisions.size()) return {};
  }
}

// Classes sharing one line of the tuner file (collective, bytes, nNodes, nRanks) must share the decision:
// the plugin cannot tell their communicators apart. The class with the most communication time wins.
bool unify_tuner_lines(const Problem& problem, const Evaluation& e, Choice& choice,
                       std::vector<std::string>& notes) {
  if (!comm_knobs_searchable(problem.space) || problem.space.runtime != model::Runtime::nccl) return false;
  bool changed = false;
  const auto& classes = e.result->op_classes;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    if (!model::tuner_collective(classes[i].key.collective)) continue;
    for (std::size_t j = 0; j < classes.size(); ++j) {
      const OpClass& a = classes[i];
      const OpClass& b = classes[j];
      if (i == j || a.key.group == b.key.group || a.key.collective != b.key.collective ||
          a.key.bytes != b.key.bytes || !(a.shape == b.shape)) {
        continue;
      }
      const bool a_wins =
          a.count * a.time_us > b.count * b.time_us || (a.count * a.time_us == b.count * b.time_us && i < j);
      if (!a_wins) continue;
      auto ca = choice.classes.find(a.key);
      auto cb = choice.classes.find(b.key);
      if (ca == choice.classes.end() || cb == choice.classes.end() || ca->second == cb->second) continue;
      cb->second = ca->second;
      changed = true;
      notes.push_back(
          fmt::format("{} takes the decision of {}: the tuner file cannot tell their communicators "
                      "apart (same collective, size, nodes and ranks)",
                      simulator::op_class_name(b.key), simulator::op_class_name(a.key)));
    }
  }
  return changed;
}

// ---------------------------------------------------------------------------------------------------
// AutoCCL: coordinate descent per (algorithm, protocol) group, per op class, all classes in lockstep.

struct CdUnit {
  bool communicator = false;  // a p2p communicator's CTAs (nccl) instead of an op class
  OpClassKey key;
  Group group = Group::tp;
  std::string name;
  std::vector<std::pair<model::Algo, model::Proto>> groups;
  std::vector<int> channels;
  std::vector<int> threads;          // {0} when not tuned per call
  std::vector<std::int64_t> chunks;  // {0} when not tuned per call
  std::array<int, 3> start{0, 0, 0};
  // State.
  std::size_t group_index = 0;
  std::array<int, 3> point{0, 0, 0}, candidate{0, 0, 0};
  bool have_point = false, improved = false, done = false;
  int move = 0;
  double point_us = k_inf;
  double best_us = k_inf;
  model::CollConfig best_config;
  int best_ctas = 0;

  [[nodiscard]] int axis_size(int axis) const {
    return static_cast<int>(axis == 0 ? channels.size() : axis == 1 ? threads.size() : chunks.size());
  }
  [[nodiscard]] model::CollConfig config_at(const std::array<int, 3>& p) const {
    model::CollConfig c;
    c.algo = groups[group_index].first;
    c.proto = groups[group_index].second;
    c.channels = channels[static_cast<std::size_t>(p[0])];
    c.threads = threads[static_cast<std::size_t>(p[1])];
    c.chunk_bytes = chunks[static_cast<std::size_t>(p[2])];
    return c;
  }
  // The point to measure in this iteration (the best so far once done).
  std::array<int, 3> next() {
    while (!done) {
      if (!have_point) return point;
      while (move < 6) {
        const int axis = move / 2;
        const int step = move % 2 == 0 ? -1 : 1;
        std::array<int, 3> c = point;
        c[static_cast<std::size_t>(axis)] += step;
        if (c[static_cast<std::size_t>(axis)] >= 0 && c[static_cast<std::size_t>(axis)] < axis_size(axis)) {
          candidate = c;
          return candidate;
        }
        ++move;
      }
      if (improved) {
        move = 0;
        improved = false;
        continue;
      }
      if (++group_index >= groups.size()) {
        done = true;
        break;
      }
      point = start;
      have_point = false;
      move = 0;
    }
    return point;
  }
  void report(double us) {
    if (done) return;
    if (!have_point) {
      have_point = true;
      point_us = us;
    } else {
      if (us < point_us * (1 - k_improvement)) {
        point = candidate;
        point_us = us;
        improved = true;
      }
      ++move;
    }
    if (point_us < best_us) {
      best_us = point_us;
      best_config = config_at(point);
      best_ctas = best_config.channels;
    }
  }
  void apply_to(Choice& choice, const std::array<int, 3>& p) const {
    const model::CollConfig c = done ? best_config : config_at(p);
    if (communicator) {
      choice.ctas[group] = c.channels;
    } else {
      choice.classes[key] = c;
    }
  }
};

std::size_t nearest_index(const std::vector<int>& values, int target) {
  std::size_t best = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::abs(values[i] - target) < std::abs(values[best] - target)) best = i;
  }
  return best;
}

Status run_autoccl(const Problem& problem, Evaluator& evaluator, TuneResult& out, Choice& choice) {
  const SpaceContext& ctx = problem.space;
  const model::CostModel& cm = *ctx.model;
  const bool extended = ctx.runtime == model::Runtime::nccl_extended;
  LAGOM_TRY(Evaluation current, settle(evaluator, problem, choice));
  std::vector<CdUnit> units;
  std::vector<int> channels;
  for (int ch : k_grid_channels) {
    if (ch <= cm.max_channels()) channels.push_back(ch);
  }
  const std::vector<int> threads =
      extended ? std::vector<int>(k_grid_threads.begin(), k_grid_threads.end()) : std::vector<int>{0};
  const std::vector<std::int64_t> chunks =
      extended ? std::vector<std::int64_t>(k_grid_chunk_bytes.begin(), k_grid_chunk_bytes.end())
               : std::vector<std::int64_t>{0};
  for (const auto& c : current.result->op_classes) {
    const model::CommGroup shape =
        model::communicator_shape(c.key.group, ctx.strategy, cm.cluster().gpus_per_node);
    const bool p2p = is_p2p(c.key.collective);
    CdUnit unit;
    unit.key = c.key;
    unit.group = c.key.group;
    unit.name = simulator::op_class_name(c.key);
    unit.channels = channels;
    unit.threads = threads;
    unit.chunks = chunks;
    if (p2p && !extended) {
      if (std::any_of(units.begin(), units.end(),
                      [&](const CdUnit& u) { return u.communicator && u.group == c.key.group; })) {
        continue;
      }
      unit.communicator = true;
      unit.name = fmt::format("communicator {}", model::to_string(c.key.group));
      unit.groups.emplace_back(model::Algo::p2p, model::Proto::simple);
    } else {
      for (model::Algo a :
           {model::Algo::tree, model::Algo::ring, model::Algo::collnet_direct, model::Algo::collnet_chain,
            model::Algo::nvls, model::Algo::nvls_tree, model::Algo::pat, model::Algo::p2p}) {
        for (model::Proto p : model::k_all_protos) {
          if (cm.nccl_allows(c.key.collective, a, p, shape).ok()) unit.groups.emplace_back(a, p);
        }
      }
    }
    if (unit.groups.empty()) continue;
    const model::CollConfig def = cm.nccl_default(c.key.collective, static_cast<double>(c.key.bytes), shape);
    unit.start[0] = static_cast<int>(nearest_index(channels, def.channels));
    unit.start[1] = extended ? 2 : 0;  // 512 threads, NCCL's default
    unit.start[2] = extended ? 4 : 0;  // 2 MiB, the default Simple chunk
    unit.point = unit.start;
    units.push_back(std::move(unit));
  }
  const long cap = 20000;  // iterations of online tuning; far above what the grid needs
  while (std::any_of(units.begin(), units.end(), [](const CdUnit& u) { return !u.done; }) &&
         evaluator.count() < cap) {
    Choice trial_choice = choice;
    for (auto& u : units) {
      const std::array<int, 3> p = u.next();
      u.apply_to(trial_choice, p);
    }
    if (std::all_of(units.begin(), units.end(), [](const CdUnit& u) { return u.done; })) break;
    LAGOM_TRY(const Evaluation e, evaluator.evaluate(trial_choice));
    for (auto& u : units) {
      if (u.done) continue;
      const double us = u.communicator ? e.group_p2p_us(u.group) : e.class_us(u.key);
      Trial t = trial_of(u.name, "", e);
      const model::CollConfig c = u.config_at(u.have_point ? u.candidate : u.point);
      t.option =
          u.communicator
              ? fmt::format("ctas {}", c.channels)
              : fmt::format("{}/{} ch {}{}", model::to_string(c.algo), model::to_string(c.proto), c.channels,
                            extended ? fmt::format(" thr {} chunk {}", c.threads, format_bytes(c.chunk_bytes))
                                     : std::string());
      t.class_comm_us = us;
      u.report(us);
      t.note = "autoccl: communication time of the class";
      out.trials.push_back(std::move(t));
    }
  }
  for (const auto& u : units) {
    if (u.communicator) {
      choice.ctas[u.group] = u.best_ctas;
    } else {
      choice.classes[u.key] = u.best_config;
    }
  }
  return {};
}

// ---------------------------------------------------------------------------------------------------
// Lagom: priority-based.

struct Move {
  const Decision* decision = nullptr;
  const Option* option = nullptr;
  Evaluation evaluation;
  int tier = 0;
  double key = 0;
};

// Options of an op-class decision whose price is not dominated by another option's (latency, bandwidth
// time, compute slowdown, communication slowdown): every one of those can only lengthen the simulated
// iteration, so a dominated option cannot beat the option dominating it.
std::vector<const Option*> undominated(const Problem& problem, const Decision& decision, const Choice& choice,
                                       std::vector<Trial>& trials) {
  std::vector<const Option*> out;
  if (decision.kind != DecisionKind::op_class) {
    for (const auto& o : decision.options) out.push_back(&o);
    return out;
  }
  const SpaceContext& ctx = problem.space;
  const model::CommGroup shape =
      model::communicator_shape(decision.key.group, ctx.strategy, ctx.model->cluster().gpus_per_node);
  struct Priced {
    const Option* option;
    std::array<double, 4> v;
  };
  std::vector<Priced> priced;
  priced.reserve(decision.options.size());
  for (const auto& o : decision.options) {
    Choice c = choice;
    apply(decision, o, c);
    const simulator::CommAssignment a = to_assignment(ctx, c);
    int ctas = 0;
    for (const auto& [g, n] : a.comm_ctas) {
      if (g == decision.key.group) ctas = n;
    }
    const model::CollConfig config = effective_config(a, decision.key);
    const simulator::CollectivePrice p =
        problem.costs->collective({decision.key.collective, shape, decision.key.bytes, ctas}, config);
    priced.push_back({&o, {p.latency_us, p.time_us - p.latency_us, p.compute_slowdown, p.comm_slowdown}});
  }
  for (std::size_t i = 0; i < priced.size(); ++i) {
    const Priced* by = nullptr;
    for (std::size_t j = 0; j < priced.size() && by == nullptr; ++j) {
      if (i == j) continue;
      bool all_le = true, any_lt = false;
      for (std::size_t k = 0; k < 4; ++k) {
        all_le = all_le && priced[j].v[k] <= priced[i].v[k];
        any_lt = any_lt || priced[j].v[k] < priced[i].v[k];
      }
      if (all_le && (any_lt || j < i)) by = &priced[j];
    }
    if (by == nullptr) {
      out.push_back(priced[i].option);
    } else if (trials.size() < 100000) {
      trials.push_back(Trial{decision.name, priced[i].option->label, 0, 0, 0, 0,
                             fmt::format("skipped: its price is dominated by {}", by->option->label)});
    }
  }
  return out;
}

Status run_lagom(const Problem& problem, const SearchOptions& options, Evaluator& evaluator, TuneResult& out,
                 Choice& choice) {
  const SpaceContext& ctx = problem.space;
  LAGOM_TRY(Evaluation current, settle(evaluator, problem, choice));
  // 1. Structural knobs first: they decide which op classes exist.
  for (const Decision& d : out.structural) {
    const int held = current_option(d, choice);
    Choice best_choice = choice;
    Evaluation best = current;
    for (std::size_t i = 0; i < d.options.size(); ++i) {
      if (static_cast<int>(i) == held) continue;
      Choice c = choice;
      apply(d, d.options[i], c);
      Result<Evaluation> tried = settle(evaluator, problem, c);
      if (!tried.ok()) {
        // An option the simulator cannot run for this strategy (e.g. an overlap method it lacks).
        out.trials.push_back(
            Trial{d.name, d.options[i].label, 0, 0, 0, 0, "not available: " + tried.error().message});
        continue;
      }
      const Evaluation e = std::move(tried).value();
      const bool better = e.iteration_us < best.iteration_us * (1 - k_improvement);
      out.trials.push_back(trial_of(d.name, d.options[i].label, e, better ? "best so far" : "not better"));
      if (better) {
        best = e;
        best_choice = c;
      }
    }
    out.trials.push_back(trial_of(
        d.name, d.options[static_cast<std::size_t>(std::max(0, current_option(d, best_choice)))].label, best,
        "chosen: the fastest simulated iteration"));
    choice = best_choice;
    current = best;
  }
  // 2. Rounds over the per-process, per-communicator and per-op-class decisions.
  const std::vector<Decision> decisions = comm_decisions(ctx, current.result->op_classes);
  const double budget = 3.0 * (options_sum(decisions) + options_sum(out.structural));
  for (int round = 1; round <= 8; ++round) {
    const double round_start = current.iteration_us;
    // Measure every single-decision move from the current choice.
    std::vector<Move> moves;
    for (const Decision& d : decisions) {
      const int held = current_option(d, choice);
      Move best_move;
      for (const Option* o : undominated(problem, d, choice, out.trials)) {
        if (o == (held >= 0 ? &d.options[static_cast<std::size_t>(held)] : nullptr)) continue;
        if (static_cast<double>(evaluator.count()) >= budget) break;
        Choice c = choice;
        apply(d, *o, c);
        LAGOM_TRY(Evaluation e, evaluator.evaluate(c));
        const double saved_x = current.comm_us - e.comm_us;
        const double added_y = e.compute_us - current.compute_us;
        std::string h = saved_x > 0 ? fmt::format("H = ΔY/Δx = {:.4g}", added_y / saved_x)
                                    : fmt::format("Δx = {:+.1f} us, ΔY = {:+.1f} us", -saved_x, added_y);
        out.trials.push_back(trial_of(d.name, o->label, e, fmt::format("round {}: {}", round, h)));
        if (e.iteration_us < current.iteration_us * (1 - k_improvement) &&
            (best_move.option == nullptr || e.iteration_us < best_move.evaluation.iteration_us)) {
          best_move.decision = &d;
          best_move.option = o;
          best_move.evaluation = e;
          if (added_y <= 0 && saved_x >= 0) {
            best_move.tier = 0;  // saves communication and computation
            best_move.key = e.iteration_us - current.iteration_us;
          } else if (saved_x > 0) {
            best_move.tier = 1;  // H = ΔY/Δx: computation added per unit of communication saved
            best_move.key = added_y / saved_x;
          } else {
            best_move.tier = 2;  // gives up communication time to save computation
            best_move.key = -saved_x / -added_y;
          }
        }
      }
      if (best_move.option != nullptr) moves.push_back(std::move(best_move));
    }
    std::stable_sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
      return a.tier != b.tier ? a.tier < b.tier : a.key < b.key;
    });
    // Apply in priority order, re-evaluating each; keep a move only when the iteration gets faster.
    for (const Move& m : moves) {
      if (static_cast<double>(evaluator.count()) >= budget) break;
      Choice c = choice;
      apply(*m.decision, *m.option, c);
      LAGOM_TRY(Evaluation e, evaluator.evaluate(c));
      const bool kept = e.iteration_us < current.iteration_us * (1 - k_improvement);
      out.trials.push_back(
          trial_of(m.decision->name, m.option->label, e,
                   fmt::format("round {}: applied in priority order (tier {}, key {:.4g}): {}", round, m.tier,
                               m.key, kept ? "kept" : "reverted, no longer faster")));
      if (kept) {
        choice = std::move(c);
        current = e;
      }
    }
    const double gain = (round_start - current.iteration_us) / round_start;
    if (gain < options.threshold || static_cast<double>(evaluator.count()) >= budget) break;
  }
  return {};
}

}  // namespace

std::string_view to_string(SearchKind kind) {
  switch (kind) {
    case SearchKind::default_:
      return "default";
    case SearchKind::exhaustive:
      return "exhaustive";
    case SearchKind::autoccl:
      return "autoccl";
    case SearchKind::lagom:
      return "lagom";
  }
  return "?";
}

std::optional<SearchKind> parse_search(std::string_view name) {
  for (SearchKind k :
       {SearchKind::default_, SearchKind::exhaustive, SearchKind::autoccl, SearchKind::lagom}) {
    if (to_string(k) == name) return k;
  }
  return std::nullopt;
}

Result<TuneResult> run_search(SearchKind kind, const Problem& problem, const SearchOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  TuneResult out;
  out.search = kind;
  out.runtime = problem.space.runtime;
  out.comm_knobs_searched = comm_knobs_searchable(problem.space);
  Evaluator evaluator(problem, options);
  const Choice start = default_choice(problem.space);
  LAGOM_TRY(const Evaluation baseline, evaluator.evaluate(start));
  out.baseline_iteration_us = baseline.iteration_us;
  out.structural = structural_decisions(problem.space);
  Choice choice = start;

  switch (kind) {
    case SearchKind::default_: {
      // Structural knobs are never searched here; the files hold NCCL's own choice explicitly.
      out.structural.clear();
      LAGOM_TRY(Evaluation e, settle(evaluator, problem, choice));
      (void)e;
      break;
    }
    case SearchKind::autoccl: {
      out.structural.clear();  // AutoCCL tunes communication only
      if (out.comm_knobs_searched) {
        LAGOM_TRY_STATUS(run_autoccl(problem, evaluator, out, choice));
      }
      break;
    }
    case SearchKind::lagom: {
      LAGOM_TRY_STATUS(run_lagom(problem, options, evaluator, out, choice));
      break;
    }
    case SearchKind::exhaustive: {
      // Count first: every structural combination with the op classes it creates.
      std::vector<std::pair<Choice, std::vector<Decision>>> spaces;
      double total = 0;
      Choice structural_base = start;
      LAGOM_TRY_STATUS(for_each_combination(out.structural, structural_base, [&](const Choice& s) -> Status {
        Choice c = s;
        Result<Evaluation> tried = settle(evaluator, problem, c);
        if (!tried.ok()) {
          out.notes.push_back("structural combination skipped: " + tried.error().message);
          return {};
        }
        const Evaluation e = std::move(tried).value();
        std::vector<Decision> d = comm_decisions(problem.space, e.result->op_classes);
        total += options_product(d);
        spaces.emplace_back(std::move(c), std::move(d));
        return {};
      }));
      if (total > k_exhaustive_limit) {
        return make_error(
            ErrorCode::invalid_input,
            fmt::format("search exhaustive: the cross product needs {:.3g} evaluations, above the "
                        "limit of {:.0f}; use --search lagom, or pin knobs on the command line",
                        total, k_exhaustive_limit));
      }
      Evaluation best = baseline;
      Choice best_choice = start;
      LAGOM_TRY(Evaluation settled_start, settle(evaluator, problem, best_choice));
      best = settled_start;
      for (const auto& [base, decisions] : spaces) {
        LAGOM_TRY_STATUS(for_each_combination(decisions, base, [&](const Choice& c) -> Status {
          LAGOM_TRY(Evaluation e, evaluator.evaluate(c));
          if (e.iteration_us < best.iteration_us * (1 - k_improvement)) {
            best = e;
            best_choice = c;
          }
          return {};
        }));
      }
      choice = best_choice;
      break;
    }
  }

  LAGOM_TRY(Evaluation final_eval, evaluator.evaluate(choice));
  if (unify_tuner_lines(problem, final_eval, choice, out.notes)) {
    LAGOM_TRY(final_eval, evaluator.evaluate(choice));
  }
  out.choice = choice;
  out.assignment = to_assignment(problem.space, choice);
  out.result = *final_eval.result;
  out.predicted_iteration_us = final_eval.iteration_us;
  out.decisions = comm_decisions(problem.space, final_eval.result->op_classes);
  out.grid_options = options_sum(out.decisions) + options_sum(structural_decisions(problem.space));
  out.oracle_evaluations =
      options_product(out.decisions) * options_product(structural_decisions(problem.space));
  out.evaluations = evaluator.count();
  out.search_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace lagom::search
