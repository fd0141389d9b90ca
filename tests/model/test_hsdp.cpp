// Hybrid sharding (Strategy::dp_shard): its checks in resolve_strategy, where its groups sit, and the memory
// of a shard split over dp_shard ranks instead of dp.
#include <string>

#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/groups.h"
#include "model/presets.h"
#include "model/specs.h"

using namespace lagom::model;

namespace {

std::string resolve_error(const WorkloadSpec& w, const Strategy& s) {
  const auto r = resolve_strategy(s, w, cluster_preset("dgx-h100").value());
  return r.ok() ? std::string("ok") : r.error().message;
}

}  // namespace

TEST_CASE("dp-shard must divide dp, needs ZeRO to shard, and leaves expert weights unmodelled", "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  Strategy s;
  s.gpus = 16;
  s.global_batch = 64;
  s.zero = 3;
  s.dp_shard = 3;
  CHECK(resolve_error(w, s) == "dp-shard=3 does not divide dp=16");
  s.dp_shard = 32;
  CHECK(resolve_error(w, s) == "dp-shard=32 does not divide dp=16");
  s.dp_shard = -1;
  CHECK(resolve_error(w, s) == "dp-shard=-1 must be a positive integer (0: shard over the whole dp group)");
  s.dp_shard = 4;
  s.zero = 0;
  CHECK(resolve_error(w, s) == "dp-shard=4 < dp=16 needs zero 1, 2 or 3 (zero 0 shards nothing)");
  // dp_shard = dp is ZeRO over the whole group (also with zero 0, which then shards nothing), and 1 with
  // zero 0 is plain data parallelism.
  s.dp_shard = 16;
  CHECK(resolve_error(w, s) == "ok");
  s.dp_shard = 1;
  CHECK(resolve_error(w, s) == "ok");
  s.zero = 1;
  s.dp_shard = 4;
  CHECK(resolve_error(w, s) == "ok");
  const WorkloadSpec moe = workload_preset("olmoe-1b-7b").value();
  s.ep = 2;
  CHECK(
      resolve_error(moe, s) ==
      "dp-shard=4 < dp=16 with ep > 1 or expert-tp ≠ tp: hybrid sharding of expert weights is not modelled");
  s.ep = 1;
  CHECK(resolve_error(moe, s) == "ok");
}

TEST_CASE("the shard group packs consecutive DP ranks (with CP) and the replicas stride over shard groups",
          "[model]") {
  // torchtitan's dense mesh (pp, dp_replicate, dp_shard·cp, tp) on nodes of 8 GPUs: tp = 2, cp = 2, dp = 16,
  // dp_shard = 2. The shard group holds dp_shard·cp = 4 ranks at stride tp = 2 (ranks 0, 2, 4, 6: one
  // node); the replicas 16 / 2 = 8 ranks at stride tp·cp·dp_shard = 8 (one per node: 8 nodes).
  Strategy s;
  s.gpus = 64, s.tp = 2, s.cp = 2, s.dp = 16, s.zero = 3, s.dp_shard = 2;
  REQUIRE(s.hybrid_shard());
  CHECK(s.zero_shard_ranks() == 4);
  CHECK(communicator_shape(Group::dp_shard, s, 8) == CommGroup{4, 1});
  CHECK(communicator_shape(Group::dp_replicate, s, 8) == CommGroup{8, 8});
  CHECK(zero_shard_group(s) == Group::dp_shard);
  CHECK(zero_expert_shard_group(s) == Group::dp_shard);
  // A shard group of 8 DP ranks (tp = cp = 1) fills a node; of 16, two nodes.
  Strategy t;
  t.gpus = 64, t.dp = 64, t.zero = 2, t.dp_shard = 8;
  CHECK(communicator_shape(Group::dp_shard, t, 8) == CommGroup{8, 1});
  CHECK(communicator_shape(Group::dp_replicate, t, 8) == CommGroup{8, 8});
  t.dp_shard = 16;
  CHECK(communicator_shape(Group::dp_shard, t, 8) == CommGroup{16, 2});
  CHECK(communicator_shape(Group::dp_replicate, t, 8) == CommGroup{4, 4});
  // Not hybrid (0, dp, or zero 0): the shard group is the dp group's shape, one replica.
  for (const auto& [zero, shard] : {std::pair{3, 0}, std::pair{3, 64}, std::pair{0, 8}}) {
    t.zero = zero;
    t.dp_shard = shard;
    CHECK_FALSE(t.hybrid_shard());
    CHECK(communicator_shape(Group::dp_shard, t, 8) == communicator_shape(Group::dp, t, 8));
    CHECK(communicator_shape(Group::dp_replicate, t, 8) == CommGroup{1, 1});
    CHECK(zero_shard_group(t) == Group::dp);
    CHECK(zero_expert_shard_group(t) == Group::expert_dp);
  }
}

TEST_CASE("memory per GPU under dp_shard = 4 is ZeRO's over dp = 4: the shards divide by dp_shard",
          "[model]") {
  // 16 GPUs, dp = 16, dp_shard = 4 against 4 GPUs, dp = 4: the same micro-batch and layers per GPU, so the
  // weights, gradients, optimizer states and the step's copy (each divided by the 4 ranks of a shard, as
  // ZeRO-1/2/3 shards them) and the activations agree; and they are 4× ZeRO's over dp = 16 for the terms
  // that stage shards.
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec c = cluster_preset("dgx-h100").value();
  const CostModel model(c);
  for (int zero : {1, 2, 3}) {
    INFO("zero " << zero);
    Strategy hybrid;
    hybrid.gpus = 16, hybrid.zero = zero, hybrid.dp_shard = 4, hybrid.global_batch = 64;
    Strategy four = hybrid;
    four.gpus = 4, four.dp_shard = 0, four.global_batch = 16;
    Strategy whole = hybrid;
    whole.dp_shard = 0;
    const MemoryBreakdown h = model.memory_per_gpu(w, resolve_strategy(hybrid, w, c).value());
    const MemoryBreakdown f = model.memory_per_gpu(w, resolve_strategy(four, w, c).value());
    const MemoryBreakdown a = model.memory_per_gpu(w, resolve_strategy(whole, w, c).value());
    CHECK(h.weights_bytes == f.weights_bytes);
    CHECK(h.grads_bytes == f.grads_bytes);
    CHECK(h.optimizer_bytes == f.optimizer_bytes);
    CHECK(h.step_bytes == f.step_bytes);
    CHECK(h.activations_bytes == f.activations_bytes);
    CHECK(h.optimizer_bytes == Approx(4 * a.optimizer_bytes).epsilon(1e-12));
    if (zero >= 2) CHECK(h.grads_bytes == Approx(4 * a.grads_bytes).epsilon(1e-12));
    if (zero == 3) CHECK(h.weights_bytes == Approx(4 * a.weights_bytes).epsilon(1e-12));
  }
}
