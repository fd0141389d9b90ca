#include "model/specs.h"

#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/json_fields.h"
#include "model/cost_model.h"
#include "model/hf_config.h"
#include "model/pipeline_split.h"
#include "model/strategy_json.h"
#include "model/strategy_knobs.h"

namespace lagom::model {

// ---------------------------------------------------------------------------------------------------

double bytes_per_element(Precision precision) {
  switch (precision) {
    case Precision::fp8:
      return 1.0;
    case Precision::bf16:
    case Precision::fp16:
      return 2.0;
    case Precision::tf32:
    case Precision::fp32:
      return 4.0;
  }
  return 2.0;
}
std::optional<NcclVersion> parse_nccl_version(std::string_view text) {
  NcclVersion v;
  int* parts[3] = {&v.major, &v.minor, &v.patch};
  v.patch = 0;
  std::size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    std::size_t end = pos;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == pos || end - pos > 4) return std::nullopt;
    *parts[i] = std::stoi(std::string(text.substr(pos, end - pos)));
    if (end == text.size()) return i >= 1 ? std::optional<NcclVersion>(v) : std::nullopt;
    if (text[end] != '.') return std::nullopt;
    pos = end + 1;
  }
  return std::nullopt;
}

StackCosts stack_costs(Stack stack) {
  switch (stack) {
    case Stack::megatron_core:
    case Stack::pytorch_compile:
    case Stack::pytorch_eager:
      // The host ahead of the GPU: the cluster's launch floors alone. pytorch-eager's unfused chains are
      // counted kernel by kernel (ComputeOp::launches), each at that floor; no eager dispatch cost of its
      // own is priced (none measured).
      return {};
    case Stack::megatron_deepspeed:
      // 74 µs per modelled op: fitted jointly with sm80's GEMM fraction and FlashAttention-1's speed on
      // every A100 run held (vTrain's Megatron-DeepSpeed runs and llm-foundry's; scripts/fit-generations.py,
      // docs/calibrate.md "Across generations": 75), then refitted alone, g and r held, once the softmax's
      // torch fallback was priced (least squared log error over vTrain's two sets, 72-77 µs scanned;
      // docs/calibrate.md). Plausible range 20-150 µs: 4-10 eager kernels per modelled op at 5-15 µs of
      // PyTorch dispatch each; where an op's kernels are counted one by one (the softmax fallback, the MoE
      // router) each costs a dispatch: vTrain's fallback rows cost 5-6 dispatches per pass more than the
      // fused kernel (priced: 4).
      // 30 µs per collective call: chosen with the first dispatch
      // fit on vTrain's single-node rows, the smallest of the grid {30, 60, 80} (docs/simulator.md), never
      // fitted finer; vTrain's all-reduce tables are predicted with it (median 5.4%,
      // tests/model/test_collectives.cpp) but did not determine it.
      return {74.0, 30.0};
  }
  return {};
}

double GpuSpec::peak_tflops(Precision precision) const {
  switch (precision) {
    case Precision::bf16:
      return bf16_tflops;
    case Precision::fp16:
      return fp16_tflops;
    case Precision::fp8:
      return fp8_tflops;
    case Precision::tf32:
      return tf32_tflops;
    case Precision::fp32:
      return fp32_tflops;
  }
  return 0;
}

double ClusterSpec::node_nic_GBps() const {
  return nic.count * nic.gbit / 8.0;
}

