// Specs: what a cluster, a model (workload) and a parallel strategy are, as plain structs, plus their JSON
// file formats (lagom cluster/workload JSON and HuggingFace config.json) and their validation.
//
// Contract: parsing never prints or exits; every error names the file (the `origin` argument), the field
// and the problem, e.g. "model.json: layers: must be a positive integer" (ErrorCode::invalid_input).
// to_json(spec) writes exactly the file format, so parse(to_json(spec)) == spec for every spec
// (the presets are tested for this round trip). All structs are plain values: copy freely, share
// read-only between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/enum_table.h"
#include "core/error.h"
#include "model/overlap_method.h"

namespace lagom::model {

using lagom::to_string;  // the name of every enum with a table (core/enum_table.h)

// ---------------------------------------------------------------------------------------------------
// Cluster

enum class Precision { bf16, fp16, fp8, tf32, fp32 };
inline constexpr auto k_precision_names = enum_table<Precision>({{Precision::bf16, "bf16"},
                                                                 {Precision::fp16, "fp16"},
                                                                 {Precision::fp8, "fp8"},
                                                                 {Precision::tf32, "tf32"},
                                                                 {Precision::fp32, "fp32"}});
constexpr const auto& enum_names(Precision) {
  return k_precision_names;
}
// Bytes per element of a tensor stored in this precision (fp8: 1, bf16/fp16: 2, tf32/fp32: 4).
double bytes_per_element(Precision precision);

// One GPU (or, for `localhost`, one CPU socket acting as the compute device).
struct GpuSpec {
  std::string name;  // e.g. "A100-SXM4-80GB"
  // Dense peak throughput per dtype, 10^12 FLOP/s (datasheet, no sparsity); 0 = dtype not supported.
  double bf16_tflops = 0, fp16_tflops = 0, fp8_tflops = 0, tf32_tflops = 0, fp32_tflops = 0;
  double hbm_GBps = 0;    // memory bandwidth, 10^9 bytes/s (datasheet)
  double memory_gib = 0;  // device memory, GiB (2^30 bytes)
  int sms = 0;            // streaming multiprocessors (compute units a kernel's waves fill)
  double l2_mib = 0;      // L2 cache, MiB
  int sm_arch = 0;        // compute capability × 10 (80 A100/A40 → 80/86, 90 H100); 0 = not a GPU
  // Copy rate of one NCCL channel (one CTA of 512 threads), 10^9 bytes/s: NCCL's per-channel bandwidth
  // caps (NVIDIA/nccl@v2.28.9-1:src/graph/tuning.cc:189-190 perChMaxTreeBws, one node: Ampere 24.0,
  // Hopper 38.7).
  double channel_GBps = 24.0;
  // What one channel's network connection carries, 10^9 bytes/s (one CTA and its own connection to its
  // peer on the next node, one direction). 0 = by architecture (resolved_net_channel_GBps): 12.0 before
  // sm90, 22.9 from sm90. Sources (docs/model.md "Channels and the network"): 12 = 192 GB/s measured on
  // DGX-A100 over its default 16 CTAs, and NVIDIA's "two SMs per 200G NIC"; 22.9 = fitted on the
  // nccl-tests 4-node H100 ring (365.8 GB/s over 16 CTAs). Plausible 8–30.
  double net_channel_GBps = 0;
  // PCIe generation of the GPU's x16 link (3–6); 0 = by architecture (Gen5 from sm90, else Gen4).
  int pcie_gen = 0;
  // What one process may allocate, GiB: the driver's total (nvidia-smi's "Total", a little under the
  // marketing size on HBM3 boards); 0 = memory_gib.
  double usable_memory_gib = 0;
  // Of that, what the model's tensors cannot have, GiB: the CUDA context and loaded kernels, NCCL's
  // communication buffers and the caching allocator's fragmentation (presets.cpp derives each); 0 = none.
  double memory_reserve_gib = 0;
  // Compute efficiencies (docs/model.md "Compute"): fractions of a datasheet figure, 0 = by architecture
  // (resolved_* below); physical constants `lagom calibrate` may fit (model/physical_constants.h).
  //
  // Sustained fraction of the dense peak that a large, well-shaped GEMM reaches, per precision class
  // (bf16/fp16, fp8, tf32/fp32): the kernel's issue efficiency times the clock the GPU holds under a full
  // tensor load over the clock the datasheet peak assumes.
  double gemm_fraction_16 = 0, gemm_fraction_fp8 = 0, gemm_fraction_32 = 0;
  // Fraction of hbm_GBps that a streaming (memory-bound) kernel reaches.
  double hbm_efficiency = 0;
  // Fused (flash) attention forward and backward kernels: fraction of the 16-bit dense peak at the kernel's
  // hardware FLOPs (causal: about half of the full score matrix).
  double attention_fwd_fraction = 0, attention_bwd_fraction = 0;
  [[nodiscard]] double peak_tflops(Precision precision) const;
  // The bytes a training step's tensors may take, GiB: usable memory − reserve (what fits_in_memory uses).
  [[nodiscard]] double memory_budget_gib() const {
    return (usable_memory_gib > 0 ? usable_memory_gib : memory_gib) - memory_reserve_gib;
  }
  bool operator==(const GpuSpec&) const = default;
};

// The efficiencies the cost model uses for this GPU: the field when set, else the architecture's default
// (documented with its source in model/cost_compute.cpp and docs/model.md "Compute"). `localhost`
// (sm_arch 0) measures its peaks, so every fraction is 1 there.
[[nodiscard]] double resolved_gemm_fraction(const GpuSpec& gpu, Precision precision);
[[nodiscard]] double resolved_hbm_efficiency(const GpuSpec& gpu);
[[nodiscard]] double resolved_attention_fraction(const GpuSpec& gpu, bool backward);
// How well a GEMM of `tiles` 128×128 output tiles of depth k keeps `sms` SMs busy: the better of
// data-parallel waves and a k loop split over the SMs (model/cost_compute.cpp, docs/model.md "Compute").
[[nodiscard]] double gemm_schedule_efficiency(double tiles, double k, int sms);

enum class FabricKind { nvswitch, nvlink_pairs, pcie, shm };
inline constexpr auto k_fabric_kind_names =
    enum_table<FabricKind>({{FabricKind::nvswitch, "nvswitch"},
                            {FabricKind::nvlink_pairs, "nvlink_pairs"},
                            {FabricKind::pcie, "pcie"},
                            {FabricKind::shm, "shm"}});
constexpr const auto& enum_names(FabricKind) {
  return k_fabric_kind_names;
}

// The intra-node fabric joining a node's GPUs.
struct FabricSpec {
  FabricKind kind = FabricKind::nvswitch;
  double bw_GBps = 0;     // per GPU per direction, 10^9 bytes/s (NVLink: all links of a GPU together)
  double latency_us = 0;  // one hop, microseconds (NCCL's hwLat for the link type unless measured)
  // Fraction of bw_GBps that a streaming copy achieves on this fabric (packet headers, flow control).
  // Physical quantity: nccl-tests' asymptotic ring busbw ÷ wire rate (see presets.cpp for each source).
  double efficiency = 0.8;
  // nvlink_pairs only: GPUs are joined in pairs by a bridge of pair_bw_GBps per direction, and pairs
  // talk over PCIe at bw_GBps.
  double pair_bw_GBps = 0;
  bool operator==(const FabricSpec&) const = default;
};

enum class NicKind { ib, roce, tcp };
inline constexpr auto k_nic_kind_names =
    enum_table<NicKind>({{NicKind::ib, "ib"}, {NicKind::roce, "roce"}, {NicKind::tcp, "tcp"}});
constexpr const auto& enum_names(NicKind) {
  return k_nic_kind_names;
}

// How the network's switches spread a flow's packets over the equal-cost paths up to the spine. `automatic`
// follows the NIC's link layer as NCCL does: adaptive on InfiniBand, ECMP on Ethernet (RoCE, TCP)
// (NVIDIA/nccl@v2.28.9-1:src/transport/net_ib.cc:798: a device's adaptive routing is on for the IB link
// layer only, NCCL_IB_ADAPTIVE_ROUTING overriding it).
//   adaptive  the switch picks each packet's uplink by load: flows share the uplinks evenly.
//   ecmp      a hash of each flow's header picks one uplink for the flow's life (RoCE v2: one UDP source
//             port per queue pair), so flows that hash alike share one uplink while others idle.
enum class Routing { automatic, adaptive, ecmp };
inline constexpr auto k_routing_names = enum_table<Routing>(
    {{Routing::automatic, "auto"}, {Routing::adaptive, "adaptive"}, {Routing::ecmp, "ecmp"}});
constexpr const auto& enum_names(Routing) {
  return k_routing_names;
}
// Where a job's nodes sit under the leaf switches, in its rank order (NCCL's rings and trees follow rank
// order across nodes).
//   packed     consecutive nodes share a leaf until it is full (a scheduler that allocates whole leaves in
//              host order): a ring's hop leaves a leaf at the leaf's last node only.
//   scattered  the job's nodes land on leaves in no order (a shared cluster without topology-aware
//              scheduling): any hop crosses the spine unless both ends happen to share a leaf.
enum class Placement { packed, scattered };
inline constexpr auto k_placement_names =
    enum_table<Placement>({{Placement::packed, "packed"}, {Placement::scattered, "scattered"}});
constexpr const auto& enum_names(Placement) {
  return k_placement_names;
}

// The switched network above the NICs: a two-tier leaf-spine (fat-tree) fabric (docs/model.md "The
// fabric"). Its defaults describe a non-blocking rail-optimised fabric of 64-port switches, where a job
// that fits under one leaf never touches the spine, with the job's nodes in no order under the leaves.
struct NetworkFabric {
  Routing routing = Routing::automatic;
  // Nodes under one leaf switch. Rail-optimised: each NIC rank ("rail") of these nodes has its own leaf,
  // so one leaf holds one NIC of each. 32: NVIDIA's DGX SuperPOD H100 scalable unit (32 nodes, one 64-port
  // Quantum-2 leaf per rail with 32 ports down and 32 up); 1..10^6.
  int leaf_nodes = 32;
  // Down-to-up bandwidth of a leaf: 1 non-blocking (as many uplinks as NICs below it), 2 for 2:1.
  // Uplinks run at the NICs' line rate. Plausible 1–8.
  double oversubscription = 1;
  // true: rail-optimised (NIC i of every node on leaf i, rail-aligned traffic stays on its rail); false: one
  // top-of-rack leaf takes all NICs of its nodes.
  bool rail_optimized = true;
  // scattered unless the file says packed: nothing but the scheduler makes NCCL's rank order follow the
  // leaves, and a fabric that punishes disorder (ECMP, an oversubscribed leaf) is not priced as if it did.
  // On a non-blocking fabric with adaptive routing the placement changes nothing.
  Placement placement = Placement::scattered;
  bool operator==(const NetworkFabric&) const = default;
};

struct NicSpec {
  int count = 0;    // NICs per node (0: single-node only)
  double gbit = 0;  // line rate per NIC, 10^9 bit/s
  NicKind kind = NicKind::ib;
  double latency_us = 0;     // one network hop incl. the NIC, microseconds
  double efficiency = 0.86;  // achieved ÷ line rate for large transfers (nccl-tests#175: 86 of 100 GB/s)
  bool collnet = false;      // in-network reduction (SHARP switches): enables collnet_direct/chain
  // PCIe generation of the NIC's x16 link (3–6); 0 = derived: Gen5 above 200 Gbit/s (a 400G NIC is a
  // Gen5 x16 device; Gen4 x16 carries about 25 GB/s), else Gen4.
  int pcie_gen = 0;
  // The most one NCCL connection carries through this NIC, 10^9 bytes/s; 0 = no NIC-side limit (IB and
  // RoCE: one queue pair reaches line rate). TCP presets: 2.06, one socket per connection (NVIDIA/nccl#209:
  // 1 ring 2.06 GB/s on 32 GbE). Plausible 1–5 for sockets.
  double connection_GBps = 0;
  // Host cost a multi-node collective adds to each call per channel it runs, microseconds: a GPU's one proxy
  // thread posts each channel's network work in turn before data flows. Fitted on the nccl-tests H100 runs
  // (2.25: 36 µs for NCCL's 16 CTAs; docs/model.md); plausible 0–4.
  double call_us_per_channel = 0;
  // Queue pairs per NCCL network connection (NCCL_IB_QPS_PER_CONNECTION, default 1: net_ib.cc:1215); each
  // is a flow of its own to the fabric's ECMP hash, and NCCL spreads a connection's messages over them.
  // 1..128.
  int qps_per_connection = 1;
  // GPUDirect RDMA: the NIC reads and writes GPU memory over PCIe. Without it (no nvidia-peermem or
  // dma-buf, a VM, a NIC and a GPU under different root ports) NCCL stages every transfer in host memory:
  // the GPU writes there and the NIC reads it back (receives the other way), so each byte crosses the
  // CPU's root port twice and host DRAM twice.
  bool gpudirect = true;
  // Host DRAM bandwidth of a node, 10^9 bytes/s: staged traffic's limit without GPUDirect. 0 = derived:
  // 409.6 before sm90 (two sockets of 8 DDR4-3200 channels, the DGX A100's EPYC 7742 pair), 614.4 from sm90
  // (two sockets of 8 DDR5-4800 channels, the DGX H100's Xeon 8480C pair).
  double host_memory_GBps = 0;
  NetworkFabric fabric;
  bool operator==(const NicSpec&) const = default;
};

enum class CpuVendor { intel, amd };
inline constexpr auto k_cpu_vendor_names =
    enum_table<CpuVendor>({{CpuVendor::intel, "intel"}, {CpuVendor::amd, "amd"}});
constexpr const auto& enum_names(CpuVendor) {
  return k_cpu_vendor_names;
}

// An NCCL release, e.g. 2.28.9 (the tag v2.28.9-1).
struct NcclVersion {
  int major = 2, minor = 28, patch = 9;
  auto operator<=>(const NcclVersion&) const = default;
};
// "2.28.9" or "2.28" (patch 0); nullopt for anything else.
std::optional<NcclVersion> parse_nccl_version(std::string_view text);

// What running a training job on the cluster costs and how it fails: the inputs of `lagom plan` beyond one
// iteration (docs/plan.md has each formula and source). The cluster file's optional "operations" object;
// absent fields keep these defaults (unset optionals: not known, and the plan says what it could not
// compute without them).
struct OperationsSpec {
  // Unexpected interruptions per GPU-hour. Llama 3 (Dubey et al. 2024, "The Llama 3 Herd of Models",
  // section 3.3.4): 419 unexpected interruptions in a 54-day snapshot of pre-training on 16,384 H100 GPUs,
  // 419 / (54 · 24 · 16384) = 1.973e-5 (one every 3.1 h for the whole job). Range 0..1.
  double failures_per_gpu_hour = 419.0 / (54.0 * 24.0 * 16384.0);
  // Sustained checkpoint write bandwidth of one node to storage, 10^9 bytes/s. Llama 3 (section 3.3.4): the
  // Tectonic storage fabric sustains 2 TB/s for the 2,048 nodes of 16,384 GPUs: 2000 / 2048 = 0.977 per
  // node. Plausible 0.5–25 (a share of a parallel file system up to a node's local NVMe).
  double checkpoint_GBps_per_node = 2000.0 / 2048.0;
  // Time from an interruption to training again, not counting reading the checkpoint back (the plan adds
  // that at checkpoint_GBps_per_node): rescheduling, process start, NCCL initialisation, seconds.
  // unverified: 600 s is an assumption (no published breakdown at hand); plausible 60–3600.
  double restart_s = 600;
  // Per-GPU step-time spread: the standard deviation of one GPU's iteration time over its mean (a synchronous
  // step waits for the slowest of the ranks; docs/plan.md "Stragglers"). unverified: 0.01 is an assumption;
  // plausible 0–0.05 (thermal and clock variation between GPUs of one model).
  double step_time_cv = 0.01;
  // Price of one GPU-hour, US dollars; unset: the cost is not known (`lagom plan --price` gives it).
  std::optional<double> price_per_gpu_hour;
  // One GPU's power idle and at full load, watts; unset: the plan's table of datasheet figures by GPU name.
  std::optional<double> gpu_idle_w, gpu_full_w;
  // A node's power beside its GPUs (CPUs, memory, NICs, fans), watts; unset: the plan's table by GPU name.
  std::optional<double> node_overhead_w;
  // Power usage effectiveness: the facility's power over the IT equipment's. Google's fleet-wide
  // trailing-twelve-month PUE of 1.10 (google.com/about/datacenters/efficiency, 2023). Plausible 1.05–2.
  double pue = 1.10;
  bool operator==(const OperationsSpec&) const = default;
};

struct ClusterSpec {
  std::string name;
  int gpus_per_node = 8;
  int nodes = 0;  // 0 = not fixed: derived from --gpus (⌈gpus / gpus_per_node⌉)
  GpuSpec gpu;
  FabricSpec intra;
  NicSpec nic;
  // Fixed host-side cost of one collective call (kernel launch, stream events, proxy wake-up) as
  // nccl-tests sees it, microseconds; added to NCCL's own latency model (which omits it).
  double collective_launch_us = 0;
  double kernel_launch_us = 0;  // host-side dispatch time of one compute op, microseconds; an op takes at
                                // least this long (asynchronous launch: longer GPU work hides it)
  // The communicator's CTAs as NCCL's log states them ("N coll channels"), for every communicator; 0 =
  // derived from NCCL's topology search and connect.cc for each communicator's shape (model/nccl_topology.h).
  int nccl_channels = 0;
  bool has_nccl = true;  // false for `localhost` on CPUs (MPI collectives, no NCCL knobs)
  // The NCCL version the cluster runs; "" where a file or preset names none (NCCL 2.28.9, the default). It
  // picks the release whose defaults Lagom emulates (model/nccl_topology.h nccl_emulation, docs/model.md).
  std::string nccl_version = "2.28.9";
  // NVLink SHARP enabled (NCCL_NVLS_ENABLE); NCCL still runs it only on sm90+ GPUs on NVSwitch. Recipes
  // that set NCCL_NVLS_ENABLE=0, or systems without multicast support, say false.
  bool nvls = true;
  CpuVendor cpu = CpuVendor::intel;  // host CPU: NCCL's LL caps and per-step network overhead depend on it
  // GPUs one process drives (nccl-tests -g): each call launches a kernel on each of them in turn, so the
  // host launch cost is paid that many times. 1 for frameworks (one process per GPU).
  int gpus_per_process = 1;
  OperationsSpec operations;  // the run around the iterations (lagom plan)
  std::string description;
  bool operator==(const ClusterSpec&) const = default;

