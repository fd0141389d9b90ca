// The stage plan is the one description of an iteration's tasks: the graph emitted from it and the lower
// bound summed from it must agree task for task.
#include <catch2/catch.hpp>

#include "fake_costs.h"
#include "model/cost_model.h"
#include "simulator/lower_bound.h"
#include "simulator/op_classes.h"
#include "simulator/simulator.h"
#include "simulator/stage_plan.h"

using namespace lagom;
using lagom::test::fake_cluster;
using lagom::test::fake_strategy;
using lagom::test::fake_workload;
using lagom::test::FakeCosts;

namespace {

simulator::IterationPlan plan_of(const model::WorkloadSpec& w, const model::Strategy& s,
                                 const FakeCosts& costs, const simulator::CommAssignment& assignment,
                                 simulator::OpClassTable& classes) {
  auto plan = simulator::plan_iteration(w, s, costs, assignment, classes, false);
  if (!plan.ok()) FAIL(plan.error().message);
  return std::move(plan).value();
}

// The plan on the fake cluster with no knob assignment, its op classes its own.
simulator::IterationPlan plan_of(const model::WorkloadSpec& w, const model::Strategy& s,
                                 const FakeCosts& costs) {
  const model::ClusterSpec cluster = fake_cluster();
  const simulator::CommAssignment assignment;
  simulator::OpClassTable classes(costs, s, cluster, assignment);
  return plan_of(w, s, costs, assignment, classes);
}

}  // namespace

TEST_CASE("each chunk of the plan carries its own layers, pieces and parameters", "[simulator]") {
  // 8 layers, p = 2, v = 2: interleaved chunks of 2 layers, stage 0 holds layers 0-1 and 4-5, stage 1
  // 2-3 and 6-7; the embedding sits on stage 0's first chunk, the output layer on stage 1's last.
  FakeCosts costs;
  costs.embedding_param_count = 3e5;
  costs.logits_param_count = 2e5;
  const auto w = fake_workload(8);
  const auto s = fake_strategy(2, 2, 2, 4);
  const model::ClusterSpec cluster = fake_cluster();
  const simulator::CommAssignment assignment;
  simulator::OpClassTable classes(costs, s, cluster, assignment);
  const auto plan = plan_of(w, s, costs, assignment, classes);
  REQUIRE(plan.stages.size() == 2);
  const auto& stage0 = plan.stages[0];
  const auto& stage1 = plan.stages[1];
  REQUIRE(stage0.chunks.size() == 2);
  CHECK(stage0.chunks[0].first_layer == 0);
  CHECK(stage0.chunks[1].first_layer == 4);
  CHECK(stage1.chunks[0].first_layer == 2);
  CHECK(stage1.chunks[1].first_layer == 6);
  for (const auto* stage : {&stage0, &stage1}) {
    CHECK(stage->pieces.size() == 4);
    for (const auto& chunk : stage->chunks) CHECK(chunk.layers == 2);
  }
  CHECK(stage0.chunks[0].embedding);
  CHECK_FALSE(stage0.chunks[1].logits);
  CHECK(stage1.chunks[1].logits);
  // Four layers of 1e6 parameters, plus the embedding's 3e5 (stage 0) or the output layer's 2e5 (stage 1);
  // bf16 gradients.
  CHECK(stage0.params == 4.3e6);
  CHECK(stage1.params == 4.2e6);
  CHECK(stage0.grad_bytes == 8.6e6);
  CHECK(stage0.pieces[0].grad_bytes == 2.6e6);
  CHECK(stage1.pieces[3].grad_bytes == 2.4e6);
  // A whole chunk's forward is its layers' 2 × 100 µs; the backward 2 × 200 µs.
  CHECK(stage1.chunks[0].forward.total_us() == 200);
  CHECK(stage1.chunks[0].backward.total_us() == 400);
  // The tied embedding's gradient: summed over the first and last stage, 3e5 bf16 elements.
  REQUIRE(plan.embedding_sync);
  CHECK(plan.embedding_sync->bytes == 600000);
  CHECK(stage0.embedding_sync);
  CHECK(stage1.embedding_sync);
}

