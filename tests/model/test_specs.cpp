#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/physical_constants.h"
#include "model/presets.h"
#include "model/specs.h"
#include "model/strategy_json.h"

using namespace lagom::model;

TEST_CASE("every preset round-trips through its spec file format", "[model]") {
  for (const ClusterSpec& c : cluster_presets()) {
    INFO(c.name);
    CHECK(parse_cluster(nlohmann::json::parse(to_json(c).dump()), c.name + ".json").value() == c);
  }
  for (const WorkloadSpec& w : workload_presets()) {
    INFO(w.name);
    CHECK(parse_workload(nlohmann::json::parse(to_json(w).dump()), w.name + ".json").value() == w);
  }
  CHECK(cluster_preset_names().size() == 9);
  CHECK(cluster_preset_names().back() == "localhost");
  CHECK(workload_preset_names().size() == 17);
}

TEST_CASE("preset datasheet numbers are those of docs/model.md", "[model]") {
  const ClusterSpec a100 = cluster_preset("dgx-a100").value();
  CHECK(a100.gpu.bf16_tflops == 312);
  CHECK(a100.gpu.hbm_GBps == 2039);
  CHECK(a100.gpu.sms == 108);
  CHECK(a100.intra.bw_GBps == 300);
  CHECK(a100.nic.count == 8);
  CHECK(a100.nic.gbit == 200);
  // DGX A100 320GB: the 80 GB part's compute, fabric and NCCL view, with HBM2 at 1555 GB/s and 40 GB.
  const ClusterSpec a100_40 = cluster_preset("dgx-a100-40gb").value();
  CHECK(a100_40.gpu.hbm_GBps == 1555);
  CHECK(a100_40.gpu.memory_gib == 40);
  CHECK(a100_40.gpu.usable_memory_gib == 40);
  CHECK(a100_40.gpu.bf16_tflops == a100.gpu.bf16_tflops);
  CHECK(a100_40.gpu.sms == a100.gpu.sms);
  CHECK(a100_40.nic.count == a100.nic.count);
  CHECK(a100_40.gpu.memory_reserve_gib < a100.gpu.memory_reserve_gib);
  const ClusterSpec h200 = cluster_preset("dgx-h200").value();
  CHECK(h200.gpu.hbm_GBps == 4800);
  CHECK(h200.gpu.fp8_tflops == 1979);
  const WorkloadSpec ds = workload_preset("deepseek-moe-16b").value();
  REQUIRE(ds.moe);
  CHECK(ds.moe->experts == 64);
  CHECK(ds.moe->top_k == 6);
  CHECK(ds.moe->shared_experts == 2);
  CHECK(ds.moe->first_dense_layers == 1);
  CHECK(ds.ffn_hidden == 10944);
  // Untied output layer (HF tie_word_embeddings false): 8.03 B as Meta states.
  CHECK(workload_preset("llama3-8b").value().parameters() == Approx(8.03e9).epsilon(0.005));
  CHECK(workload_preset("llama2-7b").value().parameters() == Approx(6.74e9).epsilon(0.005));
  CHECK(workload_preset("gpt3-175b").value().parameters() == Approx(175e9).epsilon(0.01));
}

TEST_CASE("a bad spec names the file, the field and the problem", "[model]") {
  auto bad = nlohmann::json::parse(R"({"layers": 0, "hidden": 64, "heads": 4, "vocab": 100, "seq": 16})");
  CHECK(parse_workload(bad, "model.json").error().message ==
        "model.json: layers: must be a positive integer");
  bad["layers"] = 2;
  bad["hidden"] = "big";
  CHECK(parse_workload(bad, "model.json").error().message ==
        "model.json: hidden: must be a positive integer");
  bad["hidden"] = 64;
  bad["extra"] = 1;
  CHECK(parse_workload(bad, "model.json").error().message == "model.json: extra: unknown field");
  auto cluster = to_json(cluster_preset("dgx-a100").value());
  cluster["gpu"]["sms"] = -3;
  CHECK(parse_cluster(cluster, "c.json").error().message == "c.json: gpu.sms: must be a positive integer");
  cluster["gpu"]["sms"] = 108;
  cluster["intra"]["kind"] = "carrier-pigeon";
  CHECK(parse_cluster(cluster, "c.json").error().message ==
        "c.json: intra.kind: 'carrier-pigeon' is not one of nvswitch|nvlink_pairs|pcie|shm");
}

