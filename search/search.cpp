#include "search/search.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <variant>

#include <fmt/format.h>

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

// Whether `a` is an improvement on `b` (by more than k_improvement).
bool faster(const Evaluation& a, const Evaluation& b) {
  return a.iteration_us < b.iteration_us * (1 - k_improvement);
}

// `choice` with `option` applied.
Choice with(Choice choice, const Option& option) {
  apply(option.setting, choice);
  return choice;
}

// What tells two assignments apart: every field, in order (the evaluator's cache key).
std::string assignment_key(const simulator::CommAssignment& a) {
  std::string key;
  for (const auto& [op, c] : a.per_class) {
    key +=
        fmt::format("{}/{}/{}:{}/{}/{}/{}/{}/{};", static_cast<int>(op.collective),
                    static_cast<int>(op.group), op.bytes, static_cast<int>(c.algo), static_cast<int>(c.proto),
                    c.channels, c.threads, c.chunk_bytes, static_cast<int>(c.cta_policy));
  }
  for (const auto& [group, ctas] : a.comm_ctas) key += fmt::format("{}={};", static_cast<int>(group), ctas);
  key += a.tp_overlap ? model::to_string(*a.tp_overlap) : std::string("-");
  key += a.bucket_mb ? fmt::format("|{}", *a.bucket_mb) : std::string("|-");
  key += fmt::format("|{}|{}", a.fsdp_prefetch, static_cast<int>(a.priority));
  return key;
}

// Simulates choices, counting every simulation; an assignment seen before comes from the cache.
class Evaluator {
 public:
  Evaluator(const Problem& problem, const SearchOptions& options) : m_problem(problem), m_options(options) {}

