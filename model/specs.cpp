#include "model/specs.h"

#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "model/hf_config.h"
#include "model/json_reader.h"
#include "model/pipeline_split.h"
#include "model/strategy_json.h"

namespace lagom::model {

namespace {

constexpr std::array<std::pair<Precision, std::string_view>, 5> k_precisions{{{Precision::bf16, "bf16"},
                                                                              {Precision::fp16, "fp16"},
                                                                              {Precision::fp8, "fp8"},
                                                                              {Precision::tf32, "tf32"},
                                                                              {Precision::fp32, "fp32"}}};
constexpr std::array<std::pair<FabricKind, std::string_view>, 4> k_fabrics{
    {{FabricKind::nvswitch, "nvswitch"},
     {FabricKind::nvlink_pairs, "nvlink_pairs"},
     {FabricKind::pcie, "pcie"},
     {FabricKind::shm, "shm"}}};
constexpr std::array<std::pair<NicKind, std::string_view>, 3> k_nics{
    {{NicKind::ib, "ib"}, {NicKind::roce, "roce"}, {NicKind::tcp, "tcp"}}};
constexpr std::array<std::pair<CpuVendor, std::string_view>, 2> k_cpus{
    {{CpuVendor::intel, "intel"}, {CpuVendor::amd, "amd"}}};
constexpr std::array<std::pair<FfnType, std::string_view>, 4> k_ffn{
    {{FfnType::gelu, "gelu"},
     {FfnType::swiglu, "swiglu"},
     {FfnType::geglu, "geglu"},
     {FfnType::squared_relu, "squared_relu"}}};
constexpr std::array<std::pair<Recompute, std::string_view>, 3> k_recompute{
    {{Recompute::none, "none"}, {Recompute::selective, "selective"}, {Recompute::full, "full"}}};
constexpr std::array<std::pair<Schedule, std::string_view>, 3> k_schedules{
    {{Schedule::one_f_one_b, "1f1b"}, {Schedule::gpipe, "gpipe"}, {Schedule::interleaved, "interleaved"}}};
constexpr std::array<std::pair<Attention, std::string_view>, 4> k_attention{
    {{Attention::flash, "flash"},
     {Attention::flash2, "flash2"},
     {Attention::flash1, "flash1"},
     {Attention::standard, "standard"}}};
constexpr std::array<std::pair<CpCommType, std::string_view>, 4> k_cp_comm{
    {{CpCommType::a2a, "a2a"},
     {CpCommType::p2p, "p2p"},
     {CpCommType::allgather, "allgather"},
     {CpCommType::a2a_p2p, "a2a+p2p"}}};
constexpr std::array<std::pair<MoeDispatcher, std::string_view>, 2> k_dispatchers{
    {{MoeDispatcher::alltoall, "alltoall"}, {MoeDispatcher::allgather, "allgather"}}};

}  // namespace

// ---------------------------------------------------------------------------------------------------

std::string_view to_string(Precision precision) {
  return name_of(k_precisions, precision);
}
std::optional<Precision> parse_precision(std::string_view name) {
  return value_of(k_precisions, name);
}
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
std::string_view to_string(FabricKind kind) {
  return name_of(k_fabrics, kind);
}
std::optional<FabricKind> parse_fabric_kind(std::string_view name) {
  return value_of(k_fabrics, name);
}
std::string_view to_string(NicKind kind) {
  return name_of(k_nics, kind);
}
std::optional<NicKind> parse_nic_kind(std::string_view name) {
  return value_of(k_nics, name);
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

std::string_view to_string(CpuVendor vendor) {
  return name_of(k_cpus, vendor);
}
std::string_view to_string(FfnType type) {
  return name_of(k_ffn, type);
}
std::string_view to_string(Recompute value) {
  return name_of(k_recompute, value);
}
std::string_view to_string(Schedule value) {
  return name_of(k_schedules, value);
}
std::string_view to_string(Attention value) {
  return name_of(k_attention, value);
}
std::optional<Recompute> parse_recompute(std::string_view name) {
  return value_of(k_recompute, name);
}
std::optional<Schedule> parse_schedule(std::string_view name) {
  return value_of(k_schedules, name);
}
std::optional<Attention> parse_attention(std::string_view name) {
  return value_of(k_attention, name);
}
std::string_view to_string(CpCommType value) {
  return name_of(k_cp_comm, value);
}
std::optional<CpCommType> parse_cp_comm_type(std::string_view name) {
  return value_of(k_cp_comm, name);
}
std::string_view to_string(MoeDispatcher value) {
  return name_of(k_dispatchers, value);
}
std::optional<MoeDispatcher> parse_moe_dispatcher(std::string_view name) {
  return value_of(k_dispatchers, name);
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

Result<ClusterSpec> parse_cluster(const nlohmann::json& document, const std::string& origin) {
  LAGOM_TRY_STATUS(require_object(document, origin));
  Reader r(document, origin, "");
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
  LAGOM_TRY(c.nccl_version, r.string("nccl_version", std::string("2.28.9")));
  if (!parse_nccl_version(c.nccl_version)) {
    return r.error("nccl_version", fmt::format("'{}' is not a version such as 2.28.9", c.nccl_version));
  }
  LAGOM_TRY(c.nvls, r.boolean("nvls", true));
  LAGOM_TRY(c.cpu, r.choice<CpuVendor>("cpu", CpuVendor::intel, k_cpus));
  LAGOM_TRY(long per_process, r.integer("gpus_per_process", 1L));
  c.gpus_per_process = static_cast<int>(per_process);

  LAGOM_TRY(Reader g, r.object("gpu"));
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
  LAGOM_TRY_STATUS(g.no_unknown_fields());
  if (c.gpu.bf16_tflops + c.gpu.fp16_tflops + c.gpu.fp8_tflops + c.gpu.tf32_tflops + c.gpu.fp32_tflops <= 0) {
    return g.error("fp32_tflops", "at least one peak throughput must be positive");
  }

  LAGOM_TRY(Reader f, r.object("intra"));
  LAGOM_TRY(c.intra.kind, f.choice<FabricKind>("kind", std::nullopt, k_fabrics));
  LAGOM_TRY(c.intra.bw_GBps, f.number("bw_GBps", std::nullopt));
  LAGOM_TRY(c.intra.latency_us, f.number("latency_us", std::nullopt, true));
  LAGOM_TRY(c.intra.efficiency, f.fraction("efficiency", 0.8));
  LAGOM_TRY(c.intra.pair_bw_GBps, f.number("pair_bw_GBps", 0.0, true));
  LAGOM_TRY_STATUS(f.no_unknown_fields());
  if (c.intra.kind == FabricKind::nvlink_pairs && c.intra.pair_bw_GBps <= 0) {
    return f.error("pair_bw_GBps", "must be a positive number for kind nvlink_pairs");
  }

  if (r.has("nic")) {
    LAGOM_TRY(Reader n, r.object("nic"));
    LAGOM_TRY(long count, n.integer("count", std::nullopt, 0));
    c.nic.count = static_cast<int>(count);
    LAGOM_TRY(c.nic.gbit, n.number("gbit", c.nic.count > 0 ? std::nullopt : std::optional<double>(0.0),
                                   c.nic.count == 0));
    LAGOM_TRY(c.nic.kind, n.choice<NicKind>("kind", NicKind::ib, k_nics));
    LAGOM_TRY(c.nic.latency_us, n.number("latency_us", 0.0, true));
    LAGOM_TRY(c.nic.efficiency, n.fraction("efficiency", 0.86));
    LAGOM_TRY(c.nic.collnet, n.boolean("collnet", false));
    LAGOM_TRY(long nic_gen, n.integer("pcie_gen", 0L, 0));
    if (nic_gen != 0 && (nic_gen < 3 || nic_gen > 6))
      return n.error("pcie_gen", "must be 0 (derive) or 3..6");
    c.nic.pcie_gen = static_cast<int>(nic_gen);
    LAGOM_TRY(c.nic.connection_GBps, n.number("connection_GBps", 0.0, true));
    LAGOM_TRY(c.nic.call_us_per_channel, n.number("call_us_per_channel", 0.0, true));
    LAGOM_TRY_STATUS(n.no_unknown_fields());
  } else {
    r.mark("nic");
  }
  LAGOM_TRY_STATUS(r.no_unknown_fields());
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
  j["nccl_version"] = c.nccl_version;
  j["nvls"] = c.nvls;
  j["cpu"] = to_string(c.cpu);
  j["gpus_per_process"] = c.gpus_per_process;
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
Status check_workload(const WorkloadSpec& w, const Reader& r) {
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
  Reader r(document, origin, "");
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
  LAGOM_TRY(w.ffn_type, r.choice<FfnType>("ffn_type", FfnType::gelu, k_ffn));
  LAGOM_TRY(w.vocab, r.integer("vocab", std::nullopt));
  LAGOM_TRY(w.seq, r.integer("seq", std::nullopt));
  LAGOM_TRY(w.tied_embeddings, r.boolean("tied_embeddings", true));
  LAGOM_TRY(w.causal, r.boolean("causal", true));
  if (r.has("global_batch")) {
    LAGOM_TRY(long gb, r.integer("global_batch", std::nullopt));
    w.global_batch = gb;
  } else {
    r.mark("global_batch");
  }
  if (r.has("moe")) {
    LAGOM_TRY(Reader m, r.object("moe"));
    MoeSpec moe;
    LAGOM_TRY(long experts, m.integer("experts", std::nullopt));
    LAGOM_TRY(long top_k, m.integer("top_k", std::nullopt));
    LAGOM_TRY(moe.expert_ffn_hidden, m.integer("expert_ffn_hidden", w.ffn_hidden));
    LAGOM_TRY(long shared, m.integer("shared_experts", 0L, 0));
    LAGOM_TRY(long first_dense, m.integer("first_dense_layers", 0L, 0));
    LAGOM_TRY_STATUS(m.no_unknown_fields());
    moe.experts = static_cast<int>(experts);
    moe.top_k = static_cast<int>(top_k);
    moe.shared_experts = static_cast<int>(shared);
    moe.first_dense_layers = static_cast<int>(first_dense);
    w.moe = moe;
  } else {
    r.mark("moe");
  }
  LAGOM_TRY_STATUS(r.no_unknown_fields());
  LAGOM_TRY_STATUS(check_workload(w, r));
  return w;
}

Result<WorkloadSpec> parse_hf_config(const nlohmann::json& document, const std::string& origin) {
  LAGOM_TRY(HfReading reading, read_hf_config(document, origin));
  if (reading.workload.seq == 0) return missing_hf_seq(reading, origin);
  const Reader r(document, origin, "");
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

Result<Strategy> resolve_strategy(Strategy s, const WorkloadSpec& w, const ClusterSpec& cluster) {
  auto bad = [](const std::string& why) { return make_error(ErrorCode::invalid_input, why); };
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
  if (s.schedule == Schedule::interleaved && s.micro_batches() % s.pp != 0) {
    return bad(fmt::format("interleaved schedule: pp={} does not divide the micro-batches per iteration ({})",
                           s.pp, s.micro_batches()));
  }
  // NVIDIA/Megatron-LM@aa6207e2:megatron/training/arguments.py:425-431 and param_and_grad_buffer.py:233.
  if (s.param_gather_overlap && s.zero != 1 && s.zero != 2) {
    return bad(
        fmt::format("param-gather-overlap needs the distributed optimizer (zero 1 or 2; zero={})", s.zero));
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
  if (!(s.dropout >= 0 && s.dropout < 1))
    return bad(fmt::format("dropout={} must be a probability within [0, 1)", s.dropout));
  if (cluster.gpu.peak_tflops(s.precision) <= 0) {
    return bad(fmt::format("precision {}: not supported by {}", to_string(s.precision), cluster.gpu.name));
  }
  return s;
}

long padded_vocab(const WorkloadSpec& w, const Strategy& s) {
  if (s.vocab_divisible_by <= 0) return w.vocab;
  const long multiple = static_cast<long>(s.vocab_divisible_by) * s.tp;
  return (w.vocab + multiple - 1) / multiple * multiple;
}

nlohmann::json to_json(const Strategy& s) {
  return {{"gpus", s.gpus},
          {"tp", s.tp},
          {"pp", s.pp},
          {"dp", s.dp},
          {"cp", s.cp},
          {"ep", s.ep},
          {"sp", s.sp},
          {"vpp", s.vpp},
          {"zero", s.zero},
          {"micro_batch", s.micro_batch},
          {"global_batch", s.global_batch},
          {"recompute", to_string(s.recompute)},
          {"schedule", to_string(s.schedule)},
          {"tp_overlap", to_string(s.tp_overlap)},
          {"dp_overlap", s.dp_overlap ? "on" : "off"},
          {"bucket_mb", s.bucket_mb},
          {"precision", to_string(s.precision)},
          {"attention", to_string(s.attention)},
          {"cp_comm_type", to_string(s.cp_comm)},
          {"moe_dispatcher", to_string(s.moe_dispatcher)},
          {"moe_capacity_factor", s.moe_capacity_factor},
          {"moe_pad_to_capacity", s.moe_pad_to_capacity},
          {"moe_grouped_gemm", s.moe_grouped_gemm},
          {"expert_tp", s.expert_tp},

          {"first_stage_layers", s.first_stage_layers},
          {"last_stage_layers", s.last_stage_layers},
          {"embedding_in_pipeline_split", s.embedding_in_split},
          {"loss_in_pipeline_split", s.loss_in_split},
          {"p2p_overlap", s.p2p_overlap ? "on" : "off"},
          {"param_gather_overlap", s.param_gather_overlap ? "on" : "off"},
          {"param_gather_with_optimizer", s.param_gather_with_optimizer ? "on" : "off"},
          {"grad_reduce_dtype", to_string(s.gradient_dtype())},
          {"bucket_mb_per_chunk", s.bucket_per_chunk},
          {"vocab_divisible_by", s.vocab_divisible_by},
          {"defer_embedding_wgrad", s.defer_embedding_wgrad},
          {"cross_entropy_fusion", s.cross_entropy_fusion ? "on" : "off"},
          {"tp_overlap_fp8_rs", s.tp_overlap_fp8_rs ? "on" : "off"},

          {"fp8_params", s.fp8_params},
          {"fp8_wgrad", s.fp8_wgrad},
          {"fp8_attention", s.fp8_attention},
          {"dropout", s.dropout}};
}

Result<Strategy> parse_strategy(const nlohmann::json& document, const std::string& origin) {
  LAGOM_TRY_STATUS(require_object(document, origin));
  Reader r(document, origin, "");
  Strategy s;
  auto int_field = [&](const char* field, int& out, long minimum) -> Status {
    LAGOM_TRY(const long v, r.integer(field, static_cast<long>(out), minimum));
    out = static_cast<int>(v);
    return {};
  };
  // "on"/"off", as to_json writes the switches that the command line spells so.
  auto switch_field = [&](const char* field, bool& out) -> Status {
    LAGOM_TRY(const std::string v, r.string(field, std::string(out ? "on" : "off")));
    if (v != "on" && v != "off") return r.error(field, fmt::format("'{}' is not on or off", v));
    out = v == "on";
    return {};
  };
  LAGOM_TRY_STATUS(int_field("gpus", s.gpus, 1));
  LAGOM_TRY_STATUS(int_field("tp", s.tp, 1));
  LAGOM_TRY_STATUS(int_field("pp", s.pp, 1));
  LAGOM_TRY_STATUS(int_field("dp", s.dp, 0));
  LAGOM_TRY_STATUS(int_field("cp", s.cp, 1));
  LAGOM_TRY_STATUS(int_field("ep", s.ep, 1));
  LAGOM_TRY(s.sp, r.boolean("sp", s.sp));
  LAGOM_TRY_STATUS(int_field("vpp", s.vpp, 1));
  LAGOM_TRY_STATUS(int_field("zero", s.zero, 0));
  LAGOM_TRY(s.micro_batch, r.integer("micro_batch", s.micro_batch, 1, std::numeric_limits<long>::max()));
  LAGOM_TRY(s.global_batch, r.integer("global_batch", s.global_batch, 0, std::numeric_limits<long>::max()));
  LAGOM_TRY(s.recompute, r.choice<Recompute>("recompute", s.recompute, k_recompute));
  LAGOM_TRY(s.schedule, r.choice<Schedule>("schedule", s.schedule, k_schedules));
  LAGOM_TRY(const std::string tp_overlap, r.string("tp_overlap", std::string("none")));
  auto method = parse_overlap_method(tp_overlap);
  if (!method.ok()) return r.error("tp_overlap", method.error().message);
  s.tp_overlap = *method;
  LAGOM_TRY_STATUS(switch_field("dp_overlap", s.dp_overlap));
  LAGOM_TRY(s.bucket_mb, r.number("bucket_mb", s.bucket_mb));
  LAGOM_TRY(s.precision, r.choice<Precision>("precision", s.precision, k_precisions));
  LAGOM_TRY(s.attention, r.choice<Attention>("attention", s.attention, k_attention));
  LAGOM_TRY(s.cp_comm, r.choice<CpCommType>("cp_comm_type", s.cp_comm, k_cp_comm));
  LAGOM_TRY(s.moe_dispatcher, r.choice<MoeDispatcher>("moe_dispatcher", s.moe_dispatcher, k_dispatchers));
  LAGOM_TRY(s.moe_capacity_factor, r.number("moe_capacity_factor", s.moe_capacity_factor, true));
  LAGOM_TRY(s.moe_pad_to_capacity, r.boolean("moe_pad_to_capacity", s.moe_pad_to_capacity));
  LAGOM_TRY(s.moe_grouped_gemm, r.boolean("moe_grouped_gemm", s.moe_grouped_gemm));
  LAGOM_TRY_STATUS(int_field("expert_tp", s.expert_tp, 0));
  LAGOM_TRY_STATUS(int_field("first_stage_layers", s.first_stage_layers, 0));
  LAGOM_TRY_STATUS(int_field("last_stage_layers", s.last_stage_layers, 0));
  LAGOM_TRY(s.embedding_in_split, r.boolean("embedding_in_pipeline_split", s.embedding_in_split));
  LAGOM_TRY(s.loss_in_split, r.boolean("loss_in_pipeline_split", s.loss_in_split));
  LAGOM_TRY_STATUS(switch_field("p2p_overlap", s.p2p_overlap));
  LAGOM_TRY_STATUS(switch_field("param_gather_overlap", s.param_gather_overlap));
  LAGOM_TRY_STATUS(switch_field("param_gather_with_optimizer", s.param_gather_with_optimizer));
  // to_json writes the resolved gradient dtype; read back it is the explicit one, with the same effect.
  if (r.has("grad_reduce_dtype")) {
    LAGOM_TRY(const Precision dtype, r.choice<Precision>("grad_reduce_dtype", std::nullopt, k_precisions));
    s.grad_reduce_dtype = dtype;
  } else {
    r.mark("grad_reduce_dtype");
  }
  LAGOM_TRY(s.bucket_per_chunk, r.boolean("bucket_mb_per_chunk", s.bucket_per_chunk));
  LAGOM_TRY_STATUS(int_field("vocab_divisible_by", s.vocab_divisible_by, 0));
  LAGOM_TRY_STATUS(int_field("defer_embedding_wgrad", s.defer_embedding_wgrad, 0));
  LAGOM_TRY_STATUS(switch_field("cross_entropy_fusion", s.cross_entropy_fusion));
  LAGOM_TRY_STATUS(switch_field("tp_overlap_fp8_rs", s.tp_overlap_fp8_rs));
  LAGOM_TRY(s.fp8_params, r.boolean("fp8_params", s.fp8_params));
  LAGOM_TRY(s.fp8_wgrad, r.boolean("fp8_wgrad", s.fp8_wgrad));
  LAGOM_TRY(s.fp8_attention, r.boolean("fp8_attention", s.fp8_attention));
  LAGOM_TRY(s.dropout, r.number("dropout", s.dropout, true, 1.0));
  LAGOM_TRY_STATUS(r.no_unknown_fields());
  return s;
}

}  // namespace lagom::model