TEST_CASE("a cluster file without issue 15's fields parses with their documented defaults", "[model]") {
  // The shape of a file written before them (tests/data/vtrain/cluster-vtrain-a100.json, less its
  // nccl_channels): each new field takes the default docs/model.md states.
  const auto old = nlohmann::json::parse(R"({"name": "old", "gpus_per_node": 8, "collective_launch_us": 30,
      "gpu": {"name": "A100", "fp16_tflops": 312, "fp32_tflops": 19.5, "hbm_GBps": 2039, "memory_gib": 80,
              "sms": 108, "sm_arch": 80},
      "intra": {"kind": "nvswitch", "bw_GBps": 300, "latency_us": 3.4},
      "nic": {"count": 4, "gbit": 200, "latency_us": 14}})");
  const ClusterSpec c = parse_cluster(old, "old.json").value();
  CHECK(c.nccl_channels == 0);
  CHECK(c.nccl_version.empty());  // names none: NCCL 2.28.9, the default
  CHECK(c.nvls);
  CHECK(c.cpu == CpuVendor::intel);
  CHECK(c.gpus_per_process == 1);
  CHECK(c.gpu.net_channel_GBps == 0);
  CHECK(c.gpu.pcie_gen == 0);
  CHECK(c.nic.pcie_gen == 0);
  CHECK(c.nic.connection_GBps == 0);
  CHECK(c.nic.call_us_per_channel == 0);
  auto bad = old;
  bad["nccl_version"] = "two";
  CHECK(parse_cluster(bad, "c.json").error().message ==
        "c.json: nccl_version: 'two' is not a version such as 2.28.9");
  bad = old;
  bad["cpu"] = "arm";
  CHECK(parse_cluster(bad, "c.json").error().message == "c.json: cpu: 'arm' is not one of intel|amd");
  bad = old;
  bad["nic"]["pcie_gen"] = 2;
  CHECK(parse_cluster(bad, "c.json").error().message == "c.json: nic.pcie_gen: must be 0 (derive) or 3..6");
  CHECK(parse_nccl_version("2.26.2") == NcclVersion{2, 26, 2});
  CHECK(parse_nccl_version("2.28") == NcclVersion{2, 28, 0});
  CHECK_FALSE(parse_nccl_version("2.28.9.1"));
}

TEST_CASE("HuggingFace configs of GPT-2, LLaMA, Mixtral and OLMoE parse", "[model]") {
  auto gpt2 = nlohmann::json::parse(R"({"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12,
      "n_inner": null, "n_positions": 1024, "vocab_size": 50257, "activation_function": "gelu_new",
      "seq": 1024})");
  const WorkloadSpec g = parse_hf_config(gpt2, "config.json").value();
  CHECK(g.layers == 12);
  CHECK(g.ffn_hidden == 3072);
  CHECK(g.ffn_type == FfnType::gelu);
  auto llama = nlohmann::json::parse(R"({"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
      "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "hidden_act": "silu",
      "max_position_embeddings": 8192, "vocab_size": 128256, "seq": 8192})");
  const WorkloadSpec l = parse_workload_any(llama, "config.json").value();
  const WorkloadSpec preset = workload_preset("llama3-8b").value();
  CHECK(l.kv_heads == 8);
  CHECK(l.ffn_type == FfnType::swiglu);
  CHECK(l.parameters() == preset.parameters());
  auto mixtral = llama;
  mixtral["model_type"] = "mixtral";
  mixtral["num_local_experts"] = 8;
  mixtral["num_experts_per_tok"] = 2;
  const WorkloadSpec m = parse_hf_config(mixtral, "config.json").value();
  REQUIRE(m.moe);
  CHECK(m.moe->experts == 8);
  CHECK(m.moe->expert_ffn_hidden == 14336);
  auto olmoe = nlohmann::json::parse(R"({"model_type": "olmoe", "num_hidden_layers": 16, "hidden_size": 2048,
      "num_attention_heads": 16, "intermediate_size": 1024, "hidden_act": "silu", "num_experts": 64,
      "num_experts_per_tok": 8, "max_position_embeddings": 4096, "vocab_size": 50304, "seq": 4096})");
  const WorkloadSpec o = parse_hf_config(olmoe, "config.json").value();
  REQUIRE(o.moe);
  CHECK(o.moe->experts == 64);
  CHECK(o.moe->top_k == 8);
  // Absent, a key is read at LlamaConfig's default (32 layers); null is no value, and no default replaces it.
  auto absent = llama;
  absent.erase("num_hidden_layers");
  CHECK(parse_hf_config(absent, "config.json").value().layers == 32);
  auto broken = llama;
  broken["num_hidden_layers"] = nullptr;
  CHECK(parse_hf_config(broken, "config.json").error().message == "config.json: num_hidden_layers: required");
}