namespace {

// The cluster file's "operations" object (OperationsSpec: lagom plan's inputs; docs/plan.md).
Result<OperationsSpec> parse_operations(const FieldReader& r) {
  OperationsSpec o;
  if (!r.has("operations")) {
    r.mark("operations");
    return o;
  }
  LAGOM_TRY(FieldReader p, r.object("operations"));
  // A failure rate above 1 per GPU-hour means a GPU fails more often than hourly: no job runs there.
  LAGOM_TRY(o.failures_per_gpu_hour, p.number("failures_per_gpu_hour", o.failures_per_gpu_hour, true, 1.0));
  LAGOM_TRY(o.checkpoint_GBps_per_node, p.number("checkpoint_GBps_per_node", o.checkpoint_GBps_per_node));
  LAGOM_TRY(o.restart_s, p.number("restart_s", o.restart_s, true));
  LAGOM_TRY(o.step_time_cv, p.number("step_time_cv", o.step_time_cv, true, 1.0));
  LAGOM_TRY(o.pue, p.number("pue", o.pue, false, 10.0));
  if (o.pue < 1.0) return p.error("pue", "must be at least 1 (facility power over IT power)");
  for (const auto& [key, field] :
       {std::pair<const char*, std::optional<double>*>{"price_per_gpu_hour", &o.price_per_gpu_hour},
        {"gpu_idle_w", &o.gpu_idle_w},
        {"gpu_full_w", &o.gpu_full_w},
        {"node_overhead_w", &o.node_overhead_w}}) {
    if (p.has(key)) {
      LAGOM_TRY(*field, p.number(key, std::nullopt, true));
    } else {
      p.mark(key);
    }
  }
  if (o.gpu_idle_w && o.gpu_full_w && *o.gpu_idle_w > *o.gpu_full_w) {
    return p.error("gpu_idle_w", "must not exceed gpu_full_w");
  }
  LAGOM_TRY_STATUS(p.finish());
  return o;
}

nlohmann::json operations_json(const OperationsSpec& o) {
  nlohmann::json j = {{"failures_per_gpu_hour", o.failures_per_gpu_hour},
                      {"checkpoint_GBps_per_node", o.checkpoint_GBps_per_node},
                      {"restart_s", o.restart_s},
                      {"step_time_cv", o.step_time_cv},
                      {"pue", o.pue}};
  if (o.price_per_gpu_hour) j["price_per_gpu_hour"] = *o.price_per_gpu_hour;
  if (o.gpu_idle_w) j["gpu_idle_w"] = *o.gpu_idle_w;
  if (o.gpu_full_w) j["gpu_full_w"] = *o.gpu_full_w;
  if (o.node_overhead_w) j["node_overhead_w"] = *o.node_overhead_w;
  return j;
}

// The cluster's "nic" object (docs/model.md "Specs", "The fabric").
Result<NicSpec> parse_nic(const FieldReader& n) {
  // Absent fields keep NicSpec's and NetworkFabric's defaults (specs.h states each and its source).
  const NicSpec d;
  const NetworkFabric fd;
  NicSpec nic;
  LAGOM_TRY(long count, n.integer("count", std::nullopt, 0));
  nic.count = static_cast<int>(count);
  LAGOM_TRY(nic.gbit,
            n.number("gbit", nic.count > 0 ? std::nullopt : std::optional<double>(0.0), nic.count == 0));
  LAGOM_TRY(nic.kind, n.choice<NicKind>("kind", d.kind, k_nic_kind_names));
  LAGOM_TRY(nic.latency_us, n.number("latency_us", d.latency_us, true));
  LAGOM_TRY(nic.efficiency, n.fraction("efficiency", d.efficiency));
  LAGOM_TRY(nic.collnet, n.boolean("collnet", d.collnet));
  LAGOM_TRY(long nic_gen, n.integer("pcie_gen", d.pcie_gen, 0));
  if (nic_gen != 0 && (nic_gen < 3 || nic_gen > 6)) return n.error("pcie_gen", "must be 0 (derive) or 3..6");
  nic.pcie_gen = static_cast<int>(nic_gen);
  LAGOM_TRY(nic.connection_GBps, n.number("connection_GBps", d.connection_GBps, true));
  LAGOM_TRY(nic.call_us_per_channel, n.number("call_us_per_channel", d.call_us_per_channel, true));
  LAGOM_TRY(long qps, n.integer("qps_per_connection", d.qps_per_connection, 1, 128));
  nic.qps_per_connection = static_cast<int>(qps);
  LAGOM_TRY(nic.gpudirect, n.boolean("gpudirect", d.gpudirect));
  LAGOM_TRY(nic.host_memory_GBps, n.number("host_memory_GBps", d.host_memory_GBps, true));
  if (n.has("fabric")) {
    LAGOM_TRY(FieldReader fab, n.object("fabric"));
    NetworkFabric& fabric = nic.fabric;
    LAGOM_TRY(fabric.routing, fab.choice<Routing>("routing", fd.routing, k_routing_names));
    LAGOM_TRY(long leaf, fab.integer("leaf_nodes", fd.leaf_nodes, 1, 1000000));
    fabric.leaf_nodes = static_cast<int>(leaf);
    LAGOM_TRY(fabric.oversubscription, fab.number("oversubscription", fd.oversubscription, false, 64.0));
    if (fabric.oversubscription < 1.0)
      return fab.error("oversubscription", "must be at least 1 (1 = non-blocking, 2 = 2:1)");
    LAGOM_TRY(fabric.rail_optimized, fab.boolean("rail_optimized", fd.rail_optimized));
    LAGOM_TRY(fabric.placement, fab.choice<Placement>("placement", fd.placement, k_placement_names));
    LAGOM_TRY_STATUS(fab.finish());
  } else {
    n.mark("fabric");
  }
  LAGOM_TRY_STATUS(n.finish());
  return nic;
}

}  // namespace

