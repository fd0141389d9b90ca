// FP8's amax reduction (model::CostModel::amax_steps): Transformer Engine's delayed scaling all-reduces the
// amaxes of every FP8 tensor of the rank over the tp·cp·dp ranks of its pipeline stage at the end of each
// model chunk's forward and backward, every micro-batch, and updates the amax history and scales.
#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/groups.h"
#include "model/presets.h"
#include "simulator/model_costs.h"
#include "simulator/simulator.h"

using namespace lagom;

namespace {

model::Strategy strategy(int gpus, int tp, int pp, model::Precision precision) {
  model::Strategy s;
  s.gpus = gpus;
  s.tp = tp;
  s.pp = pp;
  s.micro_batch = 1;
  s.global_batch = 32;
  s.precision = precision;
  return s;
}

const model::Step* comm_of(const std::vector<model::Step>& steps) {
  for (const model::Step& step : steps) {
    if (step.is_comm) return &step;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("FP8 reduces every FP8 tensor's amax over the pipeline stage's ranks once per chunk and direction",
          "[simulator]") {
  // Llama 3 8B: 32 layers of 4 FP8 GEMMs (QKV, projection, gate+up, down): 3 forward and 2 backward fp32
  // amaxes each, every module of the rank in one buffer.
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  const model::ClusterSpec c = model::cluster_preset("dgx-h100").value();
  const model::CostModel cost(c);
  const model::Strategy s = model::resolve_strategy(strategy(16, 1, 1, model::Precision::fp8), w, c).value();
  const simulator::ModelCosts costs(cost, w, s);
  const auto forward = costs.amax_steps(model::Phase::forward);
  const auto backward = costs.amax_steps(model::Phase::backward);
  const model::Step* f = comm_of(forward);
  const model::Step* b = comm_of(backward);
  REQUIRE(f != nullptr);
  REQUIRE(b != nullptr);
  CHECK(f->comm.group == model::Group::amax);
  CHECK(f->comm.collective == model::Collective::allreduce);
  CHECK(f->comm.bytes == 32 * 4 * 3 * 4.0);
  CHECK(b->comm.bytes == 32 * 4 * 2 * 4.0);
  CHECK(forward.back().compute.name == "fp8.amax.update");
  CHECK(costs.amax_steps(model::Phase::recompute).empty());  // the recompute is not reduced again
  // The group: the tp·cp·dp consecutive ranks of a stage (16 over 2 nodes here; tp 4, pp 2 on 32 GPUs: the
  // stage's 16 ranks, 2 nodes).
  const model::CommGroup g = model::communicator_shape(model::Group::amax, s, 8);
  CHECK(g.ranks == 16);
  CHECK(g.nodes == 2);
  const model::Strategy staged =
      model::resolve_strategy(strategy(32, 4, 2, model::Precision::fp8), w, c).value();
  CHECK(model::communicator_shape(model::Group::amax, staged, 8).ranks == 16);
  CHECK(model::communicator_shape(model::Group::amax, staged, 8).nodes == 2);
  // Half the layers on a rank at pp 2: half the amaxes.
  const simulator::ModelCosts staged_costs(cost, w, staged);
  CHECK(comm_of(staged_costs.amax_steps(model::Phase::forward))->comm.bytes == 16 * 4 * 3 * 4.0);
  // BF16: nothing.
  const model::Strategy bf16 =
      model::resolve_strategy(strategy(16, 1, 1, model::Precision::bf16), w, c).value();
  CHECK(simulator::ModelCosts(cost, w, bf16).amax_steps(model::Phase::forward).empty());
}

TEST_CASE("the simulator issues FP8's amax all-reduces once per micro-batch and direction", "[simulator]") {
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  const model::ClusterSpec c = model::cluster_preset("dgx-h100").value();
  const model::CostModel cost(c);
  auto run = [&](model::Precision precision) {
    const model::Strategy s = model::resolve_strategy(strategy(16, 1, 1, precision), w, c).value();
    const simulator::ModelCosts costs(cost, w, s);
    return simulator::simulate(w, c, s, costs).value();
  };
  const simulator::SimulationResult fp8 = run(model::Precision::fp8);
  double forward = 0, backward = 0;
  for (const simulator::OpClass& op : fp8.op_classes) {
    if (op.key.group != model::Group::amax) continue;
    CHECK(op.shape.ranks == 16);
    CHECK(op.time_us > 0);
    if (op.key.bytes == 32 * 4 * 3 * 4) forward += op.count;
    if (op.key.bytes == 32 * 4 * 2 * 4) backward += op.count;
  }
  // dp 16, global batch 32, micro-batch 1: 2 micro-batches on the one simulated stage.
  CHECK(forward == 2);
  CHECK(backward == 2);
  // Interleaved, 2 chunks per rank on 2 stages (tp 4, dp 4: 8 micro-batches a rank): one reduction per chunk
  // and micro-batch, 2 · 8 a stage and direction, summed over the 2 simulated stages; 16 layers a rank.
  model::Strategy interleaved = strategy(32, 4, 2, model::Precision::fp8);
  interleaved.vpp = 2;
  interleaved.schedule = model::Schedule::interleaved;
  const model::Strategy si = model::resolve_strategy(interleaved, w, c).value();
  const simulator::ModelCosts chunked(cost, w, si);
  const simulator::SimulationResult result = simulator::simulate(w, c, si, chunked).value();
  double calls = 0;
  for (const simulator::OpClass& op : result.op_classes) {
    if (op.key.group == model::Group::amax && op.key.bytes == 16 * 4 * 3 * 4) calls += op.count;
  }
  CHECK(calls == 2 * 2 * 8);
  const simulator::SimulationResult bf16 = run(model::Precision::bf16);
  for (const simulator::OpClass& op : bf16.op_classes) CHECK(op.key.group != model::Group::amax);
}