TEST_CASE("a strategy must divide the model and the GPUs", "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec c = cluster_preset("dgx-a100").value();
  Strategy s;
  s.gpus = 8;
  s.tp = 3;
  s.global_batch = 8;
  CHECK(resolve_strategy(s, w, c).error().message == "gpus 8 is not a multiple of tp·pp·cp (3·1·1 = 3)");
  s.gpus = 24;
  CHECK(resolve_strategy(s, w, c).error().message == "tp=3 does not divide heads=32");
  s.tp = 1;
  s.gpus = 1000;
  s.dp = 8;
  CHECK(resolve_strategy(s, w, c).error().message == "gpus 1000 is not tp·pp·dp·cp (1·1·8·1 = 8)");
  s.gpus = 8;
  s.dp = 0;
  s.ep = 2;
  CHECK(resolve_strategy(s, w, c).error().message == "ep=2 needs a MoE model (llama3-8b has no experts)");
  s.ep = 1;
  s.global_batch = 0;
  CHECK(resolve_strategy(s, w, c).error().message ==
        "global-batch: required (the workload has no global_batch)");
  s.global_batch = 12;
  CHECK(resolve_strategy(s, w, c).error().message == "global-batch=12 is not a multiple of dp·micro-batch=8");
  s.global_batch = 16;
  s.precision = Precision::fp8;
  CHECK(resolve_strategy(s, w, c).error().message == "precision fp8: not supported by A100-SXM4-80GB");
  s.precision = Precision::bf16;
  const Strategy ok = resolve_strategy(s, w, c).value();
  CHECK(ok.dp == 8);
  CHECK(ok.micro_batches() == 2);
}

TEST_CASE("the compute efficiencies are cluster fields calibrate can set, by architecture when 0",
          "[model]") {
  ClusterSpec h100 = cluster_preset("dgx-h100").value();
  const PhysicalConstant* fp8 = find_physical_constant("gpu.gemm_fraction_fp8");
  REQUIRE(fp8 != nullptr);
  CHECK(fp8->get(h100) == 0.533);  // sm90's default
  fp8->set(h100, 0.6);
  CHECK(h100.gpu.gemm_fraction_fp8 == 0.6);
  CHECK(resolved_gemm_fraction(h100.gpu, Precision::fp8) == 0.6);
  CHECK(resolved_gemm_fraction(h100.gpu, Precision::bf16) == 0.592);
  // The field travels through the cluster JSON.
  const ClusterSpec back = parse_cluster(to_json(h100), "h100.json").value();
  CHECK(back.gpu.gemm_fraction_fp8 == 0.6);
  const ClusterSpec a100 = cluster_preset("dgx-a100").value();
  for (const char* key : {"gpu.gemm_fraction_16", "gpu.gemm_fraction_32", "gpu.hbm_efficiency",
                          "gpu.attention_fwd_fraction", "gpu.attention_bwd_fraction", "kernel_launch_us"}) {
    INFO(key);
    const PhysicalConstant* c = find_physical_constant(key);
    REQUIRE(c != nullptr);
    CHECK(c->get(a100) >= c->min);
    CHECK(c->get(a100) <= c->max);
  }
  nlohmann::json bad = to_json(a100);
  bad["gpu"]["hbm_efficiency"] = 1.5;
  const auto parsed = parse_cluster(bad, "bad.json");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().message.find("hbm_efficiency") != std::string::npos);
}