Result<ClusterSpec> parse_cluster(const nlohmann::json& document, const std::string& origin) {
  LAGOM_TRY_STATUS(require_object(document, origin));
  FieldReader r(document, origin, "", UnknownFields::error, k_spec_number_maximum);
  ClusterSpec c;
  LAGOM_TRY(c.name, r.string("name", std::string("cluster")));
  LAGOM_TRY(c.description, r.string("description", std::string()));
  // Bounded so that gpus_per_node · nodes fits an int (a million GPUs and more is no cluster).
  LAGOM_TRY(long gpn, r.integer("gpus_per_node", std::nullopt, 1, 1024));
  c.gpus_per_node = static_cast<int>(gpn);
  LAGOM_TRY(long nodes, r.integer("nodes", 0L, 0, 1L << 20));
  c.nodes = static_cast<int>(nodes);
  LAGOM_TRY(c.collective_launch_us, r.number("collective_launch_us", 0.0, true));
  LAGOM_TRY(c.kernel_launch_us, r.number("kernel_launch_us", 0.0, true));
  LAGOM_TRY(c.has_nccl, r.boolean("has_nccl", true));
  LAGOM_TRY(long channels, r.integer("nccl_channels", 0L, 0));
  if (channels > 64) return r.error("nccl_channels", "must be within 0..64 (NCCL's MAXCHANNELS)");
  c.nccl_channels = static_cast<int>(channels);
  // Absent: "" (the default 2.28.9, said to be the default in every output that depends on it).
  LAGOM_TRY(c.nccl_version, r.string("nccl_version", std::string()));
  if (r.has("nccl_version") && !parse_nccl_version(c.nccl_version)) {
    return r.error("nccl_version", fmt::format("'{}' is not a version such as 2.28.9", c.nccl_version));
  }
  LAGOM_TRY(c.nvls, r.boolean("nvls", true));
  LAGOM_TRY(c.cpu, r.choice<CpuVendor>("cpu", CpuVendor::intel, k_cpu_vendor_names));
  LAGOM_TRY(long per_process, r.integer("gpus_per_process", 1L));
  c.gpus_per_process = static_cast<int>(per_process);
  LAGOM_TRY(c.operations, parse_operations(r));

  LAGOM_TRY(FieldReader g, r.object("gpu"));
  LAGOM_TRY(c.gpu.name, g.string("name", std::string("gpu")));
  LAGOM_TRY(c.gpu.bf16_tflops, g.number("bf16_tflops", 0.0, true));
  LAGOM_TRY(c.gpu.fp16_tflops, g.number("fp16_tflops", 0.0, true));
  LAGOM_TRY(c.gpu.fp8_tflops, g.number("fp8_tflops", 0.0, true));
  LAGOM_TRY(c.gpu.tf32_tflops, g.number("tf32_tflops", 0.0, true));
  LAGOM_TRY(c.gpu.fp32_tflops, g.number("fp32_tflops", std::nullopt));
  LAGOM_TRY(c.gpu.hbm_GBps, g.number("hbm_GBps", std::nullopt));
  LAGOM_TRY(c.gpu.memory_gib, g.number("memory_gib", std::nullopt));
  LAGOM_TRY(long sms, g.integer("sms", std::nullopt));
  c.gpu.sms = static_cast<int>(sms);
  LAGOM_TRY(c.gpu.l2_mib, g.number("l2_mib", 0.0, true));
  LAGOM_TRY(long arch, g.integer("sm_arch", 0L, 0));
  c.gpu.sm_arch = static_cast<int>(arch);
  LAGOM_TRY(c.gpu.channel_GBps, g.number("channel_GBps", 24.0));
  LAGOM_TRY(c.gpu.net_channel_GBps, g.number("net_channel_GBps", 0.0, true));
  LAGOM_TRY(long gpu_gen, g.integer("pcie_gen", 0L, 0));
  if (gpu_gen != 0 && (gpu_gen < 3 || gpu_gen > 6)) return g.error("pcie_gen", "must be 0 (derive) or 3..6");
  c.gpu.pcie_gen = static_cast<int>(gpu_gen);
  LAGOM_TRY(c.gpu.usable_memory_gib, g.number("usable_memory_gib", 0.0, true));
  LAGOM_TRY(c.gpu.memory_reserve_gib, g.number("memory_reserve_gib", 0.0, true));
  if (c.gpu.memory_budget_gib() <= 0) {
    return g.error("memory_reserve_gib", "must be less than the usable memory");
  }
  for (const auto& [key, field] :
       {std::pair<const char*, double*>{"gemm_fraction_16", &c.gpu.gemm_fraction_16},
        {"gemm_fraction_fp8", &c.gpu.gemm_fraction_fp8},
        {"gemm_fraction_32", &c.gpu.gemm_fraction_32},
        {"hbm_efficiency", &c.gpu.hbm_efficiency},
        {"attention_fwd_fraction", &c.gpu.attention_fwd_fraction},
        {"attention_bwd_fraction", &c.gpu.attention_bwd_fraction}}) {
    LAGOM_TRY(*field, g.number(key, 0.0, true));
    if (*field > 1.0) return g.error(key, "must be 0 (by architecture) or a fraction within (0, 1]");
  }
  LAGOM_TRY_STATUS(g.finish());
  if (c.gpu.bf16_tflops + c.gpu.fp16_tflops + c.gpu.fp8_tflops + c.gpu.tf32_tflops + c.gpu.fp32_tflops <= 0) {
    return g.error("fp32_tflops", "at least one peak throughput must be positive");
  }

  LAGOM_TRY(FieldReader f, r.object("intra"));
  LAGOM_TRY(c.intra.kind, f.choice<FabricKind>("kind", std::nullopt, k_fabric_kind_names));
  LAGOM_TRY(c.intra.bw_GBps, f.number("bw_GBps", std::nullopt));
  LAGOM_TRY(c.intra.latency_us, f.number("latency_us", std::nullopt, true));
  LAGOM_TRY(c.intra.efficiency, f.fraction("efficiency", 0.8));
  LAGOM_TRY(c.intra.pair_bw_GBps, f.number("pair_bw_GBps", 0.0, true));
  LAGOM_TRY_STATUS(f.finish());
  if (c.intra.kind == FabricKind::nvlink_pairs && c.intra.pair_bw_GBps <= 0) {
    return f.error("pair_bw_GBps", "must be a positive number for kind nvlink_pairs");
  }

  if (r.has("nic")) {
    LAGOM_TRY(FieldReader n, r.object("nic"));
    LAGOM_TRY(c.nic, parse_nic(n));
  } else {
    r.mark("nic");
  }
  LAGOM_TRY_STATUS(r.finish());
  return c;
}

nlohmann::json to_json(const ClusterSpec& c) {
  nlohmann::json j;
  j["name"] = c.name;
  j["description"] = c.description;
  j["gpus_per_node"] = c.gpus_per_node;
  if (c.nodes > 0) j["nodes"] = c.nodes;
  j["collective_launch_us"] = c.collective_launch_us;
  j["kernel_launch_us"] = c.kernel_launch_us;
  j["has_nccl"] = c.has_nccl;
  j["nccl_channels"] = c.nccl_channels;
  // Written only when named, so that a document embedding a cluster keeps saying its version is the default.
  if (!c.nccl_version.empty()) j["nccl_version"] = c.nccl_version;
  j["nvls"] = c.nvls;
  j["cpu"] = to_string(c.cpu);
  j["gpus_per_process"] = c.gpus_per_process;
  // Written only when set, so the documents that embed a cluster (lagom-config.json) keep their form.
  if (c.operations != OperationsSpec{}) j["operations"] = operations_json(c.operations);
  j["gpu"] = {{"name", c.gpu.name},
              {"bf16_tflops", c.gpu.bf16_tflops},
              {"fp16_tflops", c.gpu.fp16_tflops},
              {"fp8_tflops", c.gpu.fp8_tflops},
              {"tf32_tflops", c.gpu.tf32_tflops},
              {"fp32_tflops", c.gpu.fp32_tflops},
              {"hbm_GBps", c.gpu.hbm_GBps},
              {"memory_gib", c.gpu.memory_gib},
              {"sms", c.gpu.sms},
              {"l2_mib", c.gpu.l2_mib},
              {"sm_arch", c.gpu.sm_arch},
              {"channel_GBps", c.gpu.channel_GBps},
              {"net_channel_GBps", c.gpu.net_channel_GBps},
              {"pcie_gen", c.gpu.pcie_gen},
              {"usable_memory_gib", c.gpu.usable_memory_gib},
              {"memory_reserve_gib", c.gpu.memory_reserve_gib},

              {"gemm_fraction_16", c.gpu.gemm_fraction_16},
              {"gemm_fraction_fp8", c.gpu.gemm_fraction_fp8},
              {"gemm_fraction_32", c.gpu.gemm_fraction_32},
              {"hbm_efficiency", c.gpu.hbm_efficiency},
              {"attention_fwd_fraction", c.gpu.attention_fwd_fraction},
              {"attention_bwd_fraction", c.gpu.attention_bwd_fraction}};
  j["intra"] = {{"kind", to_string(c.intra.kind)},
                {"bw_GBps", c.intra.bw_GBps},
                {"latency_us", c.intra.latency_us},
                {"efficiency", c.intra.efficiency}};
  if (c.intra.kind == FabricKind::nvlink_pairs) j["intra"]["pair_bw_GBps"] = c.intra.pair_bw_GBps;
  j["nic"] = {{"count", c.nic.count},
              {"gbit", c.nic.gbit},
              {"kind", to_string(c.nic.kind)},
              {"latency_us", c.nic.latency_us},
              {"efficiency", c.nic.efficiency},
              {"collnet", c.nic.collnet},
              {"pcie_gen", c.nic.pcie_gen},
              {"connection_GBps", c.nic.connection_GBps},
              {"call_us_per_channel", c.nic.call_us_per_channel}};
  // Written only when set, so the documents that embed a cluster (lagom-config.json) keep their form.
  if (c.nic.qps_per_connection != 1) j["nic"]["qps_per_connection"] = c.nic.qps_per_connection;
  if (!c.nic.gpudirect) j["nic"]["gpudirect"] = false;
  if (c.nic.host_memory_GBps > 0) j["nic"]["host_memory_GBps"] = c.nic.host_memory_GBps;
  if (c.nic.fabric != NetworkFabric{}) {
    const NetworkFabric& f = c.nic.fabric;
    j["nic"]["fabric"] = {{"routing", to_string(f.routing)},
                          {"leaf_nodes", f.leaf_nodes},
                          {"oversubscription", f.oversubscription},
                          {"rail_optimized", f.rail_optimized},
                          {"placement", to_string(f.placement)}};
  }
  return j;
}