TEST_CASE("the lower bound's per-stage work is the plan's, task for task as the graph runs it",
          "[simulator]") {
  // No contention (slowdowns 1), so every task of the simulated graph lasts its work alone: the compute
  // passes and the optimizer in the timeline, the gradient, gather and embedding tasks in the op classes'
  // calls × time. The bound sums the same plan; both must agree for every ZeRO stage, gradient mode and
  // pipeline depth, with the tied embedding split over the stages.
  FakeCosts costs;
  costs.tp = 2;
  costs.pp_bytes = 200000;
  costs.head_us = 30;
  costs.embedding_param_count = 3e5;
  costs.logits_param_count = 3e5;
  const auto w = fake_workload(8);
  const model::ClusterSpec cluster = fake_cluster();
  for (int pp : {1, 2, 4}) {
    // ZeRO 2 twice: DeepSpeed's (the shards gathered after the step) and FSDP's (gathered per layer).
    for (int variant : {0, 1, 2, 20, 3}) {
      const int zero = variant == 20 ? 2 : variant;
      for (bool dp_overlap : {true, false}) {
        auto s = fake_strategy(pp, 1, 2, 4);
        s.tp = 2;
        s.zero = zero;
        s.zero2 = variant == 20 ? model::Zero2::fsdp : model::Zero2::deepspeed;
        s.dp_overlap = dp_overlap;
        s.bucket_mb = 0.5;
        INFO("pp " << pp << " zero " << zero << " zero2 " << model::to_string(s.zero2) << " dp-overlap "
                   << dp_overlap);
        simulator::SimulateOptions options;
        options.timeline = true;
        const auto r = simulator::simulate(w, cluster, s, costs, {}, options);
        REQUIRE(r.ok());
        const auto bound = simulator::iteration_lower_bound(w, cluster, s, costs);
        REQUIRE(bound.ok());
        REQUIRE(bound->stages.size() == static_cast<std::size_t>(pp));
        CHECK(bound->us <= r->iteration_time_s * 1e6);

        double bound_comm_us = 0;  // gradients, gathers, parameter gathers of every stage, the embedding once
        for (int stage = 0; stage < pp; ++stage) {
          const auto& work = bound->stages[static_cast<std::size_t>(stage)];
          bound_comm_us += work.gradients_us + work.gathers_us + work.parameter_gathers_us;
          if (stage == 0) bound_comm_us += work.embedding_us;
          double passes_us = 0, optimizer_us = 0;
          for (const auto& e : r->timeline) {
            if (e.stage != stage || e.stream != simulator::StreamKind::compute) continue;
            if (e.category == "compute") passes_us += e.duration_us;
            if (e.category == "optimizer") optimizer_us += e.duration_us;
          }
          CHECK(work.passes_us == Approx(passes_us).epsilon(1e-12));
          CHECK(work.optimizer_us == Approx(optimizer_us).epsilon(1e-12));
        }
        double graph_comm_us = 0;
        bool embedding_class = false;
        for (const auto& c : r->op_classes) {
          const auto g = c.key.group;
          if (g == model::Group::dp || g == model::Group::expert_dp || g == model::Group::embedding)
            graph_comm_us += c.count * c.time_us;
          embedding_class = embedding_class || g == model::Group::embedding;
        }
        CHECK(bound_comm_us == Approx(graph_comm_us).epsilon(1e-12));
        // The tied embedding's all-reduce exists exactly with pp > 1 and ZeRO < 3, and the bound has it.
        CHECK(embedding_class == (pp > 1 && zero < 3));
        CHECK((bound->stages.front().embedding_us > 0) == embedding_class);
        CHECK((bound->stages.back().embedding_us > 0) == embedding_class);
      }
    }
  }
}

