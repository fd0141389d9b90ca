#include "model/groups.h"

#include <algorithm>
#include <array>
#include <utility>

namespace lagom::model {

namespace {

constexpr std::array<std::pair<Group, std::string_view>, k_groups> k_names{{{Group::tp, "tp"},
                                                                            {Group::cp, "cp"},
                                                                            {Group::ep, "ep"},
                                                                            {Group::pp, "pp"},
                                                                            {Group::dp, "dp"},
                                                                            {Group::expert_dp, "edp"},
                                                                            {Group::embedding, "emb"},
                                                                            {Group::expert_tp, "etp"},
                                                                            {Group::expert_tp_ep, "etpep"}}};

}  // namespace

std::string_view to_string(Group group) {
  for (const auto& [g, name] : k_names) {
    if (g == group) return name;
  }
  return "?";
}

std::optional<Group> parse_group(std::string_view name) {
  for (const auto& [g, n] : k_names) {
    if (n == name) return g;
  }
  return std::nullopt;
}

CommGroup communicator_shape(Group group, const Strategy& s, int gpn) {
  const int etp = s.expert_tp > 0 ? s.expert_tp : s.tp;  // 0: not resolved yet, = tp
  switch (group) {
    case Group::tp:
      return group_shape(s.tp, 1, gpn);
    case Group::cp:
      return group_shape(s.cp, s.tp, gpn);
    case Group::ep:
      return group_shape(s.ep, etp, gpn);
    case Group::dp:
      return group_shape(s.dp * s.cp, s.tp, gpn);
    case Group::expert_dp:
      return group_shape(s.tp * s.cp * s.dp / (etp * s.ep), etp * s.ep, gpn);
    case Group::expert_tp:
      return group_shape(etp, 1, gpn);
    case Group::expert_tp_ep:
      return group_shape(etp * s.ep, 1, gpn);
    case Group::pp:
      return group_shape(s.pp > 1 ? 2 : 1, s.tp * s.cp * s.dp, gpn);
    case Group::embedding:
      return group_shape(s.pp > 1 ? 2 : 1, s.tp * s.cp * s.dp * (s.pp - 1), gpn);
  }
  return {};
}

CommGroup group_shape(int ranks, int stride, int gpus_per_node) {
  if (ranks <= 1) return CommGroup{1, 1};
  const int per_node = stride >= gpus_per_node ? 1 : std::max(1, std::min(ranks, gpus_per_node / stride));
  return CommGroup{ranks, (ranks + per_node - 1) / per_node};
}

}  // namespace lagom::model