  Result<Evaluation> evaluate(const Choice& choice) {
    const simulator::CommAssignment assignment = to_assignment(m_problem.space, choice);
    std::string key = assignment_key(assignment);
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

  // Completes `choice` for the op classes its structure issues (complete_choice: one evaluation to
  // discover them, one more when the completed choice differs) and evaluates it.
  Result<Evaluation> settle(Choice& choice) {
    LAGOM_TRY(Evaluation e, evaluate(choice));
    Choice completed = complete_choice(m_problem.space, e.result->op_classes, choice);
    if (completed == choice) return e;
    choice = std::move(completed);
    return evaluate(choice);
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
    for (std::size_t i = 0; i < decisions.size(); ++i) apply(decisions[i].options[index[i]].setting, choice);
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
// AutoCCL: coordinate descent inside each (algorithm, protocol) block of a decision's grid, per op class
// (or p2p communicator), all of them in lockstep.

// A grid axis value of an op-class or communicator option: channels (CTAs), threads, chunk bytes.
double axis_value(const Setting& setting, std::size_t axis) {
  if (const auto* s = std::get_if<OpClassSetting>(&setting)) {
    const std::array<double, 3> values{static_cast<double>(s->config.channels),
                                       static_cast<double>(s->config.threads),
                                       static_cast<double>(s->config.chunk_bytes)};
    return values[axis];
  }
  if (const auto* s = std::get_if<CommunicatorSetting>(&setting)) return axis == 0 ? s->ctas : 0;
  return 0;
}

// Where each block's descent starts: on every axis the value nearest to NCCL's default (its channels for
// the class; NCCL_NTHREADS 512 and the Simple chunk NCCL_BUFFSIZE / 2 = 2 MiB where those are per call).
std::array<int, 3> start_point(const Decision& d, const model::CollConfig& nccl_default) {
  const std::array<double, 3> target{static_cast<double>(nccl_default.channels),
                                     static_cast<double>(model::k_nccl_default_threads),
                                     static_cast<double>(model::default_chunk_bytes(model::Proto::simple))};
  std::array<int, 3> start{0, 0, 0};
  for (std::size_t axis = 0; axis < 3; ++axis) {
    auto distance = [&](std::size_t i) {
      std::array<std::size_t, 3> point{0, 0, 0};
      point[axis] = i;
      return std::abs(axis_value(d.options[d.grid.index(0, point)].setting, axis) - target[axis]);
    };
    std::size_t best = 0;
    for (std::size_t i = 0; i < d.grid.axes[axis]; ++i) {
      if (distance(i) < distance(best)) best = i;
    }
    start[axis] = static_cast<int>(best);
  }
  return start;
}

// AutoCCL's objective for a decision: the communication time of the calls it sets (one call of an op
// class; all alltoall/sendrecv calls of a communicator).
double own_comm_us(const Evaluation& e, const Decision& d) {
  const Setting& s = d.options.front().setting;
  if (const auto* op = std::get_if<OpClassSetting>(&s)) return e.class_us(op->key);
  if (const auto* comm = std::get_if<CommunicatorSetting>(&s)) return e.group_p2p_us(comm->group);
  return 0;
}

// One decision's descent: inside each block in turn, from `start`, each step moves one grid index along
// one axis in either direction, and only a strict improvement moves the point; the best point over all
// blocks wins.
class Descent {
 public:
  Descent(const Decision& decision, std::array<int, 3> start)
      : m_decision(&decision), m_start(start), m_point(start), m_best(&at(start)) {}

  [[nodiscard]] const Decision& decision() const { return *m_decision; }
  [[nodiscard]] bool done() const { return m_done; }
  [[nodiscard]] const Option& best() const { return *m_best; }
  // The option next() returned last.
  [[nodiscard]] const Option& trying() const { return *m_trying; }

  // The option to simulate in this iteration (the best so far once done).
  const Option& next() {
    const std::array<int, 3> point = step();
    m_trying = m_done ? m_best : &at(point);
    return *m_trying;
  }

  void report(double us) {
    if (m_done) return;
    if (!m_have_point) {
      m_have_point = true;
      m_point_us = us;
    } else {
      if (us < m_point_us * (1 - k_improvement)) {
        m_point = m_candidate;
        m_point_us = us;
        m_improved = true;
      }
      ++m_move;
    }
    if (m_point_us < m_best_us) {
      m_best_us = m_point_us;
      m_best = &at(m_point);
    }
  }

 private:
  [[nodiscard]] const Option& at(const std::array<int, 3>& p) const {
    const std::array<std::size_t, 3> point{static_cast<std::size_t>(p[0]), static_cast<std::size_t>(p[1]),
                                           static_cast<std::size_t>(p[2])};
    return m_decision->options[m_decision->grid.index(m_block, point)];
  }
  [[nodiscard]] bool on_grid(const std::array<int, 3>& p, std::size_t axis) const {
    return p[axis] >= 0 && static_cast<std::size_t>(p[axis]) < m_decision->grid.axes[axis];
  }

  // The point to measure: the block's start, then its neighbours one move at a time; the next block when
  // no neighbour improved. Sets m_done past the last block.
  std::array<int, 3> step() {
    while (!m_done) {
      if (!m_have_point) return m_point;
      for (; m_move < 6; ++m_move) {
        const auto axis = static_cast<std::size_t>(m_move / 2);
        std::array<int, 3> c = m_point;
        c[axis] += m_move % 2 == 0 ? -1 : 1;
        if (on_grid(c, axis)) {
          m_candidate = c;
          return m_candidate;
        }
      }
      if (m_improved) {
        m_move = 0;
        m_improved = false;
        continue;
      }
      if (++m_block >= m_decision->grid.blocks) {
        m_done = true;
        break;
      }
      m_point = m_start;
      m_have_point = false;
      m_move = 0;
    }
    return m_point;
  }

  const Decision* m_decision;
  std::array<int, 3> m_start;
  std::size_t m_block = 0;
  std::array<int, 3> m_point, m_candidate{0, 0, 0};
  bool m_have_point = false, m_improved = false, m_done = false;
  int m_move = 0;
  double m_point_us = k_inf;
  double m_best_us = k_inf;
  const Option* m_best;  // the block-0 start until a point is measured
  const Option* m_trying = nullptr;
};

// One descent per decision that sets an op class's channels, in the order of the classes. The settled
// `choice` holds NCCL's default for every class (complete_choice), where the descents start.
std::vector<Descent> descents(const std::vector<Decision>& decisions, const std::vector<OpClass>& classes,
                              const Choice& choice) {
  std::vector<Descent> out;
  for (const auto& c : classes) {
    const Decision* d = channels_decision(decisions, c.key);
    if (d == nullptr ||
        std::any_of(out.begin(), out.end(), [&](const Descent& u) { return &u.decision() == d; })) {
      continue;
    }
    const auto nccl = choice.classes.find(c.key);
    assert(nccl != choice.classes.end());
    out.emplace_back(*d, start_point(*d, nccl->second));
  }
  return out;
}

bool all_done(const std::vector<Descent>& units) {
  return std::all_of(units.begin(), units.end(), [](const Descent& u) { return u.done(); });
}

Status run_autoccl(const Problem& problem, Evaluator& evaluator, TuneResult& out, Choice& choice) {
  LAGOM_TRY(const Evaluation current, evaluator.settle(choice));
  const std::vector<Decision> decisions = comm_decisions(problem.space, current.result->op_classes);
  std::vector<Descent> units = descents(decisions, current.result->op_classes, choice);
  const long cap = 20000;  // iterations of online tuning; far above what the grid needs
  while (!all_done(units) && evaluator.count() < cap) {
    Choice trial_choice = choice;
    for (auto& u : units) apply(u.next().setting, trial_choice);
    if (all_done(units)) break;
    LAGOM_TRY(const Evaluation e, evaluator.evaluate(trial_choice));
    for (auto& u : units) {
      if (u.done()) continue;
      const double us = own_comm_us(e, u.decision());
      Trial t = trial_of(u.decision().name, u.trying().label, e, "autoccl: communication time of the class");
      t.class_comm_us = us;
      u.report(us);
      out.trials.push_back(std::move(t));
    }
  }
  for (const auto& u : units) apply(u.best().setting, choice);
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

// The move to `option` from `current`, ranked: tier 0 saves both communication x and computation Y (by the
// iteration time gained); tier 1 by H = ΔY/Δx, the computation added per unit of communication saved;
// tier 2 gives up communication to save computation.
Move ranked(const Decision& decision, const Option& option, const Evaluation& e, const Evaluation& current) {
  const double saved_x = current.comm_us - e.comm_us;
  const double added_y = e.compute_us - current.compute_us;
  Move m{&decision, &option, e, 0, 0};
  if (added_y <= 0 && saved_x >= 0) {
    m.key = e.iteration_us - current.iteration_us;
  } else if (saved_x > 0) {
    m.tier = 1;
    m.key = added_y / saved_x;
  } else {
    m.tier = 2;
    m.key = -saved_x / -added_y;
  }
  return m;
}

// --explain's note on a measured move: its H, or its Δx and ΔY when it saves no communication.
std::string delta_note(const Evaluation& e, const Evaluation& current) {
  const double saved_x = current.comm_us - e.comm_us;
  const double added_y = e.compute_us - current.compute_us;
  return saved_x > 0 ? fmt::format("H = ΔY/Δx = {:.4g}", added_y / saved_x)
                     : fmt::format("Δx = {:+.1f} us, ΔY = {:+.1f} us", -saved_x, added_y);
}

// What an op-class option costs, on the four counts that can only lengthen the simulated iteration:
// latency, bandwidth time, compute slowdown, communication slowdown.
using Price = std::array<double, 4>;

Price price_of(const Problem& problem, const Choice& choice, const OpClassSetting& setting) {
  Choice c = choice;
  apply(setting, c);
  const simulator::CommAssignment a = to_assignment(problem.space, c);
  int ctas = 0;
  for (const auto& [g, n] : a.comm_ctas) {
    if (g == setting.key.group) ctas = n;
  }
  const SpaceContext& ctx = problem.space;
  const model::CommGroup shape =
      model::communicator_shape(setting.key.group, ctx.strategy, ctx.model->cluster().gpus_per_node);
  const simulator::CollectivePrice p = problem.costs->collective(
      {setting.key.collective, shape, setting.key.bytes, ctas}, effective_config(a, setting.key));
  return {p.latency_us, p.time_us - p.latency_us, p.compute_slowdown, p.comm_slowdown};
}

// The first price that is no worse than prices[i] on every count and better on one (or equal and earlier),
// or nullptr.
const Price* dominator(const std::vector<Price>& prices, std::size_t i) {
  for (std::size_t j = 0; j < prices.size(); ++j) {
    if (i == j) continue;
    bool all_le = true, any_lt = false;
    for (std::size_t k = 0; k < 4; ++k) {
      all_le = all_le && prices[j][k] <= prices[i][k];
      any_lt = any_lt || prices[j][k] < prices[i][k];
    }
    if (all_le && (any_lt || j < i)) return &prices[j];
  }
  return nullptr;
}

// Options of an op-class decision whose price is not dominated by another option's: every count can only
// lengthen the simulated iteration, so a dominated option cannot beat the option dominating it. The
// skipped ones are recorded in `trials`.
std::vector<const Option*> undominated(const Problem& problem, const Decision& decision, const Choice& choice,
                                       std::vector<Trial>& trials) {
  std::vector<const Option*> out;
  if (decision.kind() != DecisionKind::op_class) {
    for (const auto& o : decision.options) out.push_back(&o);
    return out;
  }
  std::vector<Price> prices;
  prices.reserve(decision.options.size());
  for (const auto& o : decision.options)
    prices.push_back(price_of(problem, choice, std::get<OpClassSetting>(o.setting)));
  for (std::size_t i = 0; i < prices.size(); ++i) {
    const Price* by = dominator(prices, i);
    if (by == nullptr) {
      out.push_back(&decision.options[i]);
    } else if (trials.size() < 100000) {
      const Option& winner = decision.options[static_cast<std::size_t>(by - prices.data())];
      trials.push_back(Trial{decision.name, decision.options[i].label, 0, 0, 0, 0,
                             fmt::format("skipped: its price is dominated by {}", winner.label)});
    }
  }
  return out;
}

// The lagom search over one problem: the structural decisions one at a time, then rounds of measure,
// prioritise and apply over the communication decisions.
class LagomSearch {
 public:
  LagomSearch(const Problem& problem, const SearchOptions& options, Evaluator& evaluator,
              std::vector<Trial>& trials)
      : m_problem(problem), m_options(options), m_evaluator(evaluator), m_trials(trials) {}

  Status run(const std::vector<Decision>& structural, Choice& choice) {
    LAGOM_TRY(Evaluation current, m_evaluator.settle(choice));
    // 1. Structural knobs first: they decide which op classes exist.
    for (const Decision& d : structural) LAGOM_TRY_STATUS(choose(d, choice, current));
    // 2. Rounds over the per-process, per-communicator and per-op-class decisions.
    const std::vector<Decision> decisions = comm_decisions(m_problem.space, current.result->op_classes);
    m_budget = 3.0 * (options_sum(decisions) + options_sum(structural));
    for (int round = 1; round <= 8; ++round) {
      const double round_start = current.iteration_us;
      LAGOM_TRY(std::vector<Move> moves, measure(decisions, choice, current, round));
      std::stable_sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
        return a.tier != b.tier ? a.tier < b.tier : a.key < b.key;
      });
      LAGOM_TRY_STATUS(apply_in_order(moves, choice, current, round));
      const double gain = (round_start - current.iteration_us) / round_start;
      if (gain < m_options.threshold || spent()) break;
    }
    return {};
  }

 private:
  [[nodiscard]] bool spent() const { return static_cast<double>(m_evaluator.count()) >= m_budget; }

  // Every option of a structural decision is simulated (with the op classes it creates); the fastest
  // iteration wins.
  Status choose(const Decision& d, Choice& choice, Evaluation& current) {
    const Option* held = d.held(choice);
    Choice best_choice = choice;
    Evaluation best = current;
    // The option held already is the one to beat: listed with its own iteration, so --explain shows every
    // option of the decision, not only those tried against it.
    if (held != nullptr)
      m_trials.push_back(trial_of(d.name, held->label, current, "held: the starting point"));
    for (const Option& o : d.options) {
      if (&o == held) continue;
      Choice c = with(choice, o);
      Result<Evaluation> tried = m_evaluator.settle(c);
      if (!tried.ok()) {
        // An option the simulator cannot run for this strategy (e.g. an overlap method it lacks).
        m_trials.push_back(Trial{d.name, o.label, 0, 0, 0, 0, "not available: " + tried.error().message});
        continue;
      }
      const Evaluation e = std::move(tried).value();
      const bool better = faster(e, best);
      m_trials.push_back(trial_of(d.name, o.label, e, better ? "best so far" : "not better"));
      if (better) {
        best = e;
        best_choice = std::move(c);
      }
    }
    const Option* chosen = d.held(best_choice);
    m_trials.push_back(trial_of(d.name, (chosen != nullptr ? *chosen : d.options.front()).label, best,
                                "chosen: the fastest simulated iteration"));
    choice = std::move(best_choice);
    current = best;
    return {};
  }

  // Simulates every single-decision move from `choice`; keeps each decision's fastest improving move.
  Result<std::vector<Move>> measure(const std::vector<Decision>& decisions, const Choice& choice,
                                    const Evaluation& current, int round) {
    std::vector<Move> moves;
    for (const Decision& d : decisions) {
      const Option* held = d.held(choice);
      Move best;
      for (const Option* o : undominated(m_problem, d, choice, m_trials)) {
        if (o == held) continue;
        if (spent()) break;
        LAGOM_TRY(Evaluation e, m_evaluator.evaluate(with(choice, *o)));
        m_trials.push_back(
            trial_of(d.name, o->label, e, fmt::format("round {}: {}", round, delta_note(e, current))));
        if (faster(e, current) && (best.option == nullptr || e.iteration_us < best.evaluation.iteration_us))
          best = ranked(d, *o, e, current);
      }
      if (best.option != nullptr) moves.push_back(std::move(best));
    }
    return moves;
  }

  // Applies the moves in priority order, re-evaluating each; keeps a move only when the iteration gets
  // faster.
  Status apply_in_order(const std::vector<Move>& moves, Choice& choice, Evaluation& current, int round) {
    for (const Move& m : moves) {
      if (spent()) break;
      Choice c = with(choice, *m.option);
      LAGOM_TRY(Evaluation e, m_evaluator.evaluate(c));
      const bool kept = faster(e, current);
      m_trials.push_back(
          trial_of(m.decision->name, m.option->label, e,
                   fmt::format("round {}: applied in priority order (tier {}, key {:.4g}): {}", round, m.tier,
                               m.key, kept ? "kept" : "reverted, no longer faster")));
      if (kept) {
        choice = std::move(c);
        current = e;
      }
    }
    return {};
  }

  const Problem& m_problem;
  const SearchOptions& m_options;
  Evaluator& m_evaluator;
  std::vector<Trial>& m_trials;
  double m_budget = 0;
};

// ---------------------------------------------------------------------------------------------------
// Exhaustive: every structural combination with the op classes it creates, then the cross product of its
// communication decisions.

struct Structure {
  Choice base;  // settled: NCCL's defaults for the classes it issues
  std::vector<Decision> decisions;
};

Result<Choice> run_exhaustive(const Problem& problem, Evaluator& evaluator,
                              const std::vector<Decision>& structural, const Choice& start,
                              std::vector<std::string>& notes) {
  // Count first.
  std::vector<Structure> structures;
  double total = 0;
  LAGOM_TRY_STATUS(for_each_combination(structural, start, [&](const Choice& s) -> Status {
    Choice c = s;
    Result<Evaluation> tried = evaluator.settle(c);
    if (!tried.ok()) {
      notes.push_back("structural combination skipped: " + tried.error().message);
      return {};
    }
    std::vector<Decision> d = comm_decisions(problem.space, tried.value().result->op_classes);
    total += options_product(d);
    structures.push_back({std::move(c), std::move(d)});
    return {};
  }));
  if (total > k_exhaustive_limit) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("search exhaustive: the cross product needs {:.3g} evaluations, above the "
                                  "limit of {:.0f}; use --search lagom, or pin knobs on the command line",
                                  total, k_exhaustive_limit));
  }
  Choice best_choice = start;
  LAGOM_TRY(Evaluation best, evaluator.settle(best_choice));
  for (const auto& [base, decisions] : structures) {
    LAGOM_TRY_STATUS(for_each_combination(decisions, base, [&](const Choice& c) -> Status {
      LAGOM_TRY(Evaluation e, evaluator.evaluate(c));
      if (faster(e, best)) {
        best = e;
        best_choice = c;
      }
      return {};
    }));
  }
  return best_choice;
}

