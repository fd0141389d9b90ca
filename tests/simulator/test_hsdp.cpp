// Hybrid sharding (Strategy::dp_shard) in the stage plan: ZeRO's collectives on the shard group, the
// replicas' all-reduce of the reduce-scattered shard, and exactly the plan of before when the shard group is
// the whole dp group.
#include <catch2/catch.hpp>

#include "fake_costs.h"
#include "simulator/lower_bound.h"
#include "simulator/op_classes.h"
#include "simulator/simulator.h"
#include "simulator/stage_plan.h"

using namespace lagom;
using lagom::test::fake_cluster;
using lagom::test::fake_strategy;
using lagom::test::fake_workload;
using lagom::test::FakeCosts;
using model::Collective;
using model::Group;

namespace {

simulator::IterationPlan plan_of(const model::WorkloadSpec& w, const model::Strategy& s,
                                 const FakeCosts& costs, simulator::OpClassTable& classes) {
  static const simulator::CommAssignment assignment;
  auto plan = simulator::plan_iteration(w, s, costs, assignment, classes, false);
  if (!plan.ok()) FAIL(plan.error().message);
  return std::move(plan).value();
}

void check_task(const simulator::CommTask& t, Collective collective, Group group, std::int64_t bytes,
                double count) {
  CHECK(t.collective == collective);
  CHECK(t.group == group);
  CHECK(t.bytes == bytes);
  CHECK(t.count == count);
}

// Every task of both plans, field by field (the plans as the emitter and the bound read them).
void check_same_plan(const simulator::IterationPlan& a, const simulator::IterationPlan& b) {
  REQUIRE(a.stages.size() == b.stages.size());
  for (std::size_t s = 0; s < a.stages.size(); ++s) {
    const auto& x = a.stages[s];
    const auto& y = b.stages[s];
    REQUIRE(x.comm_tasks.size() == y.comm_tasks.size());
    for (std::size_t i = 0; i < x.comm_tasks.size(); ++i) {
      const auto& t = y.comm_tasks[i];
      check_task(x.comm_tasks[i], t.collective, t.group, t.bytes, t.count);
    }
    REQUIRE(x.pieces.size() == y.pieces.size());
    for (std::size_t j = 0; j < x.pieces.size(); ++j) {
      CHECK(x.pieces[j].gather.has_value() == y.pieces[j].gather.has_value());
      if (x.pieces[j].gather && y.pieces[j].gather) {
        const auto& t = *y.pieces[j].gather;
        check_task(*x.pieces[j].gather, t.collective, t.group, t.bytes, t.count);
      }
      CHECK(x.pieces[j].grads.begin == y.pieces[j].grads.begin);
      CHECK(x.pieces[j].grads.end == y.pieces[j].grads.end);
    }
    CHECK(x.optimizer_params == y.optimizer_params);
    CHECK(x.param_gathers.begin == y.param_gathers.begin);
    CHECK(x.param_gathers.end == y.param_gathers.end);
  }
}

}  // namespace

TEST_CASE(
    "HSDP ZeRO-3 gathers and reduce-scatters over the shard group and all-reduces the shard across "
    "replicas",
    "[simulator]") {
  // 16 GPUs on nodes of 8, dp = 16, dp_shard = 4, ZeRO-3; two layers of 1e6 parameters, bf16, no embedding
  // or output layer. By hand:
  //  - shard group: 4 consecutive DP ranks (tp = cp = 1: stride 1), inside one node: {4 ranks, 1 node};
  //  - replicas: 16 / 4 = 4 ranks at stride 4: 2 per node of 8, {4 ranks, 2 nodes};
  //  - each layer: all-gather of its 1e6 × 2 B = 2e6 parameter bytes over the 4 shard ranks (before its
  //    forward and its backward); after its backward the reduce-scatter of its 2e6 gradient bytes over the
  //    4 shard ranks, then the all-reduce of the 2e6 / 4 = 5e5 bytes each rank holds across the 4 replicas;
  //  - the optimizer steps a 1/4 shard: 2e6 parameters / 4 = 5e5.
  FakeCosts costs;
  const auto w = fake_workload(2);
  auto s = fake_strategy(1, 1, 16, 2);
  s.zero = 3;
  s.dp_shard = 4;
  REQUIRE(s.hybrid_shard());
  const model::ClusterSpec cluster = fake_cluster();
  const simulator::CommAssignment assignment;
  simulator::OpClassTable classes(costs, s, cluster, assignment);
  CHECK(classes.shape_of(Group::dp_shard) == model::CommGroup{4, 1});
  CHECK(classes.shape_of(Group::dp_replicate) == model::CommGroup{4, 2});
  CHECK(classes.shape_of(Group::dp) == model::CommGroup{16, 2});
  const auto plan = plan_of(w, s, costs, classes);
  REQUIRE(plan.stages.size() == 1);
  const auto& stage = plan.stages[0];
  CHECK(stage.sync == simulator::GradientSync::every_backward);
  REQUIRE(stage.pieces.size() == 2);
  for (const auto& piece : stage.pieces) {
    REQUIRE(piece.gather);
    check_task(*piece.gather, Collective::allgather, Group::dp_shard, 2000000, 1);
    const auto grads = stage.tasks(piece.grads);
    REQUIRE(grads.size() == 2);
    check_task(grads[0], Collective::reducescatter, Group::dp_shard, 2000000, 1);
    check_task(grads[1], Collective::allreduce, Group::dp_replicate, 500000, 1);
  }
  CHECK(stage.optimizer_params == 5e5);
  CHECK(stage.param_gathers.empty());
}

