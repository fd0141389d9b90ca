// torch.utils.checkpoint's early stop (Strategy::recompute_early_stop, docs/model.md "Early stop of the
// recompute"): with full recompute under a PyTorch stack, a dense layer's recompute ends at its last saved
// activation, so its last linear layer (a native one) and what follows it are not rerun.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/presets.h"
#include "model/specs.h"

using namespace lagom::model;

namespace {

std::vector<std::string> names(const std::vector<Step>& steps) {
  std::vector<std::string> out;
  for (const Step& step : steps) out.push_back(step.is_comm ? step.comm.name : step.compute.name);
  return out;
}

double time_of(const std::vector<Step>& steps) {
  double total = 0;
  for (const Step& step : steps) total += step.is_comm ? 0.0 : step.compute.time_us;
  return total;
}

Strategy torch_full(int tp, bool early_stop) {
  Strategy s;
  s.gpus = 8;
  s.tp = tp;
  s.global_batch = 64;
  s.micro_batch = 2;
  s.recompute = Recompute::full;
  s.stack = Stack::pytorch_eager;
  s.recompute_early_stop = early_stop;
  return s;
}

}  // namespace

TEST_CASE("early stop leaves a dense layer's last linear layer and what follows it out of the recompute",
          "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster, std::nullopt, Stack::pytorch_eager);
  for (const int tp : {1, 2}) {
    const Strategy whole = resolve_strategy(torch_full(tp, false), w, cluster).value();
    const Strategy early = resolve_strategy(torch_full(tp, true), w, cluster).value();
    const auto all = model.layer_steps(w, whole, Phase::recompute, 0);
    const auto stopped = model.layer_steps(w, early, Phase::recompute, 0);
    INFO("tp " << tp);
    // Without early stop the recompute ends as the forward does: FC2, its TP reduction, the residual add.
    const auto all_names = names(all);
    REQUIRE(all_names.back() == "mlp.residual.recompute");
    // With it, everything from FC2 on is gone and nothing before it is touched.
    const auto stopped_names = names(stopped);
    REQUIRE_FALSE(stopped_names.empty());
    CHECK(stopped_names.back() == "mlp.act.recompute");
    CHECK(std::vector<std::string>(all_names.begin(), all_names.begin() + stopped_names.size()) ==
          stopped_names);
    CHECK(all_names[stopped_names.size()] == "mlp.fc2.recompute");
    // What it saves is FC2's GEMM (and the add): ffn·hidden/tp per token, 2 FLOPs each.
    double fc2_flops = 0;
    for (const Step& step : all)
      if (!step.is_comm && step.compute.name == "mlp.fc2.recompute") fc2_flops = step.compute.flops;
    CHECK(fc2_flops == Approx(2.0 * 2 * 8192 * 14336.0 * 4096 / tp));
    CHECK(time_of(stopped) < time_of(all));
    // The forward and the backward are the same either way.
    CHECK(names(model.layer_steps(w, early, Phase::forward, 0)) ==
          names(model.layer_steps(w, whole, Phase::forward, 0)));
    CHECK(names(model.layer_steps(w, early, Phase::backward, 0)) ==
          names(model.layer_steps(w, whole, Phase::backward, 0)));
  }
}

TEST_CASE("early stop skips nothing priced after a saved dropout mask or a Transformer Engine linear",
          "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster, std::nullopt, Stack::pytorch_eager);
  // Dropout saves its mask after it runs: the stop comes after the residual's dropout, FC2 reruns.
  Strategy dropout = torch_full(1, true);
  dropout.dropout = 0.1;
  dropout = resolve_strategy(dropout, w, cluster).value();
  Strategy dropout_whole = dropout;
  dropout_whole.recompute_early_stop = false;
  CHECK(names(model.layer_steps(w, dropout, Phase::recompute, 0)) ==
        names(model.layer_steps(w, dropout_whole, Phase::recompute, 0)));
  // Transformer Engine's FP8 linear saves after its GEMM: FC2 reruns, the residual add does not.
  Strategy fp8 = torch_full(1, true);
  fp8.precision = Precision::fp8;
  fp8 = resolve_strategy(fp8, w, cluster).value();
  const auto stopped = names(model.layer_steps(w, fp8, Phase::recompute, 0));
  REQUIRE_FALSE(stopped.empty());
  CHECK(stopped.back() == "mlp.fc2.recompute");
}

TEST_CASE("early stop needs full recompute and a PyTorch stack", "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  Strategy selective = torch_full(1, true);
  selective.recompute = Recompute::selective;
  const auto r1 = resolve_strategy(selective, w, cluster);
  REQUIRE_FALSE(r1.ok());
  CHECK(r1.error().message ==
        "recompute-early-stop needs recompute full (recompute=selective: torch.utils.checkpoint stops early "
        "only in a layer checkpointed whole)");
  Strategy megatron = torch_full(1, true);
  megatron.stack = Stack::megatron_core;
  const auto r2 = resolve_strategy(megatron, w, cluster);
  REQUIRE_FALSE(r2.ok());
  CHECK(r2.error().message ==
        "recompute-early-stop needs a PyTorch stack (pytorch-eager or pytorch-compile; stack megatron-core: "
        "Megatron's and DeepSpeed's checkpointing rerun the whole forward)");
  Strategy compiled = torch_full(1, true);
  compiled.stack = Stack::pytorch_compile;
  CHECK(resolve_strategy(compiled, w, cluster).ok());
}