  // Total NIC bandwidth of a node, 10^9 bytes/s (line rate, before efficiency).
  [[nodiscard]] double node_nic_GBps() const;
};

// The default upper bound of a number in a spec file (cluster, workload, strategy, HuggingFace config):
// 10^6 in the field's unit (1 s of latency, 10^6 GB/s, 10^6 TFLOP/s, 10^6 GiB) is beyond any hardware, so
// a larger value is a typo or a unit mistake, reported at the field rather than deep in the model.
inline constexpr double k_spec_number_maximum = 1e6;

Result<ClusterSpec> parse_cluster(const nlohmann::json& document, const std::string& origin);
nlohmann::json to_json(const ClusterSpec& cluster);

// ---------------------------------------------------------------------------------------------------
// Workload

// The FFN's activation: gelu (GPT, BERT), squared_relu (Nemotron-4: relu(x)², not gated), swiglu
// (LLaMA: silu(gate)·up) and geglu (Gemma, Grok-1: gelu(gate)·up). The gated ones have a gate and an up
// projection (fc1 twice as wide, three weight matrices instead of two).
enum class FfnType { gelu, swiglu, geglu, squared_relu };
inline constexpr auto k_ffn_type_names = enum_table<FfnType>({{FfnType::gelu, "gelu"},
                                                              {FfnType::swiglu, "swiglu"},
                                                              {FfnType::geglu, "geglu"},
                                                              {FfnType::squared_relu, "squared_relu"}});
constexpr const auto& enum_names(FfnType) {
  return k_ffn_type_names;
}
[[nodiscard]] constexpr bool is_gated(FfnType type) {
  return type == FfnType::swiglu || type == FfnType::geglu;
}
// Weight matrices of one dense FFN (fc1 gate + up + fc2 when gated, fc1 + fc2 otherwise).
[[nodiscard]] constexpr double ffn_matrices(FfnType type) {
  return is_gated(type) ? 3.0 : 2.0;
}

// The layer norm: LayerNorm (GPT, BERT, MPT, Nemotron's LayerNorm1P) or RMSNorm (LLaMA-style models; T5's
// T5LayerNorm). A fused kernel prices them alike; eager PyTorch runs RMSNorm as a chain of kernels in fp32
// (Stack::pytorch_eager, docs/model.md "Software stack") and LayerNorm as one ATen kernel.
enum class NormType { layernorm, rmsnorm };
inline constexpr auto k_norm_type_names =
    enum_table<NormType>({{NormType::layernorm, "layernorm"}, {NormType::rmsnorm, "rmsnorm"}});
constexpr const auto& enum_names(NormType) {
  return k_norm_type_names;
}

struct MoeSpec {
  int experts = 0;             // routed experts per MoE layer (> 1)
  int top_k = 1;               // experts each token is routed to
  long expert_ffn_hidden = 0;  // FFN width of one expert
  int shared_experts = 0;      // experts every token goes through (DeepSeek-MoE), same width
  int first_dense_layers = 0;  // leading layers with a dense FFN (of WorkloadSpec::ffn_hidden)
  bool operator==(const MoeSpec&) const = default;
};

struct WorkloadSpec {
  std::string name;
  int layers = 0;          // decoder layers (for T5: decoder_layers + encoder_layers is the total)
  int encoder_layers = 0;  // T5-style: encoder layers (0 = decoder-only or encoder-only)
  int decoder_layers = 0;  // T5-style: decoder layers (with cross-attention)
  long hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // = heads unless GQA/MQA
  // Width of one attention head when it is not hidden / heads (Gemma: 256 with hidden 3584 and 16 heads;
  // HF `head_dim`); 0 = hidden / heads. Read it through head_dim().
  long attention_head_dim = 0;
  long ffn_hidden = 0;  // dense FFN width
  FfnType ffn_type = FfnType::gelu;
  long vocab = 0;
  long seq = 0;
  // The output layer shares the embedding's weights (GPT-2/3, BERT, T5, MPT). LLaMA, Mixtral, OLMoE,
  // DeepSeek-MoE and Phi-2 have a separate output layer (HF `tie_word_embeddings: false`): vocab·hidden more
  // parameters, gradients and optimizer state.
  bool tied_embeddings = true;
  // Self-attention masks future tokens (decoder LMs: GPT, LLaMA; T5's decoder). false: bidirectional (BERT,
  // T5's encoder is always bidirectional). A causal fused-attention kernel skips the masked blocks.
  bool causal = true;
  NormType norm = NormType::layernorm;
  // Rotary position embedding applied to Q and K in every attention (LLaMA-style models, GPT-NeoX, Phi,
  // Nemotron); false: learned absolute positions added once to the embedding (GPT, BERT), ALiBi (MPT) or a
  // relative bias (T5), which cost nothing per layer beyond what is priced.
  bool rope = false;
  std::optional<MoeSpec> moe;
  std::optional<long> global_batch;
  bool operator==(const WorkloadSpec&) const = default;

