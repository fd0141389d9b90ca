// The software stacks' elementwise kernels (docs/model.md "Software stack"): what eager PyTorch runs as a
// chain of kernels (RMSNorm, rotary embedding, the gated activation) against one fused kernel.
#include <optional>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/cost_model.h"
#include "model/presets.h"

using namespace lagom::model;

namespace {

// A copy: layer_steps returns a temporary.
std::optional<ComputeOp> find_op(const std::vector<Step>& steps, const std::string& name) {
  for (const Step& step : steps) {
    if (!step.is_comm && step.compute.name == name) return step.compute;
  }
  return std::nullopt;
}

ComputeOp op(const std::vector<Step>& steps, const std::string& name) {
  const std::optional<ComputeOp> found = find_op(steps, name);
  INFO("op " << name);
  REQUIRE(found);
  return *found;
}

Strategy one_gpu(const WorkloadSpec& w, const ClusterSpec& c, Stack stack) {
  Strategy s;
  s.gpus = 1;
  s.global_batch = 1;
  s.stack = stack;
  return resolve_strategy(s, w, c).value();
}

}  // namespace

TEST_CASE("eager PyTorch runs RMSNorm RoPE and SwiGLU as chains of kernels; fused stacks as one each",
          "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();  // RMSNorm, RoPE, SwiGLU; seq 8192
  REQUIRE(w.norm == NormType::rmsnorm);
  REQUIRE(w.rope);
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel eager(cluster, std::nullopt, Stack::pytorch_eager);
  const CostModel core(cluster);
  const Strategy se = one_gpu(w, cluster, Stack::pytorch_eager);
  const Strategy sc = one_gpu(w, cluster, Stack::megatron_core);
  const Strategy sx = one_gpu(w, cluster, Stack::pytorch_compile);
  const double tokens = 8192, h = 4096, qk = 4096 + 1024, f = 14336;
  const auto ef = eager.layer_steps(w, se, Phase::forward, 0);
  const auto eb = eager.layer_steps(w, se, Phase::backward, 0);
  const auto cf = core.layer_steps(w, sc, Phase::forward, 0);
  const auto cb = core.layer_steps(w, sc, Phase::backward, 0);

  // An op's forward and backward: bytes per element and kernels each way.
  auto check = [](const std::vector<Step>& fwd, const std::vector<Step>& bwd, const std::string& name,
                  double elements, double forward_bytes, int forward_launches, double backward_bytes,
                  int backward_launches) {
    INFO(name);
    CHECK(op(fwd, name).bytes == forward_bytes * elements);
    CHECK(op(fwd, name).launches == forward_launches);
    CHECK(op(bwd, name + ".bwd").bytes == backward_bytes * elements);
    CHECK(op(bwd, name + ".bwd").launches == backward_launches);
  };
  // RMSNorm: float, pow, mean, +eps, rsqrt, product, type_as, weight: 28 + 4e = 36 B per element, 8
  // kernels; its backward 80 + 9e = 98 B, 14 kernels. Fused: read 2, write 2; backward twice that.
  check(ef, eb, "attn.norm", tokens * h, 36.0, 8, 98.0, 14);
  check(cf, cb, "attn.norm", tokens * h, 4.0, 1, 8.0, 1);
  // RoPE on Q and K (4,096 + 1,024 per token): eager float, complex product, type_as, 20 B and 3 kernels a
  // tensor each way; fused read 2 write 2, one kernel a tensor, the backward the same bytes.
  check(ef, eb, "attn.rope", tokens * qk, 20.0, 6, 20.0, 6);
  check(cf, cb, "attn.rope", tokens * qk, 4.0, 2, 4.0, 2);
  // SwiGLU: silu then the product, 5e; backward 9e, 3 kernels. Fused: read gate and up, write: 3e, twice
  // back.
  check(ef, eb, "mlp.act", tokens * f, 10.0, 2, 18.0, 3);
  check(cf, cb, "mlp.act", tokens * f, 6.0, 1, 12.0, 1);

  // The final norm too, its launches in its price (made at creation).
  const ComputeOp final_norm = op(eager.head_steps(w, se, Phase::forward), "final.norm");
  CHECK(final_norm.bytes == 36.0 * tokens * h);
  CHECK(final_norm.launches == 8);
  CHECK(op(eager.head_steps(w, se, Phase::backward), "final.norm.bwd").bytes == 98.0 * tokens * h);

  // Memory-bound: an eager layer takes longer than a fused one; torch.compile prices as Megatron-Core.
  auto layer_us = [](const std::vector<Step>& steps) {
    double us = 0;
    for (const Step& step : steps)
      if (!step.is_comm) us += step.compute.time_us;
    return us;
  };
  CHECK(layer_us(ef) > 1.05 * layer_us(cf));
  const CostModel compile(cluster, std::nullopt, Stack::pytorch_compile);
  CHECK(layer_us(compile.layer_steps(w, sx, Phase::forward, 0)) == Approx(layer_us(cf)));
  CHECK(layer_us(compile.layer_steps(w, sx, Phase::backward, 0)) == Approx(layer_us(cb)));
}

