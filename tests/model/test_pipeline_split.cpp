// The pipeline split as Megatron-Core makes it (model/pipeline_split.h), the memory of the most loaded
// stage, and the memory budget (usable memory less the reserve).
#include <catch2/catch.hpp>

#include "core/units.h"
#include "model/cost_model.h"
#include "model/pipeline_split.h"
#include "model/presets.h"

using namespace lagom::model;

namespace {

WorkloadSpec llama405b(int layers) {
  WorkloadSpec w = workload_preset("llama3-70b").value();
  w.name = "llama3.1-405b";
  w.layers = layers;
  w.hidden = 16384;
  w.heads = 128;
  w.kv_heads = 8;
  w.ffn_hidden = 53248;
  w.vocab = 128256;
  w.seq = 8192;
  return w;
}

Strategy pipeline(int pp, int vpp, bool counted) {
  Strategy s;
  s.pp = pp;
  s.vpp = vpp;
  s.embedding_in_split = counted;
  s.loss_in_split = counted;
  return s;
}

int stage_layers(const std::vector<ChunkLayers>& chunks) {
  int n = 0;
  for (const auto& c : chunks) n += c.layers;
  return n;
}

}  // namespace

TEST_CASE("126 layers over pp 8 × vpp 8 with embedding and loss counted: chunks of 2, the end ones of 1",
          "[model]") {
  // Megatron-Core 0.11: L' = 126 + 2 = 128, 16 per rank, 2 per chunk; the first chunk (rank 0, virtual 0)
  // builds 1 layer and the embedding, the last (rank 7, virtual 7) 1 layer and the loss; chunk (p, v)
  // starts at layer 16v + 2p − 1 except chunk (0, 0) at 0 (docs/validation-settings.md "Numbers to pin" 1).
  const WorkloadSpec w = llama405b(126);
  const Strategy s = pipeline(8, 8, true);
  REQUIRE(check_pipeline_split(w, s).ok());
  const auto split = pipeline_split(w, s);
  REQUIRE(split.size() == 8);
  for (int p = 0; p < 8; ++p) {
    for (int v = 0; v < 8; ++v) {
      const ChunkLayers& c = split[p][v];
      INFO("rank " << p << " chunk " << v);
      const bool first = p == 0 && v == 0, last = p == 7 && v == 7;
      CHECK(c.layers == (first || last ? 1 : 2));
      CHECK(c.first_layer == (first ? 0 : 16 * v + 2 * p - 1));
      CHECK(c.embedding == first);
      CHECK(c.logits == last);
    }
  }
  CHECK(stage_layers(split[0]) == 15);
  for (int p = 1; p < 7; ++p) CHECK(stage_layers(split[p]) == 16);
  CHECK(stage_layers(split[7]) == 15);
}

TEST_CASE("the 405B proxies: 62 layers leave the end chunks one layer, 30 layers none", "[model]") {
  // 62 over pp 4 × vp 8: L' = 64, 2 per chunk, ranks 15/16/16/15. 30 over pp 4 × vp 8: L' = 32, 1 per chunk:
  // the first chunk holds only the embedding, the last only the output layer and loss; ranks 7/8/8/7.
  const auto split62 = pipeline_split(llama405b(62), pipeline(4, 8, true));
  CHECK(stage_layers(split62[0]) == 15);
  CHECK(stage_layers(split62[1]) == 16);
  CHECK(stage_layers(split62[3]) == 15);
  const WorkloadSpec w30 = llama405b(30);
  REQUIRE(check_pipeline_split(w30, pipeline(4, 8, true)).ok());
  const auto split30 = pipeline_split(w30, pipeline(4, 8, true));
  CHECK(split30[0][0].layers == 0);
  CHECK(split30[0][0].embedding);
  CHECK(split30[3][7].layers == 0);
  CHECK(split30[3][7].logits);
  CHECK(split30[0][1].first_layer == 3);  // virtual stage 4: after 0 + 1 + 1 + 1 layers
  CHECK(stage_layers(split30[0]) == 7);
  CHECK(stage_layers(split30[1]) == 8);
  CHECK(stage_layers(split30[3]) == 7);
}

TEST_CASE("first-stage-layers and last-stage-layers fix the end ranks, the others share the rest",
          "[model]") {
  WorkloadSpec w = llama405b(10);
  Strategy s = pipeline(4, 1, false);
  s.first_stage_layers = 1;
  s.last_stage_layers = 3;
  REQUIRE(check_pipeline_split(w, s).ok());
  auto split = pipeline_split(w, s);
  CHECK(split[0][0].layers == 1);
  CHECK(split[1][0].layers == 3);  // (10 − 1 − 3) / 2
  CHECK(split[2][0].first_layer == 4);
  CHECK(split[3][0].layers == 3);
  CHECK(split[3][0].first_layer == 7);
  // With vpp 2: 12 layers, first 2 and last 2: one per chunk on the end ranks, (12 − 4) / 2 / 2 = 2 on the
  // middle ones, handed out in virtual-stage order.
  w.layers = 12;
  s = pipeline(4, 2, false);
  s.first_stage_layers = 2;
  s.last_stage_layers = 2;
  REQUIRE(check_pipeline_split(w, s).ok());
  split = pipeline_split(w, s);
  CHECK(split[0][0].layers == 1);
  CHECK(split[1][0].layers == 2);
  CHECK(split[3][0].first_layer == 5);
  CHECK(split[0][1].first_layer == 6);
  CHECK(split[3][1].first_layer == 11);
  CHECK(split[3][1].layers == 1);
}