// ---------------------------------------------------------------------------------------------------

double WorkloadSpec::parameters() const {
  const double h = static_cast<double>(hidden);
  const double d = static_cast<double>(head_dim());
  const double q = static_cast<double>(q_width());                // = h unless attention_head_dim is set
  const double attention = 2.0 * h * q + 2.0 * h * kv_heads * d;  // Q, out; K, V with kv_heads
  const double mult = ffn_matrices(ffn_type);
  const double dense_ffn = mult * h * static_cast<double>(ffn_hidden);
  double total =
      static_cast<double>(vocab) * h * (tied_embeddings ? 1.0 : 2.0);  // embedding (+ output layer)
  for (int l = 0; l < layers; ++l) {
    total += attention + 4.0 * h;  // two norms (scale and bias)
    if (is_moe_layer(l)) {
      const double expert = mult * h * static_cast<double>(moe->expert_ffn_hidden);
      total += (moe->experts + moe->shared_experts) * expert + h * moe->experts;  // experts + router
    } else {
      total += dense_ffn;
    }
  }
  // T5-style decoders add cross-attention (same shape as self-attention) per decoder layer.
  total += decoder_layers * attention;
  return total;
}

bool WorkloadSpec::is_moe_layer(int layer) const {
  return moe.has_value() && layer >= moe->first_dense_layers;
}

namespace {

// What one simulation can hold (docs/simulator.md#limits). The task graph has a few tasks per layer and
// micro-batch (simulator/graph.cpp), so its time and memory grow with layers × micro-batches: at most
// k_max_layer_passes of them (resolve_strategy), and at most k_max_layers layers in any model. Without
// grouped GEMMs a MoE layer has a GEMM pair per local expert (model/cost_compute.cpp): at most
// k_max_experts experts. Real models are far below them (Llama 3.1 405B: 126 layers; DeepSeek-V3: 256
// experts; a run of 128 layers at 4096 micro-batches is 524288 layer passes).
constexpr int k_max_layers = 1 << 16;
constexpr int k_max_experts = 1 << 16;
constexpr long k_max_layer_passes = 1L << 22;

Status check_workload(const WorkloadSpec& w, const FieldReader& r) {
  if (w.layers > k_max_layers) {
    return r.error("layers",
                   fmt::format("{} is more than the {} layers Lagom simulates (docs/simulator.md#limits)",
                               w.layers, k_max_layers));
  }
  if (w.moe && w.moe->experts > k_max_experts) {
    return r.error("moe.experts",
                   fmt::format("{} is more than the {} experts Lagom simulates (docs/simulator.md#limits)",
                               w.moe->experts, k_max_experts));
  }
  if (w.attention_head_dim == 0 && w.hidden % w.heads != 0) {
    return r.error("heads", fmt::format("heads={} does not divide hidden={}", w.heads, w.hidden));
  }
  if (w.kv_heads > w.heads || w.heads % w.kv_heads != 0) {
    return r.error("kv_heads", fmt::format("kv_heads={} does not divide heads={}", w.kv_heads, w.heads));
  }
  if (w.moe) {
    if (w.moe->experts < 2) return r.error("moe.experts", "must be at least 2");
    if (w.moe->top_k > w.moe->experts) {
      return r.error("moe.top_k", fmt::format("top_k={} exceeds experts={}", w.moe->top_k, w.moe->experts));
    }
    if (w.moe->first_dense_layers >= w.layers) {
      return r.error("moe.first_dense_layers", "must be smaller than layers");
    }
  }
  return {};
}
}  // namespace

