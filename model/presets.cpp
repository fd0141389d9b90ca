#include "model/presets.h"

#include <tuple>

#include <fmt/format.h>

namespace lagom::model {

namespace {

// One channel's network connection (GpuSpec::net_channel_GBps; docs/model.md "Channels and the network").
// Ampere: 12 GB/s = 192 GB/s measured on DGX-A100 (8x 200G, NVIDIA/nccl#812) over NCCL's 16 CTAs there;
// NVIDIA: a 200G NIC needs two SMs (NVIDIA/nccl#689, PR #645). Derived from maintainers' statements, not a
// sweep. Hopper: fitted on tests/data/nccl-tests (the 4-node ring at 16 GiB: 365.8 GB/s over 16 CTAs).
constexpr double k_net_channel_ampere_GBps = 12.0;
constexpr double k_net_channel_hopper_GBps = 22.9;

// --- Memory a training process cannot give its tensors (GpuSpec::memory_reserve_gib) -------------------
// The CUDA context with the kernels a training step loads (cuBLAS, cuDNN, Transformer Engine; lazily, CUDA
// 12's default module loading), GiB. Plausible 0.5–1 on A100/H100 (the context alone is about 0.5 GiB;
// nvidia-smi's per-process figure for a process that has only initialised CUDA). Not measured here.
constexpr double k_cuda_context_gib = 0.75;
// NCCL's buffers per connection of one channel: LL 8 lines·512 threads·8 steps·16 B = 0.5 MiB, LL128
// 120·640·8 steps·8 B = 4.69 MiB, Simple 4 MiB (NVIDIA/nccl@v2.28.9-1:src/init.cc:697-710,
// src/include/device.h:24,92-93,109-110), 9.19 MiB in all.
constexpr double k_nccl_connection_mib = (8.0 * 512 * 8 * 16 + 120.0 * 640 * 8 * 8 + 4.0 * 1048576) / 1048576;
// Connections one rank of a 3-D parallel job holds: about 4 communicators it runs collectives on (tp, dp,
// cp or pp, the embedding/expert group), 16 channels each, 2 connections per channel (a ring's
// predecessor and one tree/chain peer; NCCL_RUNTIME_CONNECT, on since 2.22, connects only the algorithms
// used). Plausible 50–300 (0.5–3 GiB).
constexpr double k_nccl_connections = 4.0 * 16 * 2;
// PyTorch's caching allocator keeps freed blocks for reuse and rounds large blocks up to 2 MiB
// (c10/cuda/CUDACachingAllocator.cpp kRoundLarge): the reserved memory exceeds the allocated by this
// fraction of the usable memory. Plausible 0.02–0.10.
constexpr double k_allocator_fragmentation = 0.05;

// The reserve of a GPU with `usable_gib` usable memory running an NCCL training job.
double training_reserve_gib(double usable_gib) {
  return k_cuda_context_gib + k_nccl_connections * k_nccl_connection_mib / 1024.0 +
         k_allocator_fragmentation * usable_gib;
}

// --- GPUs (datasheet figures, dense, no sparsity; docs/model.md#presets) ------------------------------
// usable_memory_gib: nvidia-smi's "Total" as boards report it (unverified here, no GPU: A100 80GB 81920
// MiB, H100 SXM5 80GB HBM3 81559 MiB, H200 SXM 141GB 143771 MiB, A40 with ECC 46068 MiB).
// memory_gib: the vendor's "80 GB" etc. taken as GiB, as nvidia-smi reports 81920 MiB for A100 80GB.
// unverified: H100/H200/A40 capacities as GiB (nvidia-smi shows slightly less on some boards).
GpuSpec a100() {
  GpuSpec g;
  g.name = "A100-SXM4-80GB";
  g.bf16_tflops = 312;
  g.fp16_tflops = 312;
  g.tf32_tflops = 156;
  g.fp32_tflops = 19.5;
  g.hbm_GBps = 2039;
  g.memory_gib = 80;
  g.usable_memory_gib = 81920.0 / 1024;
  g.memory_reserve_gib = training_reserve_gib(g.usable_memory_gib);
  g.sms = 108;
  g.l2_mib = 40;
  g.sm_arch = 80;
  g.channel_GBps =
      24.0;  // NCCL perChMaxTreeBws, Ampere, one node (NVIDIA/nccl@v2.28.9-1:src/graph/tuning.cc:189)
  g.net_channel_GBps = k_net_channel_ampere_GBps;
  g.pcie_gen = 4;
  return g;
}
// A100-SXM4-40GB (DGX A100 320GB): the 80 GB part's compute and SMs with HBM2 at 1555 GB/s (NVIDIA A100
// datasheet). unverified: nvidia-smi's Total taken as 40960 MiB, as for the 80 GB part.
GpuSpec a100_40gb() {
  GpuSpec g = a100();
  g.name = "A100-SXM4-40GB";
  g.hbm_GBps = 1555;
  g.memory_gib = 40;
  g.usable_memory_gib = 40960.0 / 1024;
  g.memory_reserve_gib = training_reserve_gib(g.usable_memory_gib);
  return g;
}
GpuSpec h100() {
  GpuSpec g;
  g.name = "H100-SXM5-80GB";
  g.bf16_tflops = 989;
  g.fp16_tflops = 989;
  g.fp8_tflops = 1979;
  g.tf32_tflops = 495;
  g.fp32_tflops = 67;
  g.hbm_GBps = 3350;
  g.memory_gib = 80;
  g.usable_memory_gib = 81559.0 / 1024;
  g.memory_reserve_gib = training_reserve_gib(g.usable_memory_gib);
  g.sms = 132;
  g.l2_mib = 50;
  g.sm_arch = 90;
  g.channel_GBps =
      38.7;  // NCCL perChMaxTreeBws, Hopper, one node (NVIDIA/nccl@v2.28.9-1:src/graph/tuning.cc:190)
  g.net_channel_GBps = k_net_channel_hopper_GBps;
  g.pcie_gen = 5;
  return g;
}
GpuSpec h200() {
  GpuSpec g = h100();
  g.name = "H200-SXM-141GB";
  g.hbm_GBps = 4800;
  g.memory_gib = 141;
  g.usable_memory_gib = 143771.0 / 1024;
  g.memory_reserve_gib = training_reserve_gib(g.usable_memory_gib);
  return g;
}
GpuSpec a40() {
  GpuSpec g;
  g.name = "A40-48GB";
  g.bf16_tflops = 149.7;
  g.fp16_tflops = 149.7;
  g.tf32_tflops = 74.8;  // unverified: half of the fp16 tensor rate, as on other Ampere parts
  g.fp32_tflops = 37.4;
  g.hbm_GBps = 696;
  g.memory_gib = 48;
  g.usable_memory_gib = 46068.0 / 1024;
  g.memory_reserve_gib = training_reserve_gib(g.usable_memory_gib);
  g.sms = 84;
  g.l2_mib = 6;
  g.sm_arch = 86;
  // NCCL's Ampere per-channel figure (tuning.cc:189): NCCL itself indexes sm86 as Ampere (tuning.cc:249).
  g.channel_GBps = 24.0;
  // unverified for sm86: no A40 measurement; the Ampere figure, as NCCL treats sm86 as Ampere.
  g.net_channel_GBps = k_net_channel_ampere_GBps;
  g.pcie_gen = 4;  // the A40 is a PCIe Gen4 x16 board (datasheet)
  return g;
}

// --- Fabrics --------------------------------------------------------------------------------------
// latency_us = NCCL's per-hop hardware latency of the link for Ring/Simple (tuning.cc hwLat: NVLink 3.4,
// PCI 5.7, NET 14 µs); other algorithms and protocols scale NCCL's table by latency_us / that value.
// efficiency = asymptotic ring busbw ÷ wire rate: A100 NVLink3 232.5 / 300 (nccl-tests#175; 0.78),
// H100 NVLink4 370 / 450 (nccl-tests#212; 0.82), PCIe 4.0 x16 25 / 31.5 (the "about 25 GB/s achievable"
// of docs/model.md#presets; 0.79).
FabricSpec nvswitch(double bw_GBps, double efficiency) {
  FabricSpec f;
  f.kind = FabricKind::nvswitch;
  f.bw_GBps = bw_GBps;
  f.latency_us = 3.4;
  f.efficiency = efficiency;
  return f;
}
FabricSpec pcie4() {
  FabricSpec f;
  f.kind = FabricKind::pcie;
  f.bw_GBps = 31.5;  // 16 GT/s × 16 lanes × 128/130 ÷ 8
  f.latency_us = 5.7;
  f.efficiency = 0.79;
  return f;
}
// Host start-up of a multi-node collective per channel (NicSpec::call_us_per_channel), fitted on the
// nccl-tests H100 runs (tests/data/nccl-tests, docs/model.md); assumed for the other networks (the same
// proxy code drives every NIC).
constexpr double k_network_call_us_per_channel = 2.25;

NicSpec nics(int count, double gbit, NicKind kind, double efficiency) {
  NicSpec n;
  n.count = count;
  n.gbit = gbit;
  n.kind = kind;
  // NCCL's NET hwLatency for Ring/Simple, 14 µs (tuning.cc:163). unverified for TCP: sockets through the
  // kernel take about twice an RDMA hop; no measurement at hand.
  n.latency_us = kind == NicKind::tcp ? 30.0 : 14.0;
  n.efficiency = efficiency;
  n.call_us_per_channel = k_network_call_us_per_channel;
  // One socket per connection carries about 2 GB/s (NVIDIA/nccl#209: one ring 2.06 GB/s on 32 GbE, two
  // 2.77, four 3.28); IB and RoCE queue pairs reach line rate (NVIDIA/nccl#2409: 392 Gb/s on one QP).
  if (kind == NicKind::tcp) n.connection_GBps = 2.06;
  return n;
}

// Collective launch overhead: the per-call host cost nccl-tests sees on top of NCCL's latency model, one
// process per GPU. Fitted on the nccl-tests DGX-A100 runs (tests/data/nccl-tests: one process per GPU, and
// one process driving 8 GPUs, which pays it 8 times): 4 µs. Assumed for the other presets (the same
// software stack). vTrain's older stack measured 30 µs (tests/data/vtrain/cluster-vtrain-a100.json).
constexpr double k_collective_launch_us = 4.0;
// unverified: a few µs of launch and ramp per compute kernel (CUDA launch overhead on a busy stream).
constexpr double k_kernel_launch_us = 3.0;

ClusterSpec node(std::string name, std::string description, GpuSpec gpu, FabricSpec intra, NicSpec nic,
                 CpuVendor cpu = CpuVendor::intel) {
  ClusterSpec c;
  c.name = std::move(name);
  c.description = std::move(description);
  c.gpus_per_node = 8;
  c.gpu = std::move(gpu);
  c.intra = intra;
  c.nic = nic;
  c.collective_launch_us = k_collective_launch_us;
  c.kernel_launch_us = k_kernel_launch_us;
  c.nccl_channels = 0;     // derived per communicator from NCCL's search (model/nccl_topology.h)
  c.nccl_version.clear();  // names none: the default 2.28.9 (ClusterSpec::nccl_version)
  c.cpu = cpu;
  return c;
}

std::vector<ClusterSpec> make_clusters() {
  // NIC efficiency: NDR 400G 0.98, fitted on the nccl-tests H100 ring (392.7 GB/s of 400 over 8 NICs,
  // tests/data/nccl-tests; nccl-tests#290 quotes 46–48 of 50). HDR 200G 0.96: "24GB/s is the peak
  // performance per 200G NIC (12 GB/s for 100G NICs)" (NVIDIA/nccl-tests#119) and 192 GB/s measured on
  // DGX-A100's 8 NICs (NVIDIA/nccl#812); 100G IB and RoCE by the same statement (12 of 12.5).
  // unverified: 25G TCP sockets 0.80 (no measurement at hand).
  // CPUs: DGX A100 has AMD EPYC 7742, DGX H100/H200 Intel Xeon 8480C (NVIDIA datasheets); the others are
  // not stated (NCCL's default, Intel).
  std::vector<ClusterSpec> out;
  out.push_back(node("dgx-a100",
                     "8x A100-SXM4-80GB, NVSwitch (NVLink3 300 GB/s), 8x 200 Gbit/s InfiniBand per node",
                     a100(), nvswitch(300, 0.78), nics(8, 200, NicKind::ib, 0.96), CpuVendor::amd));
  out.push_back(node("dgx-a100-40gb",
                     "8x A100-SXM4-40GB, NVSwitch (NVLink3 300 GB/s), 8x 200 Gbit/s InfiniBand per node",
                     a100_40gb(), nvswitch(300, 0.78), nics(8, 200, NicKind::ib, 0.96), CpuVendor::amd));
  out.push_back(node("dgx-h100",
                     "8x H100-SXM5-80GB, NVSwitch (NVLink4 450 GB/s), 8x 400 Gbit/s InfiniBand per node",
                     h100(), nvswitch(450, 0.82), nics(8, 400, NicKind::ib, 0.98)));
  out.push_back(node("dgx-h200",
                     "8x H200-SXM-141GB, NVSwitch (NVLink4 450 GB/s), 8x 400 Gbit/s InfiniBand per node",
                     h200(), nvswitch(450, 0.82), nics(8, 400, NicKind::ib, 0.98)));
  FabricSpec pairs = pcie4();
  pairs.kind = FabricKind::nvlink_pairs;
  pairs.pair_bw_GBps = 56.25;  // NVLink bridge: 112.5 GB/s both directions per pair
  out.push_back(node("a40-nvlink-ib400",
                     "8x A40 as 4 NVLink pairs on PCIe 4.0, 2x 400 Gbit/s InfiniBand per node", a40(), pairs,
                     nics(2, 400, NicKind::ib, 0.98)));
  out.push_back(node("a40-pcie-ib100", "8x A40 on PCIe 4.0, 1x 100 Gbit/s InfiniBand per node", a40(),
                     pcie4(), nics(1, 100, NicKind::ib, 0.96)));
  out.push_back(node("a100-eth100", "8x A100-SXM4-80GB NVSwitch nodes, 1x 100 Gbit/s RoCE per node", a100(),
                     nvswitch(300, 0.78), nics(1, 100, NicKind::roce, 0.96)));
  out.push_back(node("a100-eth25", "8x A100-SXM4-80GB NVSwitch nodes, 1x 25 Gbit/s TCP Ethernet per node",
                     a100(), nvswitch(300, 0.78), nics(1, 25, NicKind::tcp, 0.80)));
  return out;
}

WorkloadSpec dense(std::string name, int layers, long hidden, int heads, long vocab, long seq) {
  WorkloadSpec w;
  w.name = std::move(name);
  w.layers = layers;
  w.hidden = hidden;
  w.heads = heads;
  w.kv_heads = heads;
  w.ffn_hidden = 4 * hidden;
  w.ffn_type = FfnType::gelu;
  w.vocab = vocab;
  w.seq = seq;
  return w;
}
WorkloadSpec swiglu(std::string name, int layers, long hidden, int heads, int kv_heads, long ffn, long vocab,
                    long seq) {
  WorkloadSpec w = dense(std::move(name), layers, hidden, heads, vocab, seq);
  w.kv_heads = kv_heads;
  w.ffn_hidden = ffn;
  w.ffn_type = FfnType::swiglu;
  w.tied_embeddings = false;   // every SwiGLU preset here (LLaMA-2/3, Mixtral, OLMoE, DeepSeek-MoE) is untied
  w.norm = NormType::rmsnorm;  // ... and uses RMSNorm and rotary embeddings
  w.rope = true;
  return w;
}
WorkloadSpec t5(std::string name, int each, long hidden, int heads, long ffn) {
  WorkloadSpec w = dense(std::move(name), 2 * each, hidden, heads, 32128, 512);
  w.encoder_layers = each;
  w.decoder_layers = each;
  w.ffn_hidden = ffn;
  w.norm = NormType::rmsnorm;  // T5LayerNorm: no mean subtracted, no bias; positions by a relative bias
  return w;
}

std::vector<WorkloadSpec> make_workloads() {
  std::vector<WorkloadSpec> out;
  out.push_back(dense("gpt2", 12, 768, 12, 50257, 1024));
  out.push_back(dense("gpt2-medium", 24, 1024, 16, 50257, 1024));
  out.push_back(dense("gpt2-large", 36, 1280, 20, 50257, 1024));
  out.push_back(dense("gpt2-xl", 48, 1600, 25, 50257, 1024));
  for (auto [name, layers, hidden, heads] :
       {std::tuple{"bert-base", 12, 768L, 12}, {"bert-large", 24, 1024L, 16}}) {
    WorkloadSpec bert = dense(name, layers, hidden, heads, 30522, 512);
    bert.causal = false;  // a bidirectional encoder
    out.push_back(bert);
  }
  out.push_back(t5("t5-base", 12, 768, 12, 3072));
  out.push_back(t5("t5-large", 24, 1024, 16, 4096));
  WorkloadSpec phi = dense("phi-2", 32, 2560, 32, 51200, 2048);
  phi.ffn_hidden = 10240;
  phi.tied_embeddings = false;
  phi.rope = true;  // partial: 32 of each head's 80 dimensions, priced as the whole head
  out.push_back(phi);
  WorkloadSpec mpt = dense("mpt-7b", 32, 4096, 32, 50432, 2048);
  mpt.ffn_hidden = 16384;
  out.push_back(mpt);
  out.push_back(swiglu("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096));
  out.push_back(swiglu("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192));
  out.push_back(swiglu("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192));
  out.push_back(dense("gpt3-175b", 96, 12288, 96, 50257, 2048));
  WorkloadSpec mixtral = swiglu("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, 4096);
  mixtral.moe = MoeSpec{8, 2, 14336, 0, 0};
  out.push_back(mixtral);
  WorkloadSpec olmoe = swiglu("olmoe-1b-7b", 16, 2048, 16, 16, 1024, 50304, 4096);
  olmoe.moe = MoeSpec{64, 8, 1024, 0, 0};
  out.push_back(olmoe);
  WorkloadSpec deepseek = swiglu("deepseek-moe-16b", 28, 2048, 16, 16, 10944, 102400, 4096);
  deepseek.moe = MoeSpec{64, 6, 1408, 2, 1};
  out.push_back(deepseek);
  return out;
}

}  // namespace

const std::vector<ClusterSpec>& cluster_presets() {
  static const std::vector<ClusterSpec> presets = make_clusters();
  return presets;
}
const std::vector<WorkloadSpec>& workload_presets() {
  static const std::vector<WorkloadSpec> presets = make_workloads();
  return presets;
}

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> names;
  for (const auto& c : cluster_presets()) names.push_back(c.name);
  names.emplace_back(k_localhost);
  return names;
}
std::vector<std::string> workload_preset_names() {
  std::vector<std::string> names;
  for (const auto& w : workload_presets()) names.push_back(w.name);
  return names;
}

Result<ClusterSpec> cluster_preset(const std::string& name) {
  for (const auto& c : cluster_presets()) {
    if (c.name == name) return c;
  }
  if (name == k_localhost) {
    return make_error(ErrorCode::unavailable,
                      "cluster localhost: no complete profile of this machine; run 'lagom profile' first");
  }
  return make_error(ErrorCode::not_found,
                    fmt::format("cluster {}: unknown preset (see 'lagom presets')", name));
}

Result<WorkloadSpec> workload_preset(const std::string& name) {
  for (const auto& w : workload_presets()) {
    if (w.name == name) return w;
  }
  return make_error(ErrorCode::not_found,
                    fmt::format("model {}: unknown preset (see 'lagom presets')", name));
}

}  // namespace lagom::model