TEST_CASE("a split Megatron-Core would reject is an error that says why", "[model]") {
  const WorkloadSpec w = llama405b(126);
  CHECK(check_pipeline_split(w, pipeline(8, 8, false)).error().message ==
        "pp·vpp=64 does not divide layers=126");
  Strategy one = pipeline(8, 8, false);
  one.embedding_in_split = true;
  CHECK(check_pipeline_split(w, one).error().message == "pp·vpp=64 does not divide layers + embedding = 127");
  Strategy both = pipeline(8, 8, true);
  both.first_stage_layers = 14;
  CHECK(check_pipeline_split(w, both).error().message.find("cannot be combined") != std::string::npos);
  Strategy uneven = pipeline(8, 8, false);
  uneven.first_stage_layers = 12;
  CHECK(check_pipeline_split(w, uneven).error().message ==
        "first-stage-layers=12 is not a multiple of vpp=8");
  uneven.first_stage_layers = 16;
  CHECK_FALSE(check_pipeline_split(w, uneven).ok());  // 110 over 7 ranks × 8
  Strategy single = pipeline(1, 1, false);
  single.last_stage_layers = 4;
  CHECK_FALSE(check_pipeline_split(w, single).ok());
}

TEST_CASE("memory is the most loaded stage's: the one with more layers, its own in-flight micro-batches",
          "[model]") {
  // 6 layers over pp 2 with one on the first rank: 1F1B holds 2 micro-batches on stage 0 (1 layer) and 1 on
  // stage 1 (5 layers and the output layer's fp32 logits): stage 1 is the most loaded.
  const WorkloadSpec w = llama405b(6);
  const ClusterSpec c = cluster_preset("dgx-h100").value();
  const CostModel model(c);
  Strategy s;
  s.gpus = 16;
  s.tp = 8;
  s.pp = 2;
  s.sp = true;
  s.global_batch = 4;
  s.first_stage_layers = 1;
  const Strategy r = resolve_strategy(s, w, c).value();
  const double per_layer = model.activation_bytes_per_layer(w, r, 0);
  const double logits = 4.0 * 8192 * (16384 + 128256) / 8;
  const MemoryBreakdown m = model.memory_per_gpu(w, r);
  CHECK(m.stage == 1);
  CHECK(m.activations_bytes == Approx(5 * per_layer + logits));
  const auto split = pipeline_split(w, r);
  CHECK(model.stage_memory(w, r, split[0], 0).activations_bytes == Approx(2 * per_layer));
  CHECK(model.parameters_per_gpu(w, r) == Approx(model.stage_parameters(w, r, split[1])));
}

TEST_CASE("a bf16 gradient buffer takes 2 bytes a parameter, the step's fp32 copy 4 while it runs",
          "[model]") {
  const WorkloadSpec w = workload_preset("llama2-7b").value();
  const ClusterSpec c = cluster_preset("dgx-a100").value();
  const CostModel model(c);
  Strategy s;
  s.gpus = 8;
  s.global_batch = 8;
  s.zero = 1;
  const Strategy bf16 = resolve_strategy(s, w, c).value();
  const double p = model.parameters_per_gpu(w, bf16);
  const MemoryBreakdown m = model.memory_per_gpu(w, bf16);
  CHECK(m.weights_bytes == Approx(2 * p));
  CHECK(m.grads_bytes == Approx(2 * p));
  CHECK(m.optimizer_bytes == Approx(12 * p / 8));
  CHECK(m.step_bytes == Approx(4 * p / 8));
  s.grad_reduce_dtype = Precision::fp32;
  const MemoryBreakdown fp32 = model.memory_per_gpu(w, resolve_strategy(s, w, c).value());
  CHECK(fp32.grads_bytes == Approx(4 * p));
  CHECK(fp32.step_bytes == 0);
}

TEST_CASE("the H100 preset's budget is its usable memory less context, NCCL buffers and fragmentation",
          "[model]") {
  // 81559 MiB usable; reserve 0.75 GiB context + 128 connections × (0.5 + 4.6875 + 4) MiB = 1.1484 GiB +
  // 5 % of 79.647 GiB = 3.9824 GiB: 5.8808 GiB; budget 73.767 GiB.
  const GpuSpec gpu = cluster_preset("dgx-h100").value().gpu;
  CHECK(gpu.usable_memory_gib == Approx(79.6475).epsilon(1e-5));
  CHECK(gpu.memory_reserve_gib == Approx(0.75 + 1.1484375 + 0.05 * 81559.0 / 1024).epsilon(1e-12));
  CHECK(gpu.memory_budget_gib() == Approx(81559.0 / 1024 - gpu.memory_reserve_gib).epsilon(1e-12));
}

TEST_CASE("FP8 layers keep their GEMM inputs in one byte: 27sbh instead of 34sbh", "[model]") {
  // GPT-3 shape (MHA, GELU, f = 4h), tp 1, flash attention. bf16: replicated 10sbh + Q, K, V, projection
  // input 8sbh + fc1 output and fc2 input 16sbh = 34sbh. FP8: the QKV, fc1, projection and fc2 inputs take
  // one byte: 8sbh + 7sbh + 12sbh = 27sbh.
  const WorkloadSpec w = workload_preset("gpt3-175b").value();
  const ClusterSpec c = cluster_preset("dgx-h100").value();
  const CostModel model(c);
  Strategy s;
  s.gpus = 96;
  s.pp = 96;
  s.global_batch = 96;
  s.dropout = 0.1;  // the two dropout masks are in Korthikanti's 34sbh (without dropout: 32sbh, 25sbh)
  const double sbh = static_cast<double>(w.seq) * static_cast<double>(w.hidden);
  CHECK(model.activation_bytes_per_layer(w, resolve_strategy(s, w, c).value(), 0) == Approx(34 * sbh));
  s.precision = Precision::fp8;
  CHECK(model.activation_bytes_per_layer(w, resolve_strategy(s, w, c).value(), 0) == Approx(27 * sbh));
}
