// The communicators of a parallel strategy (Group) and where their ranks sit (communicator_shape): the one
// place that knows Megatron's rank order. The cost model's layer steps name the group each collective runs
// on; the simulator, the searches and the tuner's outputs price and name them through it.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "model/collectives.h"
#include "model/specs.h"

namespace lagom::model {

// The communicator a collective runs on (Megatron's rank order tp, cp, dp, pp; ep carved from dp·cp;
// expert_dp: the data-parallel group of expert weights, dp·cp/ep ranks; embedding: the first and the last
// pipeline stage's ranks, which sum the tied embedding's gradient when pp > 1). The order is part of
// op classes' order (simulator::OpClassKey) and so of tuner outputs: append, do not reorder.
// expert_tp: the tensor-parallel group of the expert linears (expert-tp ranks, consecutive); expert_tp_ep:
// expert TP × EP (Megatron's expert tensor-and-model-parallel group, the allgather dispatcher's).
// dp_shard, dp_replicate: hybrid sharding (Strategy::hybrid_shard): ZeRO's shard group, dp_shard·cp ranks,
// and the replicas of a shard, dp / dp_shard ranks (torchtitan's "fsdp" and "dp_replicate" mesh dimensions).
// amax: the FP8 amax reduction group, the tp·cp·dp ranks of one pipeline stage (consecutive): Megatron-Core's
// get_amax_reduction_group(with_context_parallel=True) (NVIDIA/Megatron-LM@core_v0.10.0:megatron/core/
// parallel_state.py:1132-1155), the default process group under a PyTorch stack (the same ranks at pp 1).
enum class Group {
  tp,
  cp,
  ep,
  pp,
  dp,
  expert_dp,
  embedding,
  expert_tp,
  expert_tp_ep,
  dp_shard,
  dp_replicate,
  amax
};
inline constexpr std::size_t k_groups = 12;
inline constexpr auto k_group_names = enum_table<Group>({{Group::tp, "tp"},
                                                         {Group::cp, "cp"},
                                                         {Group::ep, "ep"},
                                                         {Group::pp, "pp"},
                                                         {Group::dp, "dp"},
                                                         {Group::expert_dp, "edp"},
                                                         {Group::embedding, "emb"},
                                                         {Group::expert_tp, "etp"},
                                                         {Group::expert_tp_ep, "etpep"},
                                                         {Group::dp_shard, "dp_shard"},
                                                         {Group::dp_replicate, "dp_replicate"},
                                                         {Group::amax, "amax"}});
static_assert(k_group_names.size() == k_groups);
constexpr const auto& enum_names(Group) {
  return k_group_names;
}

// The shape of a communicator for a resolved strategy on nodes of `gpus_per_node` GPUs (Megatron's rank
// order: tp fastest, then cp, dp, pp; expert groups carved from tp·cp·dp as expert-tp (consecutive), ep at
// stride expert-tp, expert-dp at stride expert-tp·ep (NVIDIA/Megatron-LM@core_v0.10.0:megatron/core/
// parallel_state.py:643-661);
// pp neighbours tp·cp·dp apart; the embedding group joins the first and the last stage). Every symmetric
// copy of a group (one per coordinate of the others) has this shape. Hybrid sharding splits the dp·cp
// ranks as torchtitan's device mesh does, replicate outer and shard inner (pytorch/torchtitan@e347b1e5:
// torchtitan/distributed/parallel_dims.py:136-153, dense mesh (pp, dp_replicate, fsdp = dp_shard·cp, tp)):
// the shard group packs dp_shard·cp consecutive dp·cp ranks at stride tp (inside a node when they fit),
// the replicas are dp / dp_shard ranks at stride tp·cp·dp_shard. Without hybrid sharding dp_shard is the
// dp group's shape and dp_replicate one rank.
CommGroup communicator_shape(Group group, const Strategy& strategy, int gpus_per_node);

// The groups ZeRO's sharded collectives run on (reduce-scatters of gradients, all-gathers of parameters):
// dp_shard when the strategy shards hybrid (then the same for expert weights, which resolve_strategy
// allows only when they sit as the dense ones), else dp and expert_dp. The stage plan and its bound read
// these.
Group zero_shard_group(const Strategy& strategy);
Group zero_expert_shard_group(const Strategy& strategy);

// Placement of a group of `ranks` members spaced `stride` apart in global rank order on nodes of
// `gpus_per_node` GPUs ({1, 1} for ranks <= 1).
CommGroup group_shape(int ranks, int stride, int gpus_per_node);

}  // namespace lagom::model