Result<WorkloadSpec> parse_workload(const nlohmann::json& document, const std::string& origin) {
  LAGOM_TRY_STATUS(require_object(document, origin));
  FieldReader r(document, origin, "", UnknownFields::error, k_spec_number_maximum);
  WorkloadSpec w;
  LAGOM_TRY(w.name, r.string("name", std::string("model")));
  LAGOM_TRY(long enc, r.integer("encoder_layers", 0L, 0));
  LAGOM_TRY(long dec, r.integer("decoder_layers", 0L, 0));
  w.encoder_layers = static_cast<int>(enc);
  w.decoder_layers = static_cast<int>(dec);
  std::optional<long> layers_default;
  if (enc + dec > 0) layers_default.emplace(enc + dec);
  LAGOM_TRY(long layers, r.integer("layers", layers_default));
  w.layers = static_cast<int>(layers);
  if (enc + dec > 0 && enc + dec != layers) {
    return r.error("layers", fmt::format("must equal encoder_layers + decoder_layers = {}", enc + dec));
  }
  LAGOM_TRY(w.hidden, r.integer("hidden", std::nullopt));
  LAGOM_TRY(long heads, r.integer("heads", std::nullopt));
  w.heads = static_cast<int>(heads);
  LAGOM_TRY(long kv, r.integer("kv_heads", heads));
  w.kv_heads = static_cast<int>(kv);
  LAGOM_TRY(w.attention_head_dim, r.integer("head_dim", 0L, 0));
  LAGOM_TRY(w.ffn_hidden, r.integer("ffn_hidden", 4 * w.hidden));
  LAGOM_TRY(w.ffn_type, r.choice<FfnType>("ffn_type", FfnType::gelu, k_ffn_type_names));
  LAGOM_TRY(w.vocab, r.integer("vocab", std::nullopt));
  LAGOM_TRY(w.seq, r.integer("seq", std::nullopt));
  LAGOM_TRY(w.tied_embeddings, r.boolean("tied_embeddings", true));
  LAGOM_TRY(w.causal, r.boolean("causal", true));
  LAGOM_TRY(w.norm, r.choice<NormType>("norm", NormType::layernorm, k_norm_type_names));
  LAGOM_TRY(w.rope, r.boolean("rope", false));
  if (r.has("global_batch")) {
    LAGOM_TRY(long gb, r.integer("global_batch", std::nullopt));
    w.global_batch = gb;
  } else {
    r.mark("global_batch");
  }
  if (r.has("moe")) {
    LAGOM_TRY(FieldReader m, r.object("moe"));
    MoeSpec moe;
    LAGOM_TRY(long experts, m.integer("experts", std::nullopt));
    LAGOM_TRY(long top_k, m.integer("top_k", std::nullopt));
    LAGOM_TRY(moe.expert_ffn_hidden, m.integer("expert_ffn_hidden", w.ffn_hidden));
    LAGOM_TRY(long shared, m.integer("shared_experts", 0L, 0));
    LAGOM_TRY(long first_dense, m.integer("first_dense_layers", 0L, 0));
    LAGOM_TRY_STATUS(m.finish());
    moe.experts = static_cast<int>(experts);
    moe.top_k = static_cast<int>(top_k);
    moe.shared_experts = static_cast<int>(shared);
    moe.first_dense_layers = static_cast<int>(first_dense);
    w.moe = moe;
  } else {
    r.mark("moe");
  }
  LAGOM_TRY_STATUS(r.finish());
  LAGOM_TRY_STATUS(check_workload(w, r));
  return w;
}

Result<WorkloadSpec> parse_hf_config(const nlohmann::json& document, const std::string& origin) {
  LAGOM_TRY(HfReading reading, read_hf_config(document, origin));
  if (reading.workload.seq == 0) return missing_hf_seq(reading, origin);
  const FieldReader r(document, origin, "", UnknownFields::error, k_spec_number_maximum);
  LAGOM_TRY_STATUS(check_workload(reading.workload, r));
  return reading.workload;
}

Error missing_hf_seq(const HfReading& reading, const std::string& origin) {
  const std::string context =
      reading.context_length > 0 ? fmt::format(" ({})", reading.context_length) : std::string();
  return make_error(
      ErrorCode::invalid_input,
      fmt::format("{}: seq: required for a HuggingFace config: its max_position_embeddings{} is "
                  "the context length it supports, not a training sequence length; give --seq N "
                  "(or a \"seq\" field in the file)",
                  origin, context));
}

Result<WorkloadSpec> parse_workload_any(const nlohmann::json& document, const std::string& origin) {
  if (is_hf_config(document)) return parse_hf_config(document, origin);
  return parse_workload(document, origin);
}

nlohmann::json to_json(const WorkloadSpec& w) {
  nlohmann::json j;
  j["name"] = w.name;
  j["layers"] = w.layers;
  if (w.encoder_layers + w.decoder_layers > 0) {
    j["encoder_layers"] = w.encoder_layers;
    j["decoder_layers"] = w.decoder_layers;
  }
  j["hidden"] = w.hidden;
  j["heads"] = w.heads;
  j["kv_heads"] = w.kv_heads;
  if (w.attention_head_dim > 0) j["head_dim"] = w.attention_head_dim;
  j["ffn_hidden"] = w.ffn_hidden;
  j["ffn_type"] = to_string(w.ffn_type);
  j["vocab"] = w.vocab;
  j["seq"] = w.seq;
  if (!w.tied_embeddings) j["tied_embeddings"] = false;
  if (!w.causal) j["causal"] = false;
  if (w.norm != NormType::layernorm) j["norm"] = to_string(w.norm);
  if (w.rope) j["rope"] = true;
  if (w.moe) {
    j["moe"] = {{"experts", w.moe->experts},
                {"top_k", w.moe->top_k},
                {"expert_ffn_hidden", w.moe->expert_ffn_hidden},
                {"shared_experts", w.moe->shared_experts},
                {"first_dense_layers", w.moe->first_dense_layers}};
  }
  if (w.global_batch) j["global_batch"] = *w.global_batch;
  return j;
}

// ---------------------------------------------------------------------------------------------------