TEST_CASE("the lower bound counts the tied embedding's all-reduce before the optimizer", "[simulator]") {
  // As "the lower bound counts synchronous sends, ..." (test_simulator.cpp), with a tied embedding of 5e5
  // parameters per GPU on each end stage: p = 2, m = 4, one layer per stage, F = 100, B = 200 µs, a
  // transfer 10 µs. Stage 1 ends its last pass at 110 + 1200 + 30 = 1340 µs; the gradient crosses back
  // (10 µs) and stage 0 runs that backward (200 µs); stage 0 all-reduces its (1e6 + 5e5) · 2 bytes of
  // gradients (300 µs), then the embedding's 5e5 · 2 bytes with stage 1 (100 µs), then steps its optimizer
  // over 1.5e6 parameters (1.5 µs).
  FakeCosts costs;
  costs.pp_bytes = 100000;
  costs.embedding_param_count = 5e5;
  costs.logits_param_count = 5e5;
  const auto w = fake_workload(2);
  auto s = fake_strategy(2, 1, 2, 4);
  s.dp_overlap = false;
  const auto bound_us = simulator::iteration_lower_bound_us(w, fake_cluster(), s, costs);
  REQUIRE(bound_us.ok());
  CHECK(*bound_us == Approx((1340 + 10 + 200 + 300 + 100 + 1.5) * (1 - 1e-9)).epsilon(1e-13));
  const auto r = simulator::simulate(w, fake_cluster(), s, costs);
  REQUIRE(r.ok());
  CHECK(*bound_us <= r->iteration_time_s * 1e6);
}

namespace {

// pp 1, dp 2 ranks, one micro-batch, dp-overlap off, 2 MB buckets: one bucket per layer of fake_workload
// (1e6 parameters of 2 bytes).
model::Strategy two_ranks_one_bucket_per_layer(int zero) {
  auto s = fake_strategy(1, 1, 2, 1);
  s.zero = zero;
  s.dp_overlap = false;
  s.bucket_mb = 2;
  return s;
}

simulator::SimulationResult simulated(const model::WorkloadSpec& w, const model::Strategy& s,
                                      const FakeCosts& costs) {
  auto result = simulator::simulate(w, fake_cluster(), s, costs, {});
  if (!result.ok()) FAIL(result.error().message);
  return std::move(result).value();
}

}  // namespace

TEST_CASE("a chunk of no transformer layer is one piece: the embedding or the output layer alone",
          "[simulator]") {
  // 2 layers over p = 2, v = 2 with the embedding and the loss counted: 4 counted layers, 1 per chunk; chunk
  // (0, 0) holds only the embedding, (1, 1) only the output layer.
  FakeCosts costs;
  costs.embedding_param_count = 3e5;
  costs.logits_param_count = 2e5;
  costs.head_us = 30;
  const auto w = fake_workload(2);
  auto s = fake_strategy(2, 2, 2, 4);
  s.embedding_in_split = s.loss_in_split = true;
  const model::ClusterSpec cluster = fake_cluster();
  const simulator::CommAssignment assignment;
  simulator::OpClassTable classes(costs, s, cluster, assignment);
  const auto plan = plan_of(w, s, costs, assignment, classes);
  const auto& stage0 = plan.stages[0];
  const auto& stage1 = plan.stages[1];
  CHECK(stage0.chunks[0].layers == 0);
  CHECK(stage0.chunks[0].pieces == 1);
  CHECK(stage0.chunks[0].forward.total_us() == 30);  // the embedding's forward alone
  CHECK(stage0.chunks[1].first_layer == 1);
  CHECK(stage1.chunks[0].first_layer == 0);
  CHECK(stage1.chunks[1].layers == 0);
  CHECK(stage1.chunks[1].backward.total_us() == 60);
  // Stage 0: layer 1 and the embedding; stage 1: layer 0 and the output layer.
  CHECK(stage0.params == 1.3e6);
  CHECK(stage1.params == 1.2e6);
  CHECK(stage0.pieces.size() == 2);
  CHECK(stage0.pieces[0].grad_bytes == 6e5);
  const auto r = simulator::simulate(w, cluster, s, costs, {});
  REQUIRE(r.ok());
  const auto bound = simulator::iteration_lower_bound_us(w, cluster, s, costs);
  REQUIRE(bound.ok());
  CHECK(*bound <= r->iteration_time_s * 1e6);
}