TEST_CASE("LayerNorm and learned positions cost the same under every stack", "[model]") {
  const WorkloadSpec w = workload_preset("gpt2").value();  // LayerNorm, learned positions, GELU
  REQUIRE(w.norm == NormType::layernorm);
  REQUIRE_FALSE(w.rope);
  const ClusterSpec cluster = cluster_preset("dgx-a100").value();
  const CostModel eager(cluster, std::nullopt, Stack::pytorch_eager);
  const CostModel core(cluster);
  const auto ef = eager.layer_steps(w, one_gpu(w, cluster, Stack::pytorch_eager), Phase::forward, 0);
  const auto cf = core.layer_steps(w, one_gpu(w, cluster, Stack::megatron_core), Phase::forward, 0);
  CHECK_FALSE(find_op(ef, "attn.rope"));
  CHECK_FALSE(find_op(cf, "attn.rope"));
  for (const char* name : {"attn.norm", "mlp.norm", "mlp.act", "attn.residual"}) {
    INFO(name);
    CHECK(op(ef, name).bytes == op(cf, name).bytes);
    CHECK(op(ef, name).launches == op(cf, name).launches);
  }
}

TEST_CASE("Megatron-DeepSpeed's rotary embedding and SwiGLU are unfused torch ops", "[model]") {
  const WorkloadSpec w = workload_preset("llama2-7b").value();  // seq 4096, MHA, ffn 11008
  const ClusterSpec cluster = cluster_preset("dgx-a100").value();
  const CostModel ds(cluster, std::nullopt, Stack::megatron_deepspeed);
  const Strategy s = one_gpu(w, cluster, Stack::megatron_deepspeed);
  const auto f = ds.layer_steps(w, s, Phase::forward, 0);
  const auto b = ds.layer_steps(w, s, Phase::backward, 0);
  const double tokens = 4096, qk = 2.0 * 4096, ffn = 11008;
  // t·cos, neg, cat, ·sin, the sum, the pass-through cat: 12e and 6 kernels a tensor; backward 10e, 5.
  CHECK(op(f, "attn.rope").bytes == 24.0 * tokens * qk);
  CHECK(op(f, "attn.rope").launches == 12);
  CHECK(op(b, "attn.rope.bwd").bytes == 20.0 * tokens * qk);
  CHECK(op(b, "attn.rope.bwd").launches == 10);
  // Each kernel one dispatch of the stack's.
  CHECK(op(f, "attn.rope").time_us >= 12.0 * ds.op_launch_floor_us());
  CHECK(op(f, "mlp.act").bytes == 10.0 * tokens * ffn);
  // apex's fused RMSNorm: one kernel.
  CHECK(op(f, "attn.norm").bytes == 4.0 * tokens * 4096);
}

TEST_CASE("an eager stack's chains keep more activations than fused kernels", "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  const Strategy core = one_gpu(w, cluster, Stack::megatron_core);
  const Strategy eager = one_gpu(w, cluster, Stack::pytorch_eager);
  const double sb = 8192, h = 4096, f = 14336;
  // Two norms' fp32 copies (4 B an element each) and silu's output (2 B an element of f).
  CHECK(model.activation_bytes_per_layer(w, eager, 0) - model.activation_bytes_per_layer(w, core, 0) ==
        Approx(2.0 * 4.0 * sb * h + 2.0 * sb * f));
  Strategy compile = core;
  compile.stack = Stack::pytorch_compile;
  CHECK(model.activation_bytes_per_layer(w, compile, 0) == model.activation_bytes_per_layer(w, core, 0));
  // Under full recompute a layer keeps its input alone, whatever the stack.
  Strategy full_core = core, full_eager = eager;
  full_core.recompute = full_eager.recompute = Recompute::full;
  CHECK(model.activation_bytes_per_layer(w, full_eager, 0) ==
        model.activation_bytes_per_layer(w, full_core, 0));
}