namespace {

Error bad(const std::string& why) {
  return make_error(ErrorCode::invalid_input, why);
}

// resolve_strategy's first part: the parallel dimensions (dp derived), the shapes they must divide, and the
// attention-side knobs that depend on them.
Status resolve_dimensions(Strategy& s, const WorkloadSpec& w) {
  if (s.gpus < 1) return bad(fmt::format("gpus {} must be a positive integer", s.gpus));
  for (const auto& [name, value] :
       {std::pair<const char*, int>{"tp", s.tp}, {"pp", s.pp}, {"cp", s.cp}, {"ep", s.ep}, {"vpp", s.vpp}}) {
    if (value < 1) return bad(fmt::format("{}={} must be a positive integer", name, value));
  }
  if (s.micro_batch < 1) return bad(fmt::format("micro-batch={} must be a positive integer", s.micro_batch));
  if (s.zero < 0 || s.zero > 3) return bad(fmt::format("zero={} must be 0, 1, 2 or 3", s.zero));
  if (!(s.bucket_mb > 0)) return bad("bucket-mb must be a positive number");
  const long model_parallel = static_cast<long>(s.tp) * s.pp * s.cp;
  if (s.dp == 0) {
    if (s.gpus % model_parallel != 0) {
      return bad(fmt::format("gpus {} is not a multiple of tp·pp·cp ({}·{}·{} = {})", s.gpus, s.tp, s.pp,
                             s.cp, model_parallel));
    }
    s.dp = static_cast<int>(s.gpus / model_parallel);
  } else if (s.dp < 1) {
    return bad(fmt::format("dp={} must be a positive integer", s.dp));
  }
  if (model_parallel * s.dp != s.gpus) {
    return bad(fmt::format("gpus {} is not tp·pp·dp·cp ({}·{}·{}·{} = {})", s.gpus, s.tp, s.pp, s.dp, s.cp,
                           model_parallel * s.dp));
  }
  if (w.heads % s.tp != 0) return bad(fmt::format("tp={} does not divide heads={}", s.tp, w.heads));
  // Each TP rank holds a slice of the vocabulary (embedding and logits): an empty slice is no model.
  if (w.vocab < s.tp)
    return bad(fmt::format("tp={} exceeds vocab={} (each TP rank holds a vocabulary slice)", s.tp, w.vocab));
  if (w.kv_heads % s.tp != 0) return bad(fmt::format("tp={} does not divide kv_heads={}", s.tp, w.kv_heads));
  if (w.ffn_hidden % s.tp != 0)
    return bad(fmt::format("tp={} does not divide ffn_hidden={}", s.tp, w.ffn_hidden));
  if (w.moe && w.moe->expert_ffn_hidden % s.tp != 0) {
    return bad(fmt::format("tp={} does not divide expert_ffn_hidden={}", s.tp, w.moe->expert_ffn_hidden));
  }
  LAGOM_TRY_STATUS(check_pipeline_split(w, s));
  if (w.seq % s.cp != 0) return bad(fmt::format("cp={} does not divide seq={}", s.cp, w.seq));
  if (s.sp && s.tp < 2) return bad("sp needs tp > 1");
  if (s.sp && (w.seq / s.cp) % s.tp != 0) {
    return bad(fmt::format("sp: tp={} does not divide the sequence per cp rank ({})", s.tp, w.seq / s.cp));
  }
  if (s.tp_overlap.kind != OverlapMethodKind::none && s.tp < 2) {
    return bad(fmt::format("tp-overlap {} needs tp > 1", to_string(s.tp_overlap)));
  }
  if (s.cp > 1 && s.cp_comm == CpCommType::a2a_p2p) {
    return bad(
        "cp-comm-type a2a+p2p needs Megatron's hierarchical_context_parallel_sizes, which Lagom does not "
        "model (use a2a, p2p or allgather)");
  }
  if (s.cp > 1 && s.cp_comm != CpCommType::a2a && !is_fused(s.attention)) {
    return bad(fmt::format(
        "cp-comm-type {} needs a fused attention (flash, flash2 or flash1: TE runs its CP steps with the "
        "fused kernels)",
        to_string(s.cp_comm)));
  }
  if (s.fp8_attention && s.attention != Attention::flash) {
    return bad(
        fmt::format("fp8-attention needs attention flash (cuDNN's FP8 fused attention); {} has no FP8 "
                    "kernel",
                    to_string(s.attention)));
  }
  return {};
}

// resolve_strategy's second part: the expert dimensions (expert-tp filled in) and the MoE knobs.
Status resolve_experts(Strategy& s, const WorkloadSpec& w) {
  if (s.expert_tp < 0) return bad(fmt::format("expert-tp={} must be a positive integer", s.expert_tp));
  if (s.expert_tp == 0) s.expert_tp = s.tp;
  if (!(s.moe_capacity_factor >= 0) || !std::isfinite(s.moe_capacity_factor))
    return bad("moe-capacity-factor must be a positive number");
  if (s.moe_pad_to_capacity && s.moe_capacity_factor <= 0)
    return bad("moe-pad-to-capacity needs moe-capacity-factor (Megatron-Core asserts it)");
  if (s.moe_capacity_factor > 0 && s.moe_dispatcher != MoeDispatcher::alltoall)
    return bad("moe-capacity-factor works with the alltoall dispatcher only (as in Megatron-Core)");
  if (w.moe) {
    if (s.tp > 1 && !s.sp) {
      return bad(
          "a MoE model with tp > 1 needs sp (Megatron-Core refuses MoE with tensor parallelism and no "
          "sequence parallelism in training)");
    }
    if (w.moe->expert_ffn_hidden % s.expert_tp != 0) {
      return bad(fmt::format("expert-tp={} does not divide expert_ffn_hidden={}", s.expert_tp,
                             w.moe->expert_ffn_hidden));
    }
  } else if (s.expert_tp != s.tp) {
    return bad(fmt::format("expert-tp={} needs a MoE model ({} has no experts)", s.expert_tp, w.name));
  }
  if (s.ep > 1) {
    if (!w.moe) return bad(fmt::format("ep={} needs a MoE model ({} has no experts)", s.ep, w.name));
    if (w.moe->experts % s.ep != 0)
      return bad(fmt::format("ep={} does not divide experts={}", s.ep, w.moe->experts));
  }
  // Expert groups are carved from each pipeline stage's tp·cp·dp ranks as expert-tp × ep × expert-dp
  // (NVIDIA/Megatron-LM@core_v0.10.0:megatron/core/parallel_state.py:643-661).
  if (s.expert_tp == s.tp && (s.dp * s.cp) % s.ep != 0) {
    return bad(fmt::format("ep={} does not divide dp·cp={}", s.ep, s.dp * s.cp));
  }
  if ((static_cast<long>(s.tp) * s.cp * s.dp) % (static_cast<long>(s.expert_tp) * s.ep) != 0) {
    return bad(fmt::format("expert-tp·ep={}·{} does not divide tp·cp·dp={}", s.expert_tp, s.ep,
                           static_cast<long>(s.tp) * s.cp * s.dp));
  }
  return {};
}

// resolve_strategy's hybrid sharding (Strategy::dp_shard), once dp and the expert dimensions are resolved.
Status resolve_sharding(const Strategy& s) {
  if (s.dp_shard < 0) {
    return bad(
        fmt::format("dp-shard={} must be a positive integer (0: shard over the whole dp group)", s.dp_shard));
  }
  if (s.dp_shard == 0) return {};
  if (s.dp % s.dp_shard != 0) return bad(fmt::format("dp-shard={} does not divide dp={}", s.dp_shard, s.dp));
  if (s.dp_shard > 1 && s.dp_shard < s.dp && s.zero < 1) {
    return bad(
        fmt::format("dp-shard={} < dp={} needs zero 1, 2 or 3 (zero 0 shards nothing)", s.dp_shard, s.dp));
  }
  if (s.hybrid_shard() && (s.ep > 1 || s.expert_tp != s.tp)) {
    return bad(fmt::format(
        "dp-shard={} < dp={} with ep > 1 or expert-tp ≠ tp: hybrid sharding of expert weights is not "
        "modelled",
        s.dp_shard, s.dp));
  }
  return {};
}

}  // namespace

