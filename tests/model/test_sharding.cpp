// The gradient path of sharded data parallelism (model::sharded_gradient_path, docs/model.md "The gradient
// path of sharded data parallelism"): the bytes each library's gradient moves through HBM on its way into
// the reduce-scatter, counted from its source, and where the cost model prices them.
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/presets.h"
#include "model/specs.h"

using namespace lagom::model;

namespace {

Strategy sharded(int zero, ShardingLibrary sharding, std::optional<Precision> reduce) {
  Strategy s;
  s.gpus = 16;
  s.dp = 16;
  s.global_batch = 64;
  s.zero = zero;
  s.sharding = sharding;
  s.grad_reduce_dtype = reduce;
  return s;
}

double bytes_of(const std::vector<Step>& steps, const std::string& name) {
  for (const Step& step : steps) {
    if (!step.is_comm && step.compute.name == name) return step.compute.bytes;
  }
  return -1;
}

}  // namespace

TEST_CASE("each sharding library's gradient path in bytes per parameter and kernels", "[model]") {
  auto path = [](ShardingLibrary sharding, std::optional<Precision> reduce) {
    return sharded_gradient_path(sharded(3, sharding, reduce));
  };
  // FSDP1, bf16 parameters: the flat gradient's concatenation (2 + 2), the cast to fp32 (2 + 4), the
  // pre-divide (4 + 4): 18 B in 3 kernels; reduced in bf16, no cast: 8 B in 2. `auto` is FSDP1's.
  CHECK(path(ShardingLibrary::fsdp1, Precision::fp32).bytes_per_parameter == 18.0);
  CHECK(path(ShardingLibrary::fsdp1, Precision::fp32).kernels == 3);
  CHECK(path(ShardingLibrary::fsdp1, std::nullopt).bytes_per_parameter == 8.0);
  CHECK(path(ShardingLibrary::fsdp1, std::nullopt).kernels == 2);
  CHECK(path(ShardingLibrary::automatic, Precision::fp32).bytes_per_parameter == 18.0);
  // DeepSpeed's ZeRO-3 adds the concatenation of the padded partitions: 26 B, 12 B reduced in bf16.
  CHECK(path(ShardingLibrary::deepspeed, Precision::fp32).bytes_per_parameter == 26.0);
  CHECK(path(ShardingLibrary::deepspeed, Precision::fp32).kernels == 4);
  CHECK(path(ShardingLibrary::deepspeed, std::nullopt).bytes_per_parameter == 12.0);
  // FSDP2: one copy into the reduce-scatter input, cast on the way (2 + 4); bf16 2 + 2.
  CHECK(path(ShardingLibrary::fsdp2, Precision::fp32).bytes_per_parameter == 6.0);
  CHECK(path(ShardingLibrary::fsdp2, Precision::fp32).kernels == 1);
  CHECK(path(ShardingLibrary::fsdp2, std::nullopt).bytes_per_parameter == 4.0);
  // fp16 is pre-divided (NCCL averages only fp32 and bf16 for FSDP2).
  Strategy fp16 = sharded(3, ShardingLibrary::fsdp2, std::nullopt);
  fp16.precision = Precision::fp16;
  CHECK(sharded_gradient_path(fp16).bytes_per_parameter == 8.0);
  CHECK(sharded_gradient_path(fp16).kernels == 2);

  // None where no layer's gradient is reduce-scattered in every backward: zero 1, DeepSpeed's zero 2, or
  // one shard rank. FSDP's zero 2 has one.
  CHECK(sharded_gradient_path(sharded(1, ShardingLibrary::automatic, Precision::fp32)).kernels == 0);
  Strategy zero2 = sharded(2, ShardingLibrary::automatic, Precision::fp32);
  zero2.zero2 = Zero2::deepspeed;
  CHECK(sharded_gradient_path(zero2).kernels == 0);
  zero2.zero2 = Zero2::fsdp;
  CHECK(sharded_gradient_path(zero2).bytes_per_parameter == 18.0);
  Strategy one = sharded(3, ShardingLibrary::fsdp1, Precision::fp32);
  one.gpus = one.dp = 1;
  CHECK(sharded_gradient_path(one).kernels == 0);
}

TEST_CASE("the gradient path ends every layer's backward and the embedding's and is priced at HBM speed",
          "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();  // untied embeddings, vocab 128,256
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster, std::nullopt, Stack::pytorch_eager);
  Strategy s = sharded(3, ShardingLibrary::fsdp1, Precision::fp32);
  s.stack = Stack::pytorch_eager;
  s = resolve_strategy(s, w, cluster).value();
  const double layer = model.layer_parameters(w, s, 0);
  // Llama 3 8B's layer: 2·4096² + 2·4096·1024 attention, 3·4096·14336 SwiGLU, 4·4096 norms.
  CHECK(layer == 2.0 * 4096 * 4096 + 2.0 * 4096 * 1024 + 3.0 * 4096 * 14336 + 4.0 * 4096);
  const auto backward = model.layer_steps(w, s, Phase::backward, 0);
  REQUIRE_FALSE(backward.empty());
  CHECK(backward.back().compute.name == "grad.path");
  CHECK(backward.back().compute.bytes == 18.0 * layer);
  CHECK(backward.back().compute.launches == 3);
  // Memory-bound: its bytes at the cluster's streaming rate.
  CHECK(backward.back().compute.time_us == Approx(18.0 * layer / (model.memory_bw_GBps() * 1e3)));
  CHECK(bytes_of(model.layer_steps(w, s, Phase::forward, 0), "grad.path") < 0);
  CHECK(bytes_of(model.layer_steps(w, s, Phase::recompute, 0), "grad.path") < 0);
  // FSDP wraps the embedding and the output layer in the root module: one stage holds both matrices.
  const double matrix = 128256.0 * 4096;
  CHECK(bytes_of(model.embedding_steps(w, s, Phase::backward), "embedding.grad.path") == 18.0 * 2 * matrix);
  CHECK(bytes_of(model.head_steps(w, s, Phase::backward), "logits.grad.path") < 0);

  // Zero 1 has none; the layer's backward is otherwise the same.
  Strategy zero1 = s;
  zero1.zero = 1;
  const auto plain = model.layer_steps(w, zero1, Phase::backward, 0);
  CHECK(bytes_of(plain, "grad.path") < 0);
  CHECK(plain.size() + 1 == backward.size());
}

TEST_CASE("sharding deepspeed contradicts FSDP's zero 2", "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  Strategy s = sharded(2, ShardingLibrary::deepspeed, std::nullopt);
  s.zero2 = Zero2::fsdp;
  const auto r = resolve_strategy(s, w, cluster_preset("dgx-h100").value());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        "sharding deepspeed: zero2 fsdp is FSDP's zero 2 (DeepSpeed's stage 2 gathers no layers)");
}