TEST_CASE("bucket-mb chunk reduces each chunk's gradients as one bucket; grad-reduce-dtype sets its bytes",
          "[simulator]") {
  // 8 layers, p = 2, v = 2, dp 2, ZeRO-1: each chunk of 2 layers × 1e6 parameters reduces one bucket of
  // 4e6 bf16 bytes after its last backward (8e6 in fp32), and gathers one of 4e6 bf16 parameters.
  FakeCosts costs;
  const auto w = fake_workload(8);
  auto s = fake_strategy(2, 2, 2, 4);
  s.zero = 1;
  s.bucket_per_chunk = true;
  const model::ClusterSpec cluster = fake_cluster();
  const simulator::CommAssignment assignment;
  for (const auto dtype : {model::Precision::bf16, model::Precision::fp32}) {
    s.grad_reduce_dtype = dtype;
    const double element = dtype == model::Precision::fp32 ? 4 : 2;
    simulator::OpClassTable classes(costs, s, cluster, assignment);
    const auto plan = plan_of(w, s, costs, assignment, classes);
    const auto& stage = plan.stages[0];
    CHECK(stage.grad_bytes == 4e6 * element);
    int scatters = 0, gathers = 0;
    for (const auto& t : stage.comm_tasks) {
      if (t.collective == model::Collective::reducescatter) {
        CHECK(t.bytes == static_cast<std::int64_t>(2e6 * element));
        CHECK(t.count == 1);
        ++scatters;
      }
      if (t.collective == model::Collective::allgather) {
        CHECK(t.bytes == 4000000);
        ++gathers;
      }
    }
    CHECK(scatters == 2);
    CHECK(gathers == 2);
    // The first layer piece of each chunk issues its chunk's bucket in the last backward.
    CHECK(stage.pieces[0].grads.end - stage.pieces[0].grads.begin == 1);
    CHECK(stage.pieces[1].grads.empty());
  }
}

TEST_CASE("p2p-overlap: a send no longer holds its sender, only its receiver waits", "[simulator]") {
  // 4 layers over p = 2, v = 2, m = 2 (all four chunk forwards first), F = 100, B = 200 µs, a transfer
  // 10 µs, dp 1. Overlapped, every send finishes before the sender's next-but-one pass, so only the data
  // dependencies count: stage 0 F0c0 0–100, F1c0 100–200; stage 1 F0c0 110–210, F1c0 210–310; stage 0
  // F0c1 220–320, F1c1 320–420; stage 1 F0c1 330–430, F1c1 430–530, B0c1 530–730, B1c1 730–930; stage 0
  // B0c1 740–940, B1c1 940–1140; stage 1 B0c0 950–1150, B1c0 1150–1350; stage 0 B0c0 1160–1360, B1c0
  // 1360–1560, then its optimizer on 2e6 parameters (2 µs): 1562 µs. Blocking sends are slower.
  FakeCosts costs;
  costs.pp_bytes = 100000;
  const auto w = fake_workload(4);
  auto s = fake_strategy(2, 2, 1, 2);
  const double blocking_us = simulated(w, s, costs).iteration_time_s * 1e6;
  s.p2p_overlap = true;
  const double overlapped_us = simulated(w, s, costs).iteration_time_s * 1e6;
  CHECK(overlapped_us == Approx(1562).epsilon(1e-9));
  CHECK(blocking_us > overlapped_us);
  const auto bound = simulator::iteration_lower_bound_us(w, fake_cluster(), s, costs);
  REQUIRE(bound.ok());
  CHECK(*bound <= overlapped_us);
}

TEST_CASE("param-gather-overlap: bucket b's all-gather runs beside the forward of the buckets before it",
          "[simulator]") {
  // pp 1, dp 2, ZeRO-1, 2 layers of 1e6 parameters, m = 1, dp-overlap off, 2 MB buckets (one layer each);
  // an all-gather or reduce-scatter of 2e6 bytes takes 200 µs. Off: forward 200 + backward 400, the
  // reduce-scatters 400, the optimizer on 1e6 parameters 1, the all-gathers 400: 1401 µs. On: layer 0's
  // gather 0–200, its forward 200–300 beside layer 1's gather 200–400, layer 1's forward 400–500, the
  // backward 500–900, the reduce-scatters 900–1300, the optimizer: 1301 µs.
  FakeCosts costs;
  const auto w = fake_workload(2);
  auto s = two_ranks_one_bucket_per_layer(1);
  CHECK(simulated(w, s, costs).iteration_time_s * 1e6 == Approx(1401).epsilon(1e-9));
  s.param_gather_overlap = true;
  CHECK(simulated(w, s, costs).iteration_time_s * 1e6 == Approx(1301).epsilon(1e-9));
  const auto bound = simulator::iteration_lower_bound_us(w, fake_cluster(), s, costs);
  REQUIRE(bound.ok());
  CHECK(*bound <= 1301);
}