Result<Strategy> resolve_strategy(Strategy s, const WorkloadSpec& w, const ClusterSpec& cluster) {
  LAGOM_TRY_STATUS(resolve_dimensions(s, w));
  LAGOM_TRY_STATUS(resolve_experts(s, w));
  LAGOM_TRY_STATUS(resolve_sharding(s));
  if (s.vpp > 1) {
    if (s.pp < 2) return bad(fmt::format("vpp={} needs pp > 1", s.vpp));
    s.schedule = Schedule::interleaved;
  } else if (s.schedule == Schedule::interleaved) {
    return bad("schedule interleaved needs vpp > 1");
  }
  if (s.global_batch == 0) {
    if (!w.global_batch) return bad("global-batch: required (the workload has no global_batch)");
    s.global_batch = *w.global_batch;
  }
  if (s.global_batch < 1)
    return bad(fmt::format("global-batch={} must be a positive integer", s.global_batch));
  if (s.global_batch % (static_cast<long>(s.dp) * s.micro_batch) != 0) {
    return bad(fmt::format("global-batch={} is not a multiple of dp·micro-batch={}", s.global_batch,
                           static_cast<long>(s.dp) * s.micro_batch));
  }
  if (static_cast<long>(w.layers) * s.micro_batches() > k_max_layer_passes) {
    return bad(fmt::format(
        "layers × micro-batches = {} × {} = {} layer passes per iteration, more than the {} Lagom simulates "
        "(docs/simulator.md#limits): a larger dp or micro-batch has fewer micro-batches",
        w.layers, s.micro_batches(), static_cast<long>(w.layers) * s.micro_batches(), k_max_layer_passes));
  }
  if (s.schedule == Schedule::interleaved && s.micro_batches() % s.pp != 0) {
    return bad(fmt::format("interleaved schedule: pp={} does not divide the micro-batches per iteration ({})",
                           s.pp, s.micro_batches()));
  }
  // NVIDIA/Megatron-LM@aa6207e2:megatron/training/arguments.py:425-431 and param_and_grad_buffer.py:233.
  if (s.param_gather_overlap && s.zero != 1 && s.zero != 2) {
    return bad(
        fmt::format("param-gather-overlap needs the distributed optimizer (zero 1 or 2; zero={})", s.zero));
  }
  if (s.sharding == ShardingLibrary::deepspeed && zero2_as_fsdp(s)) {
    return bad("sharding deepspeed: zero2 fsdp is FSDP's zero 2 (DeepSpeed's stage 2 gathers no layers)");
  }
  if (s.param_gather_overlap && zero2_as_fsdp(s)) {
    return bad(
        "param-gather-overlap: FSDP's zero 2 (zero2 fsdp) gathers each layer before its forward "
        "already; the option is the distributed optimizer's");
  }
  if (s.param_gather_with_optimizer && (!s.param_gather_overlap || s.vpp < 2)) {
    return bad(
        "param-gather-with-optimizer needs param-gather-overlap on and the interleaved schedule (vpp > 1)");
  }
  if (s.vocab_divisible_by < 0) {
    return bad(fmt::format("vocab-divisible-by={} must be a positive integer", s.vocab_divisible_by));
  }
  if (s.defer_embedding_wgrad < 0) {
    return bad(fmt::format("defer-embedding-wgrad={} must be 0 (off) or a positive number of micro-batches",
                           s.defer_embedding_wgrad));
  }
  if (s.grad_reduce_dtype && *s.grad_reduce_dtype != Precision::bf16 &&
      *s.grad_reduce_dtype != Precision::fp16 && *s.grad_reduce_dtype != Precision::fp32) {
    return bad(
        fmt::format("grad-reduce-dtype {}: must be bf16, fp16 or fp32", to_string(*s.grad_reduce_dtype)));
  }
  if (s.recompute_layers < 0)
    return bad(fmt::format("recompute-layers={} must not be negative", s.recompute_layers));
  if (s.recompute_layers > 0 && s.recompute != Recompute::full) {
    return bad(fmt::format(
        "recompute-layers={} needs recompute full (Megatron's block method recomputes whole layers)",
        s.recompute_layers));
  }
  if (s.recompute_every < 0)
    return bad(fmt::format("recompute-every={} must not be negative", s.recompute_every));
  if (s.recompute_early_stop && s.recompute != Recompute::full) {
    return bad(
        fmt::format("recompute-early-stop needs recompute full (recompute={}: torch.utils.checkpoint "
                    "stops early only in a layer checkpointed whole)",
                    to_string(s.recompute)));
  }
  if (s.recompute_early_stop && s.stack != Stack::pytorch_eager && s.stack != Stack::pytorch_compile) {
    return bad(
        fmt::format("recompute-early-stop needs a PyTorch stack (pytorch-eager or pytorch-compile; "
                    "stack {}: Megatron's and DeepSpeed's checkpointing rerun the whole forward)",
                    to_string(s.stack)));
  }
  if (s.recompute_every > 0 && (s.recompute != Recompute::full || s.recompute_layers > 0)) {
    return bad(
        fmt::format("recompute-every={} needs recompute full without recompute-layers (torchtitan's "
                    "layer policy checkpoints every k-th layer whole)",
                    s.recompute_every));
  }
  if (!(s.dropout >= 0 && s.dropout < 1))
    return bad(fmt::format("dropout={} must be a probability within [0, 1)", s.dropout));
  if (cluster.gpu.peak_tflops(s.precision) <= 0) {
    return bad(fmt::format("precision {}: not supported by {}", to_string(s.precision), cluster.gpu.name));
  }
  return s;
}

