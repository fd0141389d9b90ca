// The framework settings' JSON forms (documents/framework.h): torch's keyword arguments and the DeepSpeed
// config fragment, in the frameworks' units.
#include <catch2/catch.hpp>

#include "documents/framework.h"
#include "model/presets.h"

using namespace lagom;

namespace {
const model::OverlapMethod k_none{model::OverlapMethodKind::none, 1};
}  // namespace

TEST_CASE("torch and DeepSpeed settings say the wrapper, the bucket and the prefetch in their units",
          "[documents]") {
  model::Strategy s;
  s.gpus = 16, s.dp = 16, s.zero = 0, s.global_batch = 64, s.micro_batch = 2;
  const search::FrameworkKnobs knobs{k_none, 50, 2, simulator::IssuePriority::as_scheduled};
  const auto ddp = documents::torch_settings(s, knobs);
  CHECK(ddp.at("wrapper") == "ddp");
  CHECK(ddp.at("ddp").at("bucket_cap_mb").get<double>() == Approx(50e6 / (1 << 20)));
  s.zero = 3;
  const auto fsdp = documents::torch_settings(s, knobs);
  CHECK(fsdp.at("wrapper") == "fully_shard");
  CHECK(fsdp.at("fully_shard").at("reshard_after_forward") == true);
  CHECK(fsdp.at("ddp").empty());  // ZeRO-3 has no gradient buckets
  CHECK(fsdp.at("prefetch_layers") == 2);
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  const auto ds = documents::deepspeed_config(w, s, knobs);
  CHECK(ds.at("zero_optimization").at("stage") == 3);
  CHECK(ds.at("train_batch_size") == 64);
  CHECK(ds.at("train_micro_batch_size_per_gpu") == 2);
  CHECK(ds.at("gradient_accumulation_steps") == 2);  // 64 / (2 · 16)
  // AutoTP: DeepSpeed 0.16.4 counts every rank in its world size (no mpu when its config is built:
  // deepspeed/__init__.py:179, runtime/config.py:730), so the batch is written in its count, tp 2 × 64,
  // with the accumulation steps Lagom priced, 64 / (2 · 8) = 4, given outright (config.py:945, :931).
  model::Strategy tp = s;
  tp.zero = 1, tp.tp = 2, tp.dp = 8;
  const auto autotp = documents::deepspeed_config(w, tp, knobs);
  CHECK(autotp.at("gradient_accumulation_steps") == 4);
  CHECK(autotp.at("train_batch_size") == 128);
  CHECK(autotp.at("train_batch_size").get<long>() ==
        autotp.at("train_micro_batch_size_per_gpu").get<long>() *
            autotp.at("gradient_accumulation_steps").get<long>() * 16);
  CHECK(autotp.at("tensor_parallel").at("autotp_size") == 2);
  CHECK(!autotp.contains("pipeline"));  // no pipeline
  // A pipeline's transfers as priced: split over TP (DeepSpeed's default) or whole, both written.
  model::Strategy pipe = tp;
  pipe.pp = 2, pipe.dp = 4;
  pipe.pp_tp_split = model::PipelineSplit::on;
  CHECK(documents::deepspeed_config(w, pipe, knobs).at("pipeline") ==
        nlohmann::json{{"pipe_partitioned", true}, {"grad_partitioned", true}});
  pipe.pp_tp_split = model::PipelineSplit::off;
  CHECK(documents::deepspeed_config(w, pipe, knobs).at("pipeline") ==
        nlohmann::json{{"pipe_partitioned", false}, {"grad_partitioned", false}});
  // Two layers of llama3-8b (hidden 4096, 8 KV heads of 128, FFN 14336 SwiGLU): 2 · 218,120,192 (attention
  // 41,943,040, norms 16,384, FFN 176,160,768).
  CHECK(ds.at("zero_optimization").at("stage3_prefetch_bucket_size").get<double>() ==
        Approx(2 * 218120192.0));
}

TEST_CASE("torch's settings name the 2-D mesh of hybrid sharding", "[documents]") {
  // 16 GPUs, ZeRO-3 within shard groups of 4 DP ranks, 4 replicas: fully_shard(mesh=(4, 4)).
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  model::ClusterSpec c = model::cluster_preset("dgx-h100").value();
  c.nodes = 2;
  model::Strategy s;
  s.gpus = 16, s.zero = 3, s.dp_shard = 4, s.global_batch = 16;
  const model::Strategy hsdp = model::resolve_strategy(s, w, c).value();
  const auto torch = documents::torch_settings(hsdp, {});
  CHECK(torch.at("fully_shard").at("mesh").at("shape") == nlohmann::json::array({4, 4}));
  CHECK(torch.at("fully_shard").at("mesh").at("dim_names") ==
        nlohmann::json::array({"dp_replicate", "dp_shard"}));
}
