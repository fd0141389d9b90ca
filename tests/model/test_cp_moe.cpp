// Context parallelism's communication types and MoE as Megatron-Core runs it: the steps of one layer, with
// numbers derived by hand (docs/validation-settings.md "Ring-attention (CP p2p) step" and "MoE as run").
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/groups.h"
#include "model/presets.h"

using namespace lagom::model;

namespace {

WorkloadSpec grok1() {
  std::ifstream in(std::string(LAGOM_TEST_DATA_DIR) + "/validate/models/grok1-314b.json");
  std::stringstream text;
  text << in.rdbuf();
  return parse_workload(nlohmann::json::parse(text.str()), "grok1-314b.json").value();
}

std::vector<Step> find_all(const std::vector<Step>& steps, const std::string& prefix) {
  std::vector<Step> out;
  for (const Step& step : steps) {
    const std::string& name = step.is_comm ? step.comm.name : step.compute.name;
    if (name.starts_with(prefix)) out.push_back(step);
  }
  return out;
}

double attention_flops(const std::vector<Step>& steps) {
  double flops = 0;
  for (const Step& step : steps) {
    if (!step.is_comm && step.compute.kind == OpKind::attention) flops += step.compute.flops;
  }
  return flops;
}

// Grok-1's 512-GPU row: tp 4, pp 8, cp 2, ep 8 (expert tp 4), seq 8192, capacity 1.0 with padding.
Strategy grok_512(const WorkloadSpec& w, const ClusterSpec& cluster, bool grouped) {
  Strategy s;
  s.gpus = 512;
  s.tp = 4;
  s.pp = 8;
  s.cp = 2;
  s.ep = 8;
  s.sp = true;
  s.global_batch = 1024;
  s.cp_comm = CpCommType::p2p;
  s.moe_capacity_factor = 1.0;
  s.moe_pad_to_capacity = true;
  s.moe_grouped_gemm = grouped;
  return resolve_strategy(s, w, cluster).value();
}

}  // namespace

TEST_CASE("the CP ring sends one rank's K and V per step and does the Ulysses attention FLOPs", "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  Strategy s;
  s.gpus = 8;
  s.cp = 2;
  s.global_batch = 4;
  s.cp_comm = CpCommType::p2p;
  const Strategy ring = resolve_strategy(s, w, cluster).value();
  s.cp_comm = CpCommType::a2a;
  const Strategy ulysses = resolve_strategy(s, w, cluster).value();
  const auto steps = model.layer_steps(w, ring, Phase::forward, 0);
  const auto exchange = find_all(steps, "attn.cp_ring");
  REQUIRE(exchange.size() == 1);
  CHECK(exchange[0].comm.collective == Collective::sendrecv);
  CHECK(exchange[0].comm.group == Group::cp);
  // K and V of 4096 tokens × 8 kv heads × 128, BF16: 2 · 4096 · 1024 · 2 B.
  CHECK(exchange[0].comm.bytes == 16777216.0);
  CHECK(find_all(steps, "attn.cp_alltoall").empty());
  // The same attention FLOPs as Ulysses: 32 heads × 4096 queries × 8192 keys × 128 × 4 in model FLOPs; the
  // causal kernel executes (n + 1)/(2n) of the 128-row score blocks, n = 8192/128 = 64: 65/128 of them.
  double model_flops = 0;
  for (const Step& step : steps) {
    if (!step.is_comm && step.compute.kind == OpKind::attention) model_flops += step.compute.model_flops;
  }
  CHECK(model_flops == Approx(4.0 * 32 * 4096 * 8192 * 128));
  CHECK(attention_flops(steps) == Approx(4.0 * 32 * 4096 * 8192 * 128 * 65.0 / 128.0));
  CHECK(attention_flops(steps) == Approx(attention_flops(model.layer_steps(w, ulysses, Phase::forward, 0))));
  // One attention kernel per step: a 4096 × 4096 block over 32 heads (Q·K and P·V).
  const auto attention = find_all(steps, "attn.attention");
  REQUIRE(attention.size() == 1);
  CHECK(attention[0].compute.gemm.m == 4096);
  CHECK(attention[0].compute.gemm.n == 4096);
  CHECK(attention[0].compute.gemm.batch == 64);
  // The backward exchanges too (K/V and dK/dV), right before the attention's backward.
  const auto backward = model.layer_steps(w, ring, Phase::backward, 0);
  for (std::size_t i = 0; i + 1 < backward.size(); ++i) {
    if (backward[i].is_comm && backward[i].comm.name.starts_with("attn.cp_ring")) {
      CHECK(backward[i + 1].compute.kind == OpKind::attention);
    }
  }
  CHECK(find_all(backward, "attn.cp_ring").size() == 1);
}

