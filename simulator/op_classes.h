// The op classes of one simulated iteration: every distinct (collective, communicator, bytes) the task
// graph issues, priced once with the knobs the CommAssignment gives it, and the calls counted as tasks are
// emitted. Shared by the pass plans (blocking collectives inside compute), the graph emitter (every
// communication task) and the lower bound (which prices the same calls). Internal to simulator/.
//
// Thread safety: a plain value, one per simulation; the IterationCosts it prices with must be const-safe.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "model/groups.h"
#include "model/specs.h"
#include "simulator/costs.h"
#include "simulator/simulator.h"

namespace lagom::simulator {

class OpClassTable {
 public:
  // `costs` and `assignment` must outlive the table.
  OpClassTable(const IterationCosts& costs, const model::Strategy& strategy,
               const model::ClusterSpec& cluster, const CommAssignment& assignment);

  // The class of these calls, priced on first use (classes keep the order of first use: it is the order
  // of SimulationResult::op_classes).
  int find_or_add(model::Collective collective, model::Group group, std::int64_t bytes);
  [[nodiscard]] const OpClassKey& key(int cls) const { return at(cls).key; }
  [[nodiscard]] const model::CommGroup& shape(int cls) const { return at(cls).shape; }
  [[nodiscard]] const CollectivePrice& price(int cls) const {
    return m_prices[static_cast<std::size_t>(cls)];
  }
  // The work alone of one task of `count` calls of the class (what the engine's task holds).
  [[nodiscard]] double work_us(int cls, double count) const { return price(cls).time_us * count; }
  // Adds `calls` to the class's calls per iteration.
  void count(int cls, double calls) { m_classes[static_cast<std::size_t>(cls)].count += calls; }
  [[nodiscard]] const std::vector<OpClass>& classes() const { return m_classes; }

  // Where the strategy's `group` sits (model::communicator_shape on this cluster) and its size.
  [[nodiscard]] const model::CommGroup& shape_of(model::Group group) const {
    return m_shapes[static_cast<std::size_t>(group)];
  }
  [[nodiscard]] int ranks(model::Group group) const { return shape_of(group).ranks; }

 private:
  [[nodiscard]] const OpClass& at(int cls) const { return m_classes[static_cast<std::size_t>(cls)]; }

  const IterationCosts& m_costs;
  const CommAssignment& m_assignment;
  std::array<model::CommGroup, model::k_groups> m_shapes;  // per group
  std::vector<OpClass> m_classes;                          // key, shape, calls, time alone
  std::vector<CollectivePrice> m_prices;                   // per class, with its interference factors
};

}  // namespace lagom::simulator
