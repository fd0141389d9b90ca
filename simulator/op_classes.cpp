#include "simulator/op_classes.h"

#include <fmt/format.h>

namespace lagom::simulator {

std::string op_class_name(const OpClassKey& key) {
  return fmt::format("{}.{}.{}", model::to_string(key.group), model::to_string(key.collective), key.bytes);
}

OpClassTable::OpClassTable(const IterationCosts& costs, const model::Strategy& strategy,
                           const model::ClusterSpec& cluster, const CommAssignment& assignment)
    : m_costs(costs), m_assignment(assignment) {
  for (std::size_t g = 0; g < m_shapes.size(); ++g) {
    m_shapes[g] = model::communicator_shape(static_cast<model::Group>(g), strategy, cluster.gpus_per_node);
  }
}

int OpClassTable::find_or_add(model::Collective collective, model::Group group, std::int64_t bytes) {
  const OpClassKey key{collective, group, bytes};
  for (std::size_t i = 0; i < m_classes.size(); ++i) {
    if (m_classes[i].key == key) return static_cast<int>(i);
  }
  const model::CommGroup shape = shape_of(group);
  std::optional<model::CollConfig> knobs;
  for (const auto& [k, config] : m_assignment.per_class) {
    if (k == key) knobs = config;
  }
  int ctas = 0;
  for (const auto& [g, n] : m_assignment.comm_ctas) {
    if (g == group) ctas = n;
  }
  // A communicator's CTA count caps the channels of every call on it (NCCL: channels at or below the
  // communicator's count per call).
  if (knobs && ctas > 0 && (knobs->channels == 0 || knobs->channels > ctas)) knobs->channels = ctas;
  const CollectivePrice price = m_costs.collective({collective, shape, bytes, ctas}, knobs);
  m_classes.push_back(OpClass{key, shape, 0, price.time_us});
  m_prices.push_back(price);
  return static_cast<int>(m_classes.size()) - 1;
}

}  // namespace lagom::simulator