std::string recompute_text(const Strategy& s) {
  std::string text(to_string(s.recompute));
  if (s.recompute_layers > 0) text += fmt::format(" ({} layers/chunk)", s.recompute_layers);
  if (s.recompute_every > 0) text += fmt::format(" (every {} layers)", s.recompute_every);
  return text;
}

long padded_vocab(const WorkloadSpec& w, const Strategy& s) {
  if (s.vocab_divisible_by <= 0) return w.vocab;
  const long multiple = static_cast<long>(s.vocab_divisible_by) * s.tp;
  return (w.vocab + multiple - 1) / multiple * multiple;
}

namespace {

// to_json(Strategy): each knob under its key, spelt as its kind says (model/strategy_knobs.h).
struct KnobWriter {
  nlohmann::json& j;
  const Strategy& s;
  template <typename T>
  void operator()(const CountKnob<T>& knob, const T& value) const {
    if (knob.omit_zero && value == 0) return;
    j[std::string(knob.name.key)] = value;
  }
  void operator()(const SwitchKnob& knob, bool value) const {
    j[std::string(knob.name.key)] = value ? "on" : "off";
  }
  void operator()(const BooleanKnob& knob, bool value) const { j[std::string(knob.name.key)] = value; }
  void operator()(const ToggleKnob& knob, bool value) const { j[std::string(knob.name.key)] = value; }
  template <typename E, std::size_t N>
  void operator()(const ChoiceKnob<E, N>& knob, E value) const {
    j[std::string(knob.name.key)] = knob.table.name(value);
  }
  void operator()(const NumberKnob& knob, double value) const { j[std::string(knob.name.key)] = value; }
  void operator()(const BucketKnob& knob, double value) const { j[std::string(knob.name.key)] = value; }
  void operator()(const MethodKnob& knob, const OverlapMethod& value) const {
    j[std::string(knob.name.key)] = to_string(value);
  }
  // The resolved dtype (parse_strategy reads it back as the explicit one, with the same effect).
  void operator()(const DtypeKnob& knob, const std::optional<Precision>&) const {
    j[std::string(knob.name.key)] = to_string(s.gradient_dtype());
  }
};

// parse_strategy: each knob from its key, bounded as its kind says; the first error is kept.
struct KnobReader {
  const FieldReader& r;
  Status status;
  void keep(const Status& result) {
    if (status.ok() && !result.ok()) status = result;
  }
  template <typename T>
  void operator()(const CountKnob<T>& knob, T& value) {
    const std::string key(knob.name.key);
    const auto v = r.integer(key, static_cast<long>(value), knob.json_min, std::numeric_limits<T>::max());
    if (v.ok()) value = static_cast<T>(*v);
    keep(v.ok() ? Status() : Status(v.error()));
  }
  void operator()(const SwitchKnob& knob, bool& value) {
    const std::string key(knob.name.key);
    const auto v = r.string(key, std::string(value ? "on" : "off"));
    if (!v.ok()) return keep(v.error());
    if (*v != "on" && *v != "off") return keep(r.error(key, fmt::format("'{}' is not on or off", *v)));
    value = *v == "on";
  }
  void boolean(std::string_view key, bool& value) {
    const auto v = r.boolean(std::string(key), value);
    if (v.ok()) value = *v;
    keep(v.ok() ? Status() : Status(v.error()));
  }
  void operator()(const BooleanKnob& knob, bool& value) { boolean(knob.name.key, value); }
  void operator()(const ToggleKnob& knob, bool& value) { boolean(knob.name.key, value); }
  template <typename E, std::size_t N>
  void operator()(const ChoiceKnob<E, N>& knob, E& value) {
    const auto v = r.choice<E>(std::string(knob.name.key), value, knob.table);
    if (v.ok()) value = *v;
    keep(v.ok() ? Status() : Status(v.error()));
  }
  void number(std::string_view key, double& value, bool zero_allowed, double max) {
    const auto v = r.number(std::string(key), value, zero_allowed, max);
    if (v.ok()) value = *v;
    keep(v.ok() ? Status() : Status(v.error()));
  }
  void operator()(const NumberKnob& knob, double& value) {
    number(knob.name.key, value, knob.zero_allowed, knob.max);
  }
  void operator()(const BucketKnob& knob, double& value) { number(knob.name.key, value, false, 1e6); }
  void operator()(const MethodKnob& knob, OverlapMethod& value) {
    const std::string key(knob.name.key);
    const auto text = r.string(key, to_string(value));
    if (!text.ok()) return keep(text.error());
    auto method = parse_overlap_method(*text);
    if (!method.ok()) return keep(r.error(key, method.error().message));
    value = *method;
  }
  void operator()(const DtypeKnob& knob, std::optional<Precision>& value) {
    const std::string key(knob.name.key);
    if (!r.has(key)) return r.mark(key);
    const auto v = r.choice<Precision>(key, std::nullopt, k_precision_names);
    if (v.ok()) value = *v;
    keep(v.ok() ? Status() : Status(v.error()));
  }
};

}  // namespace

nlohmann::json to_json(const Strategy& s) {
  nlohmann::json j = nlohmann::json::object();
  for_each_knob(s, KnobWriter{j, s});
  return j;
}

Result<Strategy> parse_strategy(const nlohmann::json& document, const std::string& origin) {
  LAGOM_TRY_STATUS(require_object(document, origin));
  FieldReader r(document, origin, "", UnknownFields::error, k_spec_number_maximum);
  Strategy s;
  KnobReader reader{r, {}};
  for_each_knob(s, reader);
  LAGOM_TRY_STATUS(reader.status);
  LAGOM_TRY_STATUS(r.finish());
  return s;
}

}  // namespace lagom::model