TEST_CASE("FSDP's ZeRO-2 gathers each layer before every forward only and DeepSpeed's after the step",
          "[simulator]") {
  // pp 1, dp 2, 2 layers of 1e6 parameters; an all-gather or reduce-scatter of 2e6 bytes takes 200 µs,
  // a layer's forward 100 µs and its backward 200. FSDP's (m = 1): layer 0's gather 0–200, its forward
  // 200–300 beside layer 1's gather 200–400, layer 1's forward 400–500, its backward 500–700 (no gather
  // before it), its reduce-scatter 700–900 beside layer 0's backward, layer 0's reduce-scatter 900–1100,
  // the optimizer on 1e6 parameters 1: 1101 µs, no gather after the step. DeepSpeed's with dp-overlap off
  // (as ZeRO-1): forward 200 + backward 400, the reduce-scatters 400, the optimizer 1, the all-gathers 400:
  // 1401 µs.
  FakeCosts costs;
  const auto w = fake_workload(2);
  auto s = two_ranks_one_bucket_per_layer(2);
  s.zero2 = model::Zero2::deepspeed;
  CHECK(simulated(w, s, costs).iteration_time_s * 1e6 == Approx(1401).epsilon(1e-9));
  s.zero2 = model::Zero2::fsdp;
  CHECK(simulated(w, s, costs).iteration_time_s * 1e6 == Approx(1101).epsilon(1e-9));
  const auto bound = simulator::iteration_lower_bound_us(w, fake_cluster(), s, costs);
  REQUIRE(bound.ok());
  CHECK(*bound <= 1101);
  // `auto` without a framework is DeepSpeed's, whatever the stack's kernels.
  s.zero2 = model::Zero2::automatic;
  s.stack = model::Stack::pytorch_eager;
  CHECK_FALSE(model::zero2_as_fsdp(s));
  CHECK(simulated(w, s, costs).iteration_time_s * 1e6 == Approx(1401).epsilon(1e-9));
  s.zero = 3;
  s.zero2 = model::Zero2::fsdp;
  CHECK_FALSE(model::zero2_as_fsdp(s));  // zero 3 is one thing everywhere
  CHECK(model::gathers_per_layer(s));

  // The calls over m = 3 micro-batches (op classes on the dp group): FSDP's ZeRO-2 gathers each layer
  // once per micro-batch (ZeRO-3 twice) and reduce-scatters each layer's gradients after every backward;
  // DeepSpeed's reduces the last backward's buckets and gathers the two buckets after the step.
  auto calls = [&](int zero, model::Zero2 zero2, model::Collective collective) {
    auto t = fake_strategy(1, 1, 2, 3);
    t.zero = zero;
    t.zero2 = zero2;
    t.bucket_mb = 2;
    double count = 0;
    for (const auto& c : simulated(w, t, costs).op_classes)
      if (c.key.group == model::Group::dp && c.key.collective == collective) count += c.count;
    return count;
  };
  CHECK(calls(2, model::Zero2::fsdp, model::Collective::allgather) == 6);
  CHECK(calls(3, model::Zero2::automatic, model::Collective::allgather) == 12);
  CHECK(calls(2, model::Zero2::deepspeed, model::Collective::allgather) == 2);
  CHECK(calls(2, model::Zero2::fsdp, model::Collective::reducescatter) == 6);
  CHECK(calls(2, model::Zero2::deepspeed, model::Collective::reducescatter) == 2);
}