// The result of a search that chose `choice`: the final simulation (after unifying tuner-file lines), the
// files' assignment and the space's statistics.
Status finish(const Problem& problem, Evaluator& evaluator, const std::vector<Decision>& structural,
              Choice choice, TuneResult& out) {
  LAGOM_TRY(Evaluation final_eval, evaluator.evaluate(choice));
  if (unify_tuner_lines(problem, final_eval, choice, out.notes)) {
    LAGOM_TRY(final_eval, evaluator.evaluate(choice));
  }
  out.assignment = to_assignment(problem.space, choice);
  out.choice = std::move(choice);
  out.result = *final_eval.result;
  out.predicted_iteration_us = final_eval.iteration_us;
  out.decisions = comm_decisions(problem.space, final_eval.result->op_classes);
  out.grid_options = options_sum(out.decisions) + options_sum(structural);
  out.oracle_evaluations = options_product(out.decisions) * options_product(structural);
  out.evaluations = evaluator.count();
  return {};
}

}  // namespace

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
  out.baseline_op_classes = baseline.result->op_classes;
  const std::vector<Decision> structural = structural_decisions(problem.space);
  Choice choice = start;
  switch (kind) {
    case SearchKind::default_: {
      // Structural knobs are never searched here; the files hold NCCL's own choice explicitly.
      LAGOM_TRY(Evaluation e, evaluator.settle(choice));
      (void)e;
      break;
    }
    case SearchKind::autoccl: {
      // AutoCCL tunes communication only.
      if (out.comm_knobs_searched) LAGOM_TRY_STATUS(run_autoccl(problem, evaluator, out, choice));
      break;
    }
    case SearchKind::lagom: {
      out.structural = structural;
      LAGOM_TRY_STATUS(LagomSearch(problem, options, evaluator, out.trials).run(structural, choice));
      break;
    }
    case SearchKind::exhaustive: {
      out.structural = structural;
      LAGOM_TRY(choice, run_exhaustive(problem, evaluator, structural, start, out.notes));
      break;
    }
  }
  LAGOM_TRY_STATUS(finish(problem, evaluator, structural, std::move(choice), out));
  out.search_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace lagom::search