TEST_CASE(
    "the software stack bounds short ops and collective calls by its host costs, above the cluster's floors",
    "[model]") {
  const ClusterSpec cluster = cluster_preset("dgx-a100").value();
  const CostModel core(cluster);
  const CostModel eager(cluster, std::nullopt, Stack::megatron_deepspeed);
  // megatron-core adds nothing to the machine's floors; megatron-deepspeed's costs are above them.
  CHECK(core.op_launch_floor_us() == cluster.kernel_launch_us);
  CHECK(core.collective_call_floor_us() == cluster.collective_launch_us);
  CHECK(eager.op_launch_floor_us() == stack_costs(Stack::megatron_deepspeed).op_dispatch_us);
  CHECK(eager.collective_call_floor_us() == stack_costs(Stack::megatron_deepspeed).collective_call_us);
  CHECK(eager.op_launch_floor_us() > cluster.kernel_launch_us);
  // A tiny op takes the floor; a large GEMM is unchanged (the host runs ahead of it).
  const GemmShape tiny{64, 64, 64, 1};
  const GemmShape large{8192, 8192, 8192, 1};
  CHECK(eager.gemm_time_us(tiny, Precision::bf16) == Approx(eager.op_launch_floor_us()));
  CHECK(eager.gemm_time_us(large, Precision::bf16) == Approx(core.gemm_time_us(large, Precision::bf16)));
  // A machine whose own floor is above the stack's keeps its floor.
  ClusterSpec slow = cluster;
  slow.kernel_launch_us = 200;
  CHECK(CostModel(slow, std::nullopt, Stack::megatron_deepspeed).op_launch_floor_us() == 200);
}

TEST_CASE(
    "the stack is a strategy knob: read from JSON by name, the default megatron-core, a bad name refused",
    "[model]") {
  Strategy s;
  CHECK(s.stack == Stack::megatron_core);
  s.stack = Stack::megatron_deepspeed;
  const auto j = to_json(s);
  CHECK(j.at("stack") == "megatron-deepspeed");
  CHECK(parse_strategy(j, "s.json").value().stack == Stack::megatron_deepspeed);
  auto bad = j;
  bad["stack"] = "megatron";
  const auto r = parse_strategy(bad, "s.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("megatron-core") != std::string::npos);
}

TEST_CASE("Megatron-DeepSpeed sends a TP rank's share of a pipeline transfer; Megatron-Core the whole tensor",
          "[model]") {
  const CostModel model(cluster_preset("dgx-a100").value());
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  Strategy s;
  s.tp = 4;
  s.pp = 2;
  s.micro_batch = 2;
  const double whole = 2.0 * w.seq * w.hidden * 2;  // micro-batch × seq × hidden × 2 bytes
  s.stack = Stack::megatron_core;
  CHECK_FALSE(pipeline_splits_over_tp(s));
  CHECK(model.pp_message_bytes(w, s) == Approx(whole));
  s.stack = Stack::megatron_deepspeed;
  CHECK(pipeline_splits_over_tp(s));
  CHECK(model.pp_message_bytes(w, s) == Approx(whole / 4));
  // Under sequence parallelism both send the share, and nothing is gathered after the receive.
  s.sp = true;
  CHECK_FALSE(pipeline_splits_over_tp(s));
  CHECK(model.pp_message_bytes(w, s) == Approx(whole / 4));
  s.stack = Stack::megatron_core;
  CHECK(model.pp_message_bytes(w, s) == Approx(whole / 4));
  // Without TP there is nothing to split.
  s.sp = false;
  s.tp = 1;
  s.stack = Stack::megatron_deepspeed;
  CHECK_FALSE(pipeline_splits_over_tp(s));
}