TEST_CASE("defer-embedding-wgrad moves the output layer's wgrad of the first N micro-batches into the flush",
          "[simulator]") {
  // 2 layers over pp 2 (1F1B), m = 4, F = 100, B = 200 µs per layer; the embedding (stage 0) and the output
  // layer (stage 1) add 50 µs forward and 100 backward (the output layer's: dgrad 50 + wgrad 50). Both
  // stages: F 150, B 300. Not deferred: s0 F0 0-150, F1 150-300; s1 F0 150-300, B0 300-600; s0 B0
  // 600-900, F2 900-1050; s1 F1 600-750, B1 750-1050, F2 1050-1200, B2 1200-1500; s0 B1 1050-1350,
  // F3 1350-1500; s1 F3 1500-1650, B3 1650-1950; s0 B2 1500-1800, B3 1950-2250, optimizer 1: 2251 µs.
  // All 4 deferred, stage 1's B is 250 and its 4 wgrads (200) run after its B3: s1 B0 300-550; s0 B0
  // 550-850, F2 850-1000; s1 F1 550-700, B1 700-950, F2 1000-1150, B2 1150-1400; s0 B1 1000-1300, F3
  // 1300-1450; s1 F3 1450-1600, B3 1600-1850, wgrads 1850-2050; s0 B2 1450-1750, B3 1850-2150: 2151 µs.
  FakeCosts costs;
  costs.head_us = 50;
  const auto w = fake_workload(2);
  auto s = fake_strategy(2, 1, 1, 4);
  CHECK(simulated(w, s, costs).iteration_time_s * 1e6 == Approx(2251).epsilon(1e-9));
  s.defer_embedding_wgrad = 4;
  const auto deferred = simulated(w, s, costs);
  CHECK(deferred.iteration_time_s * 1e6 == Approx(2151).epsilon(1e-9));
  // Deferring more micro-batches than there are defers them all; the work is the same, only moved.
  s.defer_embedding_wgrad = 64;
  CHECK(simulated(w, s, costs).iteration_time_s * 1e6 == Approx(2151).epsilon(1e-9));
  // Two of four: stage 1's B0 and B1 250, B2 and B3 300, then two wgrads: s1 B0 300-550, F1 550-700, B1
  // 700-950, F2 1000-1150, B2 1150-1450, F3 1450-1600, B3 1600-1900, wgrads 1900-2000; s0 B0 550-850, F2
  // 850-1000, B1 1000-1300, F3 1300-1450, B2 1450-1750, B3 1900-2200, optimizer: 2201 µs.
  s.defer_embedding_wgrad = 2;
  const double two_us = simulated(w, s, costs).iteration_time_s * 1e6;
  CHECK(two_us == Approx(2201).epsilon(1e-9));
  // At pp 1 only the pipelined schedules drain the buffers: no effect.
  auto single = fake_strategy(1, 1, 1, 4);
  const double plain_us = simulated(w, single, costs).iteration_time_s * 1e6;
  single.defer_embedding_wgrad = 4;
  CHECK(simulated(w, single, costs).iteration_time_s * 1e6 == plain_us);
  const auto bound = simulator::iteration_lower_bound_us(w, fake_cluster(), s, costs);
  REQUIRE(bound.ok());
  CHECK(*bound <= two_us);
}