TEST_CASE("the CP all-gather gathers K and V forward, again backward, and reduce-scatters dK and dV",
          "[model]") {
  const WorkloadSpec w = workload_preset("llama3-8b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  Strategy s;
  s.gpus = 8;
  s.cp = 4;
  s.global_batch = 2;
  s.cp_comm = CpCommType::allgather;
  s = resolve_strategy(s, w, cluster).value();
  auto count = [](const std::vector<Step>& steps, Collective c) {
    int n = 0;
    for (const Step& step : steps)
      n += step.is_comm && step.comm.group == Group::cp && step.comm.collective == c;
    return n;
  };
  const auto forward = model.layer_steps(w, s, Phase::forward, 0);
  CHECK(count(forward, Collective::allgather) == 2);
  // K of 4 ranks × 2048 tokens × 1024, BF16 (the gathered size).
  CHECK(find_all(forward, "attn.cp_allgather_k")[0].comm.bytes == 4.0 * 2048 * 1024 * 2);
  const auto backward = model.layer_steps(w, s, Phase::backward, 0);
  CHECK(count(backward, Collective::allgather) == 2);
  CHECK(count(backward, Collective::reducescatter) == 2);
}

TEST_CASE("strategy checks of the CP communication types and MoE settings", "[model]") {
  const WorkloadSpec llama = workload_preset("llama3-8b").value();
  const WorkloadSpec mixtral = workload_preset("mixtral-8x7b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  Strategy s;
  s.gpus = 8;
  s.cp = 2;
  s.global_batch = 4;
  s.cp_comm = CpCommType::a2a_p2p;
  CHECK_FALSE(resolve_strategy(s, llama, cluster).ok());
  s.cp_comm = CpCommType::p2p;
  s.attention = Attention::standard;
  CHECK_FALSE(resolve_strategy(s, llama, cluster).ok());
  Strategy m;
  m.gpus = 8;
  m.ep = 8;
  m.global_batch = 8;
  m.moe_pad_to_capacity = true;  // needs a capacity factor
  CHECK_FALSE(resolve_strategy(m, mixtral, cluster).ok());
  m.moe_pad_to_capacity = false;
  m.moe_capacity_factor = 1.0;
  m.moe_dispatcher = MoeDispatcher::allgather;  // capacity works with alltoall only
  CHECK_FALSE(resolve_strategy(m, mixtral, cluster).ok());
  m.moe_dispatcher = MoeDispatcher::alltoall;
  CHECK(resolve_strategy(m, mixtral, cluster).value().expert_tp == 1);
  m.tp = 2;  // MoE with TP needs SP
  m.ep = 4;
  CHECK_FALSE(resolve_strategy(m, mixtral, cluster).ok());
  m.sp = true;
  CHECK(resolve_strategy(m, mixtral, cluster).value().expert_tp == 2);
}

TEST_CASE("Grok-1's MoE layer at 512 GPUs dispatches 256 rows per expert and gathers them over expert TP",
          "[model]") {
  const WorkloadSpec w = grok1();
  CHECK(w.ffn_type == FfnType::geglu);
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  const Strategy s = grok_512(w, cluster, false);
  const auto steps = model.layer_steps(w, s, Phase::forward, 0);
  // 8192/(2·4) = 1024 local tokens, ⌈1024·2/8 · 1.0⌉ = 256 rows per expert: 2048 rows × 6144 × 2 B.
  const auto dispatch = find_all(steps, "moe.dispatch");
  REQUIRE(dispatch.size() == 2);
  CHECK(dispatch[0].comm.collective == Collective::alltoall);
  CHECK(dispatch[0].comm.group == Group::ep);
  CHECK(dispatch[0].comm.bytes == 25165824.0);
  CHECK(dispatch[1].comm.collective == Collective::allgather);
  CHECK(dispatch[1].comm.group == Group::expert_tp);
  CHECK(dispatch[1].comm.bytes == 100663296.0);
  // One local expert (ep 8): FC1 8192 × 16384 × 6144 (gated, 2·32768/4), FC2 8192 × 6144 × 8192.
  const auto fc1 = find_all(steps, "moe.expert0.fc1");
  REQUIRE(fc1.size() == 1);
  CHECK(fc1[0].compute.gemm.m == 8192);
  CHECK(fc1[0].compute.gemm.n == 16384);
  CHECK(fc1[0].compute.gemm.k == 6144);
  CHECK(fc1[0].compute.flops == 1649267441664.0);
  CHECK(find_all(steps, "moe.expert1").empty());
  // EP ranks 4 apart: 8 ranks over 4 nodes; expert DP = 512/(4·8·8) = 2 at stride 32.
  CHECK(communicator_shape(Group::ep, s, 8) == CommGroup{8, 4});
  CHECK(communicator_shape(Group::expert_dp, s, 8) == CommGroup{2, 2});
  CHECK(communicator_shape(Group::expert_tp, s, 8) == CommGroup{4, 1});
}

TEST_CASE("the router's bookkeeping costs its kernel launches, forward and backward", "[model]") {
  // Megatron-Core 0.10's top-k router with a capacity and the aux loss, and the dispatcher's maps: 32
  // small kernels in the forward, 20 in the backward, each on a [1024, 8] tensor (kilobytes), so each
  // takes dgx-h100's 3 µs launch: 96 and 60 µs per MoE layer and micro-batch.
  const WorkloadSpec w = grok1();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  REQUIRE(cluster.kernel_launch_us == 3.0);
  const CostModel model(cluster);
  const Strategy s = grok_512(w, cluster, false);
  const auto forward = find_all(model.layer_steps(w, s, Phase::forward, 0), "moe.router_bookkeeping");
  REQUIRE(forward.size() == 1);
  CHECK(forward[0].compute.time_us == Approx(96.0));
  const auto backward = find_all(model.layer_steps(w, s, Phase::backward, 0), "moe.router_bookkeeping");
  REQUIRE(backward.size() == 1);
  CHECK(backward[0].compute.time_us == Approx(60.0));
}

TEST_CASE("without grouped GEMM each local expert runs its own GEMM pair of capacity rows", "[model]") {
  const WorkloadSpec w = grok1();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  // The 8-GPU row: tp 4, ep 2, seq 4096: 1024 local tokens, capacity 256, 4 local experts of 256·2·4 rows.
  Strategy s;
  s.gpus = 8;
  s.tp = 4;
  s.ep = 2;
  s.sp = true;
  s.global_batch = 8;
  s.moe_capacity_factor = 1.0;
  s.moe_pad_to_capacity = true;
  s.moe_grouped_gemm = false;
  WorkloadSpec proxy = w;
  proxy.layers = 2;
  proxy.seq = 4096;
  s = resolve_strategy(s, proxy, cluster).value();
  const auto steps = model.layer_steps(proxy, s, Phase::forward, 0);
  for (int x = 0; x < 4; ++x) {
    const auto fc1 = find_all(steps, "moe.expert" + std::to_string(x) + ".fc1");
    REQUIRE(fc1.size() == 1);
    CHECK(fc1[0].compute.gemm.m == 2048);
    CHECK(fc1[0].compute.gemm.batch == 1);
  }
  CHECK(find_all(steps, "moe.expert4").empty());
  // Grouped: one GEMM over the 4 experts, same FLOPs.
  s.moe_grouped_gemm = true;
  const auto grouped = find_all(model.layer_steps(proxy, s, Phase::forward, 0), "moe.fc1");
  REQUIRE(grouped.size() == 1);
  CHECK(grouped[0].compute.gemm.batch == 4);
  CHECK(grouped[0].compute.gemm.m == 2048);
}

TEST_CASE("a capacity factor below one drops rows; without padding above one it changes nothing", "[model]") {
  const WorkloadSpec w = workload_preset("mixtral-8x7b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  Strategy s;
  s.gpus = 8;
  s.ep = 8;
  s.global_batch = 8;
  auto dispatch_bytes = [&](double factor, bool pad) {
    Strategy t = s;
    t.moe_capacity_factor = factor;
    t.moe_pad_to_capacity = pad;
    t = resolve_strategy(t, w, cluster).value();
    return find_all(model.layer_steps(w, t, Phase::forward, 0), "moe.dispatch")[0].comm.bytes;
  };
  // 4096 tokens × top-2 / 8 experts = 1024 rows per expert; × 8 experts × 4096 × 2 B.
  const double dropless = 1024.0 * 8 * 4096 * 2;
  CHECK(dispatch_bytes(0, false) == dropless);
  CHECK(dispatch_bytes(1.5, false) == dropless);
  CHECK(dispatch_bytes(1.5, true) == 1536.0 * 8 * 4096 * 2);
  CHECK(dispatch_bytes(0.5, false) == 512.0 * 8 * 4096 * 2);
}

TEST_CASE("the allgather dispatcher gathers the tokens over expert TP × EP", "[model]") {
  const WorkloadSpec w = workload_preset("mixtral-8x7b").value();
  const ClusterSpec cluster = cluster_preset("dgx-h100").value();
  const CostModel model(cluster);
  Strategy s;
  s.gpus = 8;
  s.ep = 8;
  s.global_batch = 8;
  s.moe_dispatcher = MoeDispatcher::allgather;
  s = resolve_strategy(s, w, cluster).value();
  const auto steps = model.layer_steps(w, s, Phase::forward, 0);
  const auto gather = find_all(steps, "moe.dispatch_allgather");
  REQUIRE(gather.size() == 1);
  CHECK(gather[0].comm.group == Group::expert_tp_ep);
  CHECK(gather[0].comm.bytes == 8.0 * 4096 * 4096 * 2);  // 8 ranks' 4096 tokens × 4096 × 2 B
  CHECK(find_all(steps, "moe.dispatch").size() == 1);    // no all-to-all
  CHECK(communicator_shape(Group::expert_tp_ep, s, 8) == CommGroup{8, 1});
}