TEST_CASE("HSDP ZeRO-1 buckets: each reduce-scatter bucket is followed by its shard's all-reduce",
          "[simulator]") {
  // dp = 16, dp_shard = 8, ZeRO-1, dp-overlap off, 1.5 MB buckets: the stage's 2 × 2e6 = 4e6 gradient bytes
  // after the backward make two full buckets (count 2) and a rest of 1e6; each reduce-scatter over the 8
  // shard ranks (one node) is followed by the all-reduce of its 1/8 across the 2 replicas (2 nodes):
  // 1.5e6 / 8 = 187500 bytes (count 2) and 1e6 / 8 = 125000. Then the updated shards are all-gathered over
  // the shard group in the same buckets; the optimizer steps 2e6 / 8 parameters.
  FakeCosts costs;
  const auto w = fake_workload(2);
  auto s = fake_strategy(1, 1, 16, 2);
  s.zero = 1;
  s.dp_shard = 8;
  s.dp_overlap = false;
  s.bucket_mb = 1.5;
  const model::ClusterSpec cluster = fake_cluster();
  const simulator::CommAssignment assignment;
  simulator::OpClassTable classes(costs, s, cluster, assignment);
  CHECK(classes.shape_of(Group::dp_shard) == model::CommGroup{8, 1});
  CHECK(classes.shape_of(Group::dp_replicate) == model::CommGroup{2, 2});
  const auto plan = plan_of(w, s, costs, classes);
  const auto& stage = plan.stages[0];
  const auto grads = stage.tasks(stage.grads_after_backward);
  REQUIRE(grads.size() == 4);
  check_task(grads[0], Collective::reducescatter, Group::dp_shard, 1500000, 2);
  check_task(grads[1], Collective::allreduce, Group::dp_replicate, 187500, 2);
  check_task(grads[2], Collective::reducescatter, Group::dp_shard, 1000000, 1);
  check_task(grads[3], Collective::allreduce, Group::dp_replicate, 125000, 1);
  const auto gathers = stage.tasks(stage.param_gathers);
  REQUIRE(gathers.size() == 2);
  check_task(gathers[0], Collective::allgather, Group::dp_shard, 1500000, 2);
  check_task(gathers[1], Collective::allgather, Group::dp_shard, 1000000, 1);
  CHECK(stage.optimizer_params == 2e6 / 8);
}

TEST_CASE("dp_shard = dp is exactly the plan of ZeRO over the whole dp group", "[simulator]") {
  FakeCosts costs;
  costs.embedding_param_count = 3e5;
  costs.logits_param_count = 2e5;
  const auto w = fake_workload(8);
  const model::ClusterSpec cluster = fake_cluster();
  const simulator::CommAssignment assignment;
  for (int zero : {0, 1, 2, 3}) {
    for (int pp : {1, 2}) {
      INFO("zero " << zero << " pp " << pp);
      auto whole = fake_strategy(pp, 1, 8, 4);
      whole.zero = zero;
      whole.bucket_mb = 1;
      auto same = whole;
      same.dp_shard = 8;
      CHECK_FALSE(same.hybrid_shard());
      simulator::OpClassTable a(costs, whole, cluster, assignment), b(costs, same, cluster, assignment);
      check_same_plan(plan_of(w, whole, costs, a), plan_of(w, same, costs, b));
      const auto r0 = simulator::simulate(w, cluster, whole, costs);
      const auto r1 = simulator::simulate(w, cluster, same, costs);
      REQUIRE(r0.ok());
      REQUIRE(r1.ok());
      CHECK(r0->iteration_time_s == r1->iteration_time_s);
    }
  }
}

TEST_CASE("under HSDP the lower bound sums the plan's tasks as the graph runs them and stays below simulate",
          "[simulator]") {
  // As the stage plan's bound test (test_stage_plan.cpp), with the shard and replica groups.
  FakeCosts costs;
  costs.pp_bytes = 200000;
  costs.embedding_param_count = 3e5;
  costs.logits_param_count = 3e5;
  const auto w = fake_workload(8);
  const model::ClusterSpec cluster = fake_cluster();
  for (int pp : {1, 2}) {
    for (int zero : {1, 2, 3}) {
      for (int shard : {1, 2, 8}) {
        for (bool dp_overlap : {true, false}) {
          auto s = fake_strategy(pp, 1, 16, 4);
          s.zero = zero;
          s.dp_shard = shard;
          s.dp_overlap = dp_overlap;
          s.bucket_mb = 0.5;
          INFO("pp " << pp << " zero " << zero << " dp_shard " << shard << " dp-overlap " << dp_overlap);
          const auto r = simulator::simulate(w, cluster, s, costs);
          REQUIRE(r.ok());
          const auto bound = simulator::iteration_lower_bound(w, cluster, s, costs);
          REQUIRE(bound.ok());
          CHECK(bound->us <= r->iteration_time_s * 1e6);
          const auto path = simulator::iteration_critical_path_us(w, cluster, s, costs);
          REQUIRE(path.ok());
          CHECK(*path <= r->iteration_time_s * 1e6);
          double bound_comm_us = 0;
          for (const auto& work : bound->stages)
            bound_comm_us += work.gradients_us + work.gathers_us + work.parameter_gathers_us;
          bound_comm_us += bound->stages.front().embedding_us;
          double graph_comm_us = 0;
          bool replicas = false;
          for (const auto& c : r->op_classes) {
            const auto g = c.key.group;
            if (g == Group::dp_shard || g == Group::dp_replicate || g == Group::embedding)
              graph_comm_us += c.count * c.time_us;
            CHECK(g != Group::dp);  // every ZeRO collective is on the shard or the replica group
            replicas = replicas || g == Group::dp_replicate;
          }
          CHECK(replicas);
          CHECK(bound_comm_us == Approx(graph_comm_us).epsilon(1e-12));
        }
      }
    }
  }
}