TEST_CASE("the lower bound stays below the simulation with the pipeline and optimizer overlaps",
          "[simulator]") {
  FakeCosts costs;
  costs.pp_bytes = 200000;
  costs.head_us = 30;
  costs.embedding_param_count = 3e5;
  costs.logits_param_count = 3e5;
  const model::ClusterSpec cluster = fake_cluster();
  for (const bool counted : {false, true}) {
    for (const bool chunk_buckets : {false, true}) {
      for (const int overlap : {0, 1, 2}) {
        const auto w = fake_workload(counted ? 6 : 8);
        auto s = fake_strategy(2, 2, 2, 4);
        s.zero = 1;
        s.embedding_in_split = s.loss_in_split = counted;
        s.bucket_per_chunk = chunk_buckets;
        s.bucket_mb = 1;
        s.p2p_overlap = overlap > 0;
        s.param_gather_overlap = overlap > 0;
        s.param_gather_with_optimizer = overlap > 1;
        INFO("counted " << counted << " chunk buckets " << chunk_buckets << " overlap " << overlap);
        const auto r = simulator::simulate(w, cluster, s, costs, {});
        REQUIRE(r.ok());
        const auto bound = simulator::iteration_lower_bound(w, cluster, s, costs);
        REQUIRE(bound.ok());
        CHECK(bound->us <= r->iteration_time_s * 1e6);
        double bound_comm_us = 0, graph_comm_us = 0;
        for (std::size_t i = 0; i < bound->stages.size(); ++i) {
          const auto& work = bound->stages[i];
          bound_comm_us += work.gradients_us + work.parameter_gathers_us + work.forward_gathers_us;
          if (i == 0) bound_comm_us += work.embedding_us;
        }
        for (const auto& c : r->op_classes) {
          const auto g = c.key.group;
          if (g == model::Group::dp || g == model::Group::embedding) graph_comm_us += c.count * c.time_us;
        }
        CHECK(bound_comm_us == Approx(graph_comm_us).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("FP8 primary weights are all-gathered as FP8 bytes; the gradients stay 16-bit", "[simulator]") {
  // 8 layers, p = 2, v = 2, dp 2, ZeRO-1, one bucket per chunk: each chunk of 2 layers × 1e6 parameters,
  // 9.9e5 of them linear weights. --precision fp8 --fp8-params: the gather moves the linear weights at
  // 1 B and the 1e4 norm parameters at 2 B per layer, 2 × (9.9e5 + 2e4) = 2,020,000 B per chunk; the
  // reduce-scatter moves BF16 gradients, 4e6 B. Without --fp8-params (or in BF16) the gather is 4e6 B.
  FakeCosts costs;
  costs.linear_per_layer = 9.9e5;
  const auto w = fake_workload(8);
  auto s = fake_strategy(2, 2, 2, 4);
  s.zero = 1;
  s.bucket_per_chunk = true;
  s.precision = model::Precision::fp8;
  for (const bool fp8_params : {true, false}) {
    s.fp8_params = fp8_params;
    const auto plan = plan_of(w, s, costs);
    const auto& stage = plan.stages[0];
    CHECK(stage.pieces[0].param_bytes == (fp8_params ? 1010000.0 : 2e6));
    int gathers = 0;
    for (const auto& t : stage.comm_tasks) {
      if (t.collective == model::Collective::reducescatter) CHECK(t.bytes == 4000000);
      if (t.collective == model::Collective::allgather) {
        CHECK(t.bytes == (fp8_params ? 2020000 : 4000000));
        ++gathers;
      }
    }
    CHECK(gathers == 2);
  }
}

TEST_CASE("a pipeline transfer split over TP is all-gathered before the receiver's pass", "[simulator]") {
  // 2 layers over p = 2, tp 2, m = 1, F = 100, B = 200 µs. Megatron-DeepSpeed without SP sends each TP
  // rank's share (the fake's 1e5 bytes, 10 µs) and the receiver all-gathers the whole tensor over TP
  // (2e5 bytes, 20 µs) before its pass: the forward's and the backward's transfer each wait 20 µs more
  // than Megatron-Core's whole-tensor send of the same fake size.
  FakeCosts costs;
  costs.pp_bytes = 100000;
  const auto w = fake_workload(2);
  auto s = fake_strategy(2, 1, 1, 1);
  s.tp = 2;
  s.gpus = 4;
  s.stack = model::Stack::megatron_deepspeed;
  const auto plan = plan_of(w, s, costs);
  REQUIRE(plan.transfer_gather.has_value());
  CHECK(plan.transfer_gather->collective == model::Collective::allgather);
  CHECK(plan.transfer_gather->group == model::Group::tp);
  CHECK(plan.transfer_gather->bytes == 200000);
  const double split_us = simulated(w, s, costs).iteration_time_s * 1e6;
  s.stack = model::Stack::megatron_core;
  CHECK_FALSE(plan_of(w, s, costs).transfer_gather.has_value());
  const double whole_us = simulated(w, s, costs).iteration_time_s * 1e6;
  CHECK(split_us - whole_us == Approx(40).epsilon(1e-9));
  s.stack = model::Stack::megatron_deepspeed;
  const auto bound = simulator::iteration_lower_bound_us(w, fake_cluster(), s, costs);
  REQUIRE(bound.ok());
  CHECK(*bound <= split_us);
}
