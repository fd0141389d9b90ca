#include "model/groups.h"

#include <algorithm>

namespace lagom::model {

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
    case Group::dp_shard:
      return group_shape(s.zero_shard_ranks(), s.tp, gpn);
    case Group::dp_replicate:
      return s.hybrid_shard() ? group_shape(s.dp / s.dp_shard, s.tp * s.cp * s.dp_shard, gpn)
                              : CommGroup{1, 1};
    case Group::amax:
      return group_shape(s.tp * s.cp * s.dp, 1, gpn);
  }
  return {};
}

Group zero_shard_group(const Strategy& s) {
  return s.hybrid_shard() ? Group::dp_shard : Group::dp;
}

Group zero_expert_shard_group(const Strategy& s) {
  return s.hybrid_shard() ? Group::dp_shard : Group::expert_dp;
}

CommGroup group_shape(int ranks, int stride, int gpus_per_node) {
  if (ranks <= 1) return CommGroup{1, 1};
  const int per_node = stride >= gpus_per_node ? 1 : std::max(1, std::min(ranks, gpus_per_node / stride));
  return CommGroup{ranks, (ranks + per_node - 1) / per_node};
}

}  // namespace lagom::model