  [[nodiscard]] long head_dim() const { return attention_head_dim > 0 ? attention_head_dim : hidden / heads; }
  // Width of the queries (and of the attention output) of one layer: heads · head_dim (= hidden unless
  // attention_head_dim is set).
  [[nodiscard]] long q_width() const { return static_cast<long>(heads) * head_dim(); }
  // Parameter count (weights incl. embedding, and the output layer when it is not tied to it; norms and
  // biases included).
  [[nodiscard]] double parameters() const;
  [[nodiscard]] bool is_moe_layer(int layer) const;
};

Result<WorkloadSpec> parse_workload(const nlohmann::json& document, const std::string& origin);
// A HuggingFace config.json of a family Lagom models (model/hf_config.h says which and how it is read),
// checked like a workload file. It needs a `seq` field: a config's max_position_embeddings is a context
// length, not a training sequence length (the command line gives --seq instead).
Result<WorkloadSpec> parse_hf_config(const nlohmann::json& document, const std::string& origin);
// Either format: a document with "model_type" or "architectures" is a HuggingFace config.
Result<WorkloadSpec> parse_workload_any(const nlohmann::json& document, const std::string& origin);
nlohmann::json to_json(const WorkloadSpec& workload);

// ---------------------------------------------------------------------------------------------------
// Strategy (the flags of `lagom simulate`, docs/cli.md#model-cluster-and-strategy-flags)

// Activation recomputation (docs/model.md "Checkpoint policies"). none keeps what autograd saves; selective
// is Megatron's core-attention recompute (--recompute-granularity selective); every other value checkpoints
// whole layers, keeping the layer's input and the tensors its policy saves (model/checkpoint_policy.h):
// full saves nothing; op is torchtitan's per-op policy (selective_ac_option = "op"); the rest are MaxText's
// remat_policy presets under their MaxText names.
enum class Recompute {
  none,
  selective,
  full,
  op,
  minimal,
  minimal_with_context,
  save_dot_except_mlpwi,
  save_dot_except_mlp,
  save_qkv_proj,
  save_out_proj
};
enum class Schedule { one_f_one_b, gpipe, interleaved };
// flash: the GPU's fastest fused attention kernel (cuDNN's fused attention or FlashAttention-3 on sm90,
// FlashAttention-2 on sm80); flash2: FlashAttention-2's kernels wherever they run (Transformer Engine with
// NVTE_FUSED_ATTN=0 and the flash-attn 2.x package: on sm90 they use sm80's mma.sync, not wgmma/TMA);
// flash1: FlashAttention-1's kernels (flash-attn 1.0.x, sm80 code only; llm-foundry's `attn_impl: flash` up
// to its v0.4.0); standard: the s×s scores stored, as Megatron did before FlashAttention.
enum class Attention { flash, flash2, flash1, standard };
[[nodiscard]] inline bool is_fused(Attention a) {
  return a != Attention::standard;
}
// Context-parallel attention as Megatron's `cp_comm_type` names it (TE's attention.py implementations):
// a2a = Ulysses (all-to-all of Q, K, V and of the output: AttnFuncWithCPAndQKVOA2A), p2p = the ring
// exchange of K/V blocks beside the attention steps (AttnFuncWithCPAndKVP2P), allgather = K/V all-gather
// before the attention (AttnFuncWithCPAndKVAllGather, Llama 3 style), a2a_p2p = hierarchical (a2a inside a
// level, the ring across it; needs Megatron's hierarchical_context_parallel_sizes: refused for now).
enum class CpCommType { a2a, p2p, allgather, a2a_p2p };
// Megatron-Core's moe_token_dispatcher_type: alltoall (EP all-to-all, then expert-TP all-gather) or
// allgather (all-gather of the tokens over TP×EP, each rank keeps its experts' rows).
enum class MoeDispatcher { alltoall, allgather };
inline constexpr auto k_recompute_names =
    enum_table<Recompute>({{Recompute::none, "none"},
                           {Recompute::selective, "selective"},
                           {Recompute::full, "full"},
                           {Recompute::op, "op"},
                           {Recompute::minimal, "minimal"},
                           {Recompute::minimal_with_context, "minimal_with_context"},
                           {Recompute::save_dot_except_mlpwi, "save_dot_except_mlpwi"},
                           {Recompute::save_dot_except_mlp, "save_dot_except_mlp"},
                           {Recompute::save_qkv_proj, "save_qkv_proj"},
                           {Recompute::save_out_proj, "save_out_proj"}});
constexpr const auto& enum_names(Recompute) {
  return k_recompute_names;
}
inline constexpr auto k_schedule_names = enum_table<Schedule>(
    {{Schedule::one_f_one_b, "1f1b"}, {Schedule::gpipe, "gpipe"}, {Schedule::interleaved, "interleaved"}});
constexpr const auto& enum_names(Schedule) {
  return k_schedule_names;
}
inline constexpr auto k_attention_names = enum_table<Attention>({{Attention::flash, "flash"},
                                                                 {Attention::flash2, "flash2"},
                                                                 {Attention::flash1, "flash1"},
                                                                 {Attention::standard, "standard"}});
constexpr const auto& enum_names(Attention) {
  return k_attention_names;
}
// The software stack that runs the model (--stack; docs/model.md "Software stack"): what the framework costs
// on the host per modelled op, beside the machine's own launch floors (ClusterSpec::kernel_launch_us,
// collective_launch_us). A property of the framework and its version, not of the cluster: it used to hide
// in one cluster file (vTrain's), so every other A100 prediction ran without it.
//   megatron-core       Megatron-Core with Transformer Engine (NeMo 2, the DGX H100 recipes; Megatron-LM
//                       since 2023): fused kernels, the host keeps ahead of the GPU; also the regime of
//                       PyTorch FSDP with flash-attn at the sizes measured (llm-foundry: 216 runs at the
//                       launch floor). No host cost beyond the cluster's floors.
//   megatron-deepspeed  Megatron-DeepSpeed and Megatron-LM before Megatron-Core (2021-2023), eager PyTorch
//                       with apex's fused kernels: each modelled op stands for several eager kernels and
//                       their Python dispatch, so small ops are host-bound.
//   pytorch-eager       A PyTorch-native model run eagerly: torchtitan with compile = false (its default
//                       through 2024-2025), HuggingFace Transformers models under FSDP or DeepSpeed. No
//                       fused elementwise kernels: RMSNorm, rotary embedding and the gated activation run
//                       as PyTorch's chains of kernels, RMSNorm and RoPE in fp32 (the HBM bytes and
//                       launches of each chain, docs/model.md "Software stack"); the host keeps ahead.
//   pytorch-compile     The same models under torch.compile: Inductor fuses each elementwise chain into one
//                       kernel, priced as Megatron-Core's fused kernels.
enum class Stack { megatron_core, megatron_deepspeed, pytorch_eager, pytorch_compile };
inline constexpr auto k_stack_names = enum_table<Stack>({{Stack::megatron_core, "megatron-core"},
                                                         {Stack::megatron_deepspeed, "megatron-deepspeed"},
                                                         {Stack::pytorch_eager, "pytorch-eager"},
                                                         {Stack::pytorch_compile, "pytorch-compile"}});
constexpr const auto& enum_names(Stack) {
  return k_stack_names;
}
// Whether a pipeline transfer is split over the stage's TP ranks: each rank sends its share and the
// receiver all-gathers the tensor over TP before its pass (Megatron's scatter-gather in the pipeline,
// DeepSpeed's pipe_partitioned / grad_partitioned). `stack`: as the stack does (model::
// pipeline_splits_over_tp: on for megatron-deepspeed, off for megatron-core). Only without sequence
// parallelism, whose transfer is already a TP rank's share.
enum class PipelineSplit { stack, on, off };
inline constexpr auto k_pipeline_split_names = enum_table<PipelineSplit>(
    {{PipelineSplit::stack, "stack"}, {PipelineSplit::on, "on"}, {PipelineSplit::off, "off"}});
constexpr const auto& enum_names(PipelineSplit) {
  return k_pipeline_split_names;
}
// What ZeRO stage 2 is (the gradients and optimizer states sharded over the shard group): `deepspeed`,
// DeepSpeed's stage 2, every rank keeping the whole 16-bit parameters and all-gathering the updated shards
// after the optimizer step (microsoft/DeepSpeed@v0.16.4 deepspeed/runtime/zero/stage_1_and_2.py:1930);
// `fsdp`, PyTorch FSDP's SHARD_GRAD_OP (FSDP2's fully_shard(reshard_after_forward=False)), whose
// parameters stay sharded between steps and are all-gathered layer by layer before every micro-batch's
// forward, kept through its backward and freed after it, each layer's gradients reduce-scattered after
// its backward (pytorch/pytorch@v1.13.0 torch/distributed/fsdp/fully_sharded_data_parallel.py:140-148,
// :3386-3390). `auto`: the framework's (search::with_framework_defaults: fsdp under --framework torch-fsdp),
// otherwise DeepSpeed's. Which library shards is the framework's choice, not the kernels' (the stack): a
// HuggingFace model under DeepSpeed runs the PyTorch stacks' kernels with DeepSpeed's ZeRO-2.
enum class Zero2 { automatic, deepspeed, fsdp };
inline constexpr auto k_zero2_names =
    enum_table<Zero2>({{Zero2::automatic, "auto"}, {Zero2::deepspeed, "deepspeed"}, {Zero2::fsdp, "fsdp"}});
constexpr const auto& enum_names(Zero2) {
  return k_zero2_names;
}
// Which library shards the data parallelism of zero 3 and of FSDP's zero 2; what model::sharded_gradient_path
// prices (the bytes a layer's gradient moves through HBM on its way into the reduce-scatter, every
// backward). `fsdp1`: FullyShardedDataParallel (one flat parameter per wrapped module; Composer /
// llm-foundry, HuggingFace Accelerate and Trainer); `fsdp2`: fully_shard (per-parameter shards; torchtitan);
// `deepspeed`: DeepSpeed's ZeRO-3 (its gradient buckets). `auto`: the framework's (search::
// with_framework_defaults: fsdp2 under --framework torch-fsdp, deepspeed under deepspeed), otherwise fsdp1.
enum class ShardingLibrary { automatic, fsdp1, fsdp2, deepspeed };
inline constexpr auto k_sharding_library_names =
    enum_table<ShardingLibrary>({{ShardingLibrary::automatic, "auto"},
                                 {ShardingLibrary::fsdp1, "fsdp1"},
                                 {ShardingLibrary::fsdp2, "fsdp2"},
                                 {ShardingLibrary::deepspeed, "deepspeed"}});
constexpr const auto& enum_names(ShardingLibrary) {
  return k_sharding_library_names;
}
// A stack's host costs, microseconds. An op or a collective call takes at least the larger of the stack's
// cost and the cluster's launch floor.
struct StackCosts {
  double op_dispatch_us = 0;      // host dispatch of one modelled compute op (per launch it stands for)
  double collective_call_us = 0;  // host cost of one collective call (per GPU the process drives)
};
StackCosts stack_costs(Stack stack);

inline constexpr auto k_cp_comm_type_names = enum_table<CpCommType>({{CpCommType::a2a, "a2a"},
                                                                     {CpCommType::p2p, "p2p"},
                                                                     {CpCommType::allgather, "allgather"},
                                                                     {CpCommType::a2a_p2p, "a2a+p2p"}});
constexpr const auto& enum_names(CpCommType) {
  return k_cp_comm_type_names;
}
inline constexpr auto k_moe_dispatcher_names = enum_table<MoeDispatcher>(
    {{MoeDispatcher::alltoall, "alltoall"}, {MoeDispatcher::allgather, "allgather"}});
constexpr const auto& enum_names(MoeDispatcher) {
  return k_moe_dispatcher_names;
}

struct Strategy {
  int gpus = 1;                                // total GPUs
  int tp = 1, pp = 1, dp = 0, cp = 1, ep = 1;  // dp 0 = derive gpus / (tp·pp·cp)
  bool sp = false;                             // sequence parallelism (with tp)
  int vpp = 1;   // virtual pipeline stages per rank (interleaved schedule when > 1)
  int zero = 0;  // 0–3 (1: optimizer states sharded = distributed optimizer; 3 = FSDP)
  // Hybrid sharding (HSDP: FSDP's HYBRID_SHARD, torchtitan's data_parallel_shard_degree): ZeRO shards over
  // groups of dp_shard consecutive DP ranks (× cp, as the whole-group shard is over dp·cp), and the
  // dp / dp_shard groups are replicas that all-reduce their shards' gradients. 0 = shard over the whole dp
  // group (as dp_shard = dp); otherwise it divides dp, and 1 < dp_shard < dp needs zero >= 1.
  int dp_shard = 0;
  long global_batch = 0;  // sequences per iteration (0 = take the workload's)
  long micro_batch = 1;
  Recompute recompute = Recompute::none;
  // Full recompute of only the first N layers of each model chunk, the rest keeping their activations
  // (Megatron-Core's --recompute-method block --recompute-num-layers N, megatron/core/recompute.py); 0 =
  // every layer (--recompute-method uniform --recompute-num-layers 1). Needs recompute full.
  int recompute_layers = 0;
  // Full recompute of every k-th layer only, the others keeping their activations (torchtitan's
  // selective_ac_option = "k": the k-th, 2k-th, ... transformer block, counted from 1,
  // torchtitan/distributed/activation_checkpoint.py _apply_layer_sac); 0 = every layer. Needs recompute
  // full; not with recompute_layers.
  int recompute_every = 0;
  // torch.utils.checkpoint's early stop (non-reentrant checkpointing, PyTorch >= 2.1's default): the
  // recompute of a fully checkpointed layer ends as soon as the last activation its forward saved is back,
  // so what runs after the layer's last save is not rerun (model/cost_compute.cpp stop_early). Needs
  // recompute full and a PyTorch stack (Megatron's and DeepSpeed's checkpointing rerun the whole forward).
  bool recompute_early_stop = false;
  Schedule schedule = Schedule::one_f_one_b;
  OverlapMethod tp_overlap;  // TP overlap (model/overlap_method.h): none, slice:K, flash
  bool dp_overlap = true;    // DP gradient reduction overlapped with backward
  double bucket_mb = 25;     // DP gradient bucket, MB (10^6 bytes, PyTorch DDP's bucket_cap_mb)
  Precision precision = Precision::bf16;
  Attention attention = Attention::flash;
  Stack stack = Stack::megatron_core;                     // the software stack's host costs (StackCosts)
  PipelineSplit pp_tp_split = PipelineSplit::stack;       // pipeline transfers split over TP (PipelineSplit)
  Zero2 zero2 = Zero2::automatic;                         // what zero 2 is (Zero2)
  ShardingLibrary sharding = ShardingLibrary::automatic;  // which library shards zero 3 (ShardingLibrary)
  CpCommType cp_comm = CpCommType::a2a;                   // with cp > 1 (Megatron's cp_comm_type)
  // MoE as Megatron-Core runs it (docs/model.md "Mixture of experts"): the token dispatcher; the capacity
  // factor (0 = none: dropless; else capacity = ⌈local tokens·top_k/experts·factor⌉ rows per expert per
  // source rank, rows beyond it dropped); inputs padded to capacity (needs a factor); one grouped GEMM for
  // the local experts or one GEMM pair per expert in sequence (SequentialMLP); the expert tensor-parallel
  // size (0 = tp; resolve_strategy fills it in).
  MoeDispatcher moe_dispatcher = MoeDispatcher::alltoall;
  double moe_capacity_factor = 0;
  bool moe_pad_to_capacity = false;
  bool moe_grouped_gemm = true;
  int expert_tp = 0;
  // Pipeline split as Megatron-Core makes it (model/pipeline_split.h): layers on the first / last pipeline
  // rank (0 = the even split), and the embedding / the loss counted as one layer each.
  int first_stage_layers = 0, last_stage_layers = 0;
  bool embedding_in_split = false, loss_in_split = false;
  // Pipeline and distributed-optimizer overlap (Megatron-Core's DDP and schedules; docs/cli.md):
  bool p2p_overlap =
      false;  // interleaved schedule: sends/receives overlapped with compute (overlap_p2p_comm)
  bool param_gather_overlap = false;         // ZeRO 1/2: bucket b's all-gather overlaps the next forward
  bool param_gather_with_optimizer = false;  // ... and chunk 0's starts during the optimizer step
  // Gradient buffer and reduction dtype (grad_reduce_in_fp32); nullopt = the parameters' dtype.
  std::optional<Precision> grad_reduce_dtype;
  bool bucket_per_chunk = false;  // one gradient bucket per model chunk (bucket-mb chunk)
  // The vocabulary padded to a multiple of this × tp (make_vocab_size_divisible_by); 0 = not padded.
  int vocab_divisible_by = 0;
  // Megatron's defer_embedding_wgrad_compute with wgrad_deferral_limit N: the last pipeline stage keeps
  // the output layer's weight-gradient GEMM of its first N micro-batches and computes them after its last
  // backward, in the pipeline flush (docs/model.md "Deferred output-layer wgrad"); 0 = off. Only the
  // pipelined schedules drain them: at pp 1 it has no effect.
  int defer_embedding_wgrad = 0;
  // Megatron's cross_entropy_loss_fusion: the vocabulary-parallel loss in three fused kernels (28 B per
  // logit of the local shard against the unfused 52; docs/model.md "Memory-bound ops").
  bool cross_entropy_fusion = false;
  // tp-overlap te with FP8: the pipelined reduce-scatters (after the projection's and FC2's forward GEMMs)
  // use FP8 userbuffers, TE's fp8_buf (set by NeMo 2's Llama 3.1 FP8 userbuffers configs; off in TE's
  // default config): the GEMM writes FP8 and the reduce-scatter moves 1 B per element.
  bool tp_overlap_fp8_rs = false;
  // FP8 as Transformer Engine runs it with --precision fp8 (docs/model.md "FP8"): the transformer layers'
  // linear GEMMs in FP8, delayed scaling; everything else in BF16.
  bool fp8_params = false;     // FP8 primary weights (TE fp8_model_init): no per-iteration weight cast
  bool fp8_wgrad = true;       // weight-gradient GEMMs in FP8 (false: BF16, no transposed FP8 copies)
  bool fp8_attention = false;  // the core attention in FP8 (TE fp8_dot_product_attention)
  double dropout = 0;          // hidden and attention dropout probability (0: no dropout, no mask)
  bool operator==(const Strategy&) const = default;