TEST_CASE("a workload's norm and rotary embedding: presets, files and HuggingFace families", "[model]") {
  CHECK(workload_preset("t5-base").value().norm == NormType::rmsnorm);
  CHECK_FALSE(workload_preset("t5-base").value().rope);
  CHECK(workload_preset("phi-2").value().rope);
  CHECK(workload_preset("mpt-7b").value().norm == NormType::layernorm);
  CHECK_FALSE(workload_preset("gpt3-175b").value().rope);

  nlohmann::json file = nlohmann::json::parse(
      R"({"name": "m", "layers": 2, "hidden": 256, "heads": 4, "vocab": 1000, "seq": 128, "norm": "rmsnorm",
          "rope": true})");
  const WorkloadSpec parsed = parse_workload(file, "m.json").value();
  CHECK(parsed.norm == NormType::rmsnorm);
  CHECK(parsed.rope);
  CHECK(to_json(parsed).at("norm") == "rmsnorm");
  CHECK(to_json(parsed).at("rope") == true);
  CHECK(parse_workload(to_json(parsed), "round.json").value() == parsed);
  const WorkloadSpec plain =
      parse_workload(
          nlohmann::json::parse(
              R"({"name": "p", "layers": 2, "hidden": 256, "heads": 4, "vocab": 1000, "seq": 128})"),
          "p.json")
          .value();
  CHECK(plain.norm == NormType::layernorm);
  CHECK_FALSE(plain.rope);
  CHECK_FALSE(to_json(plain).contains("norm"));
  CHECK_FALSE(to_json(plain).contains("rope"));
  file["norm"] = "batchnorm";
  CHECK(parse_workload(file, "m.json").error().message ==
        "m.json: norm: 'batchnorm' is not one of layernorm|rmsnorm");

  auto hf = [](const char* family) {
    nlohmann::json c = nlohmann::json::parse(
        R"({"num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4, "intermediate_size": 1024,
            "num_key_value_heads": 4, "vocab_size": 1000, "seq": 128})");
    c["model_type"] = family;
    return parse_hf_config(c, "config.json").value();
  };
  CHECK(hf("llama").norm == NormType::rmsnorm);
  CHECK(hf("llama").rope);
  CHECK(hf("mistral").rope);
  CHECK(hf("gpt_neox").norm == NormType::layernorm);
  CHECK(hf("gpt_neox").rope);
  CHECK(hf("nemotron").norm == NormType::layernorm);
  nlohmann::json gpt2 = nlohmann::json::parse(R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 256,
      "n_head": 4, "vocab_size": 1000, "seq": 128})");
  CHECK(parse_hf_config(gpt2, "config.json").value().norm == NormType::layernorm);
  CHECK_FALSE(parse_hf_config(gpt2, "config.json").value().rope);
}

TEST_CASE("standard attention under eager PyTorch runs the softmax as a chain; compiled as one kernel",
          "[model]") {
  const WorkloadSpec w = workload_preset("gpt2").value();  // 12 heads, seq 1024: Megatron's kernel runs
  const ClusterSpec cluster = cluster_preset("dgx-a100").value();
  auto softmax = [&](Stack stack) {
    Strategy s;
    s.gpus = 1;
    s.global_batch = 4;
    s.micro_batch = 4;
    s.attention = Attention::standard;
    s.stack = stack;
    s = resolve_strategy(s, w, cluster).value();
    const CostModel model(cluster, std::nullopt, stack);
    return op(model.layer_steps(w, s, Phase::forward, 0), "attn.softmax");
  };
  const double scores = 4.0 * 12 * 1024 * 1024;
  // Scale, mask, fp32 softmax, cast back: 2·2 + 20 B per score, 4 kernels.
  CHECK(softmax(Stack::pytorch_eager).bytes == 24.0 * scores);
  CHECK(softmax(Stack::pytorch_eager).launches == 4);
  CHECK(softmax(Stack::pytorch_compile).bytes == 4.0 * scores);
  CHECK(softmax(Stack::megatron_core).bytes == 4.0 * scores);
  // fp32 activations: Megatron's kernel needs 16-bit input and Megatron-Core runs its chain (scale, mask,
  // softmax: 4e); Inductor fuses whatever the dtype (read 4, write 4).
  auto fp32_softmax = [&](Stack stack) {
    Strategy s;
    s.gpus = 1;
    s.global_batch = 1;
    s.attention = Attention::standard;
    s.precision = Precision::fp32;
    s.stack = stack;
    s = resolve_strategy(s, w, cluster).value();
    const CostModel model(cluster, std::nullopt, stack);
    return op(model.layer_steps(w, s, Phase::forward, 0), "attn.softmax");
  };
  const double one = 12.0 * 1024 * 1024;
  CHECK(fp32_softmax(Stack::megatron_core).bytes == 16.0 * one);
  CHECK(fp32_softmax(Stack::megatron_core).launches == 2);
  CHECK(fp32_softmax(Stack::pytorch_compile).bytes == 8.0 * one);
  CHECK(fp32_softmax(Stack::pytorch_compile).launches == 1);
}