  // The gradient buffer's dtype, which its reduction moves: grad_reduce_dtype, else the parameters' (bf16
  // for fp8 runs, whose parameters stay bf16; fp32 for tf32).
  [[nodiscard]] Precision gradient_dtype() const {
    if (grad_reduce_dtype) return *grad_reduce_dtype;
    if (precision == Precision::fp8) return Precision::bf16;
    if (precision == Precision::tf32) return Precision::fp32;
    return precision;
  }
  // Whether the layer at `index_in_chunk` (0 = the first layer of its model chunk) reruns its forward in the
  // backward: every policy recomputes every layer, but full with recompute_layers N only the first N of each
  // chunk and full with recompute_every k only every k-th (counted from 1 within the chunk: torchtitan
  // counts the blocks of the process, the same without pipeline parallelism).
  [[nodiscard]] bool recomputes_layer(int index_in_chunk) const {
    if (recompute == Recompute::none) return false;
    if (recompute_layers > 0) return index_in_chunk < recompute_layers;
    if (recompute_every > 0) return (index_in_chunk + 1) % recompute_every == 0;
    return true;
  }
  // Whether recomputed layers are checkpointed whole (every policy but none and Megatron's selective, which
  // recomputes the core attention inside a layer autograd otherwise saves).
  [[nodiscard]] bool checkpoints_layers() const {
    return recompute != Recompute::none && recompute != Recompute::selective;
  }
  // Whether ZeRO shards over groups smaller than dp (dp_shard < dp with zero >= 1): the sharded collectives
  // run on model::Group::dp_shard and the replicas all-reduce on model::Group::dp_replicate.
  [[nodiscard]] bool hybrid_shard() const { return zero >= 1 && dp_shard > 0 && dp_shard < dp; }
  // The ranks one ZeRO shard is split over (resolved): dp_shard·cp when hybrid, else dp·cp.
  [[nodiscard]] int zero_shard_ranks() const { return (hybrid_shard() ? dp_shard : dp) * cp; }
  // Micro-batches per iteration per pipeline: global_batch / (dp · micro_batch).
  [[nodiscard]] long micro_batches() const { return global_batch / (dp * micro_batch); }
};

// Fills derived fields (dp, global_batch from the workload, schedule interleaved when vpp > 1) and checks
// every divisibility rule; messages read e.g. "tp=3 does not divide heads=32",
// "gpus 1000 is not tp·pp·dp·cp (1·1·8·1 = 8)".
Result<Strategy> resolve_strategy(Strategy strategy, const WorkloadSpec& workload,
                                  const ClusterSpec& cluster);
nlohmann::json to_json(const Strategy& strategy);

// The vocabulary the model builds: workload.vocab rounded up to a multiple of vocab_divisible_by × tp
// (NVIDIA/NeMo@d2b21556:nemo/lightning/base.py:37-52, Megatron's _vocab_size_with_padding); unchanged when
// vocab_divisible_by is 0.
long padded_vocab(const WorkloadSpec& workload, const Strategy& strategy);
// The recomputation as tables print it: the policy's name, "full (N layers/chunk)" with recompute_layers,
// "full (every k layers)" with recompute_every.
std::string recompute_text(const Strategy& strategy);

}  // namespace lagom::model
