// Collectives: NCCL's algorithms × protocols, the knobs (channels, threads, chunk), NCCL's own tuning model
// (which algorithm/protocol NCCL picks by default: the "NCCL default" baseline) and which (algorithm,
// protocol) NCCL allows for a collective on a topology. Pricing lives in CostModel (model/cost_model.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/collective_factors.h"

namespace lagom::model {

// NCCL's algorithms, in NCCL's own order (NCCL_ALGO_TREE = 0 ...), plus p2p: alltoall and sendrecv run as
// point-to-point sends with no algorithm choice.
enum class Algo { tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat, p2p };
// NCCL's protocols, in NCCL's order (NCCL_PROTO_LL = 0, LL128 = 1, SIMPLE = 2).
enum class Proto { ll, ll128, simple };
inline constexpr int k_nccl_algos = 7;  // p2p excluded
inline constexpr int k_nccl_protos = 3;
inline constexpr std::array<Algo, 7> k_all_algos{
    Algo::tree,      Algo::ring, Algo::collnet_direct, Algo::collnet_chain, Algo::nvls,
    Algo::nvls_tree, Algo::pat};
inline constexpr std::array<Proto, 3> k_all_protos{Proto::ll, Proto::ll128, Proto::simple};

inline constexpr auto k_algo_names = enum_table<Algo>({{Algo::tree, "tree"},
                                                       {Algo::ring, "ring"},
                                                       {Algo::collnet_direct, "collnet_direct"},
                                                       {Algo::collnet_chain, "collnet_chain"},
                                                       {Algo::nvls, "nvls"},
                                                       {Algo::nvls_tree, "nvls_tree"},
                                                       {Algo::pat, "pat"},
                                                       {Algo::p2p, "p2p"}});
constexpr const auto& enum_names(Algo) {
  return k_algo_names;
}
inline constexpr auto k_proto_names =
    enum_table<Proto>({{Proto::ll, "ll"}, {Proto::ll128, "ll128"}, {Proto::simple, "simple"}});
constexpr const auto& enum_names(Proto) {
  return k_proto_names;
}

// Knob defaults of NCCL (NVIDIA/nccl@v2.28.9-1):
inline constexpr int k_nccl_default_threads =
    512;  // NCCL_SIMPLE_MAX_NTHREADS, NCCL_LL_MAX_NTHREADS (device.h:90-92)
inline constexpr int k_nccl_max_channels = 64;  // MAXCHANNELS (src/include/device.h:86)
inline constexpr std::int64_t k_nccl_default_buffsize = 4
                                                        << 20;  // DEFAULT_BUFFSIZE, Simple (src/init.cc:699)
// DEFAULT_LL_BUFFSIZE = 8 lines × 512 threads × 8 steps × 16 B (init.cc:697; device.h:24, :92-93).
inline constexpr std::int64_t k_nccl_ll_buffsize = 8 * 512 * 8 * 16;
// DEFAULT_LL128_BUFFSIZE = 120 elements × 640 threads × 8 steps × 8 B (init.cc:698; device.h:109-110).
inline constexpr std::int64_t k_nccl_ll128_buffsize = 120 * 640 * 8 * 8;
inline constexpr int k_nccl_steps = 8;  // NCCL_STEPS: FIFO slots per connection (device.h:24)

// Default chunk of a protocol for a given Simple buffer size (NCCL's calcCollChunking,
// NVIDIA/nccl@v2.28.9-1:src/enqueue.cc:2023-2028): Simple ring chunk = BUFFSIZE / 2 (chunkSteps =
// ALLREDUCE_CHUNKSTEPS = NCCL_STEPS/2 slots of BUFFSIZE/NCCL_STEPS, src/include/collectives.h:18); LL half a
// slot of its buffer (the other half is flags); LL128 a slot's 15 data elements of every 16.
std::int64_t default_chunk_bytes(Proto proto, std::int64_t buffsize_bytes = k_nccl_default_buffsize);

// The largest chunk NCCL lets a tuner plugin set for a call (tuner v6's getChunkSize, NCCL 2.30+):
// bufferMaxChunkSize = one slot of the protocol's buffer (its BUFFSIZE / NCCL_STEPS) × chunkSteps
// (NCCL_STEPS / 2 for Simple ring, else 1), LL half of it, LL128 its 15 data elements of 16; a larger
// value is clamped to it (NVIDIA/nccl@v2.30.7-1:src/enqueue.cc:2222-2229, clamp at :2308-2317).
// `buffsize_bytes` is the Simple buffer (NCCL_BUFFSIZE); LL and LL128 keep theirs.
std::int64_t nccl_chunk_ceiling(Algo algo, Proto proto,
                                std::int64_t buffsize_bytes = k_nccl_default_buffsize);

// Where a communicator's ranks sit: ranks over nodes, ranks/nodes GPUs per node (uniform).
struct CommGroup {
  int ranks = 2;
  int nodes = 1;
  // The fraction of each of its NICs' line rate this communicator's calls get (model/nccl_topology.h
  // nic_rates): 1 for a communicator alone on its nodes, as nccl-tests runs it; below 1 when the node's
  // other ranks run symmetric copies of it at the same time over the same NICs (the simulator's shared-NIC
  // rule, simulator/model_costs.h). In (0, 1].
  double nic_share = 1.0;
  [[nodiscard]] int ranks_per_node() const { return (ranks + nodes - 1) / nodes; }
  bool operator==(const CommGroup&) const = default;
};

// NCCL's CTA policy of a communicator (ncclConfig_t.CTAPolicy, or NCCL_CTA_POLICY for every communicator of
// the process; NVIDIA/nccl@v2.28.9-1:src/nccl.h.in:64-66, src/init.cc:60 and :1745-1749). `zero` runs an
// AllGather or AlltoAll on the copy engines, holding no SM, when NCCL can (CostModel::copy_engine_eligible:
// one node of NVLink peers, buffers in symmetric windows; enqueue.cc:2577-2582); every other call runs its
// kernel as under `default`. NCCL's third policy, EFFICIENCY (pick NVLS with fewer CTAs for registered
// buffers, enqueue.cc:1949-1965), is not modelled.
enum class CtaPolicy { default_policy, zero };
inline constexpr auto k_cta_policy_names =
    enum_table<CtaPolicy>({{CtaPolicy::default_policy, "default"}, {CtaPolicy::zero, "zero"}});
constexpr const auto& enum_names(CtaPolicy) {
  return k_cta_policy_names;
}
// The value NCCL_CTA_POLICY takes for a policy (nccl.h.in:64-66: DEFAULT 0x00, ZERO 0x02).
constexpr int nccl_cta_policy_value(CtaPolicy policy) {
  return policy == CtaPolicy::zero ? 2 : 0;
}

// One fully specified collective configuration (the knobs of one call).
struct CollConfig {
  Algo algo = Algo::ring;
  Proto proto = Proto::simple;
  int channels = 0;              // CTAs (one per channel, each on one SM); 0 = the communicator's default
  int threads = 0;               // threads per CTA; 0 = NCCL's default (512; 640 for LL128)
  std::int64_t chunk_bytes = 0;  // bytes per pipeline chunk per channel; 0 = the protocol's default
  // The communicator's CTA policy; under `zero` an eligible call runs on the copy engines and the fields
  // above describe the kernel NCCL would run otherwise.
  CtaPolicy cta_policy = CtaPolicy::default_policy;
  bool operator==(const CollConfig&) const = default;
};

// What a runtime can set, and at which scope (docs/model.md#knob-scopes).
enum class Runtime { nccl, nccl_extended };
enum class Knob { algo, proto, channels, comm_ctas, threads, chunk };
enum class KnobScope {
  per_call,          // the tuner plugin sets it per call (getCollInfo), or the patched runtime does
  per_communicator,  // ncclConfig_t minCTAs/maxCTAs (one value for every call on the communicator)
  per_process,       // environment (NCCL_NTHREADS, NCCL_BUFFSIZE): one value for every communicator
  not_settable,      // the runtime offers no way to set it for this collective
};
inline constexpr auto k_runtime_names =
    enum_table<Runtime>({{Runtime::nccl, "nccl"}, {Runtime::nccl_extended, "nccl-extended"}});
constexpr const auto& enum_names(Runtime) {
  return k_runtime_names;
}
inline constexpr auto k_knob_names = enum_table<Knob>({{Knob::algo, "algo"},
                                                       {Knob::proto, "proto"},
                                                       {Knob::channels, "channels"},
                                                       {Knob::comm_ctas, "comm_ctas"},
                                                       {Knob::threads, "threads"},
                                                       {Knob::chunk, "chunk"}});
constexpr const auto& enum_names(Knob) {
  return k_knob_names;
}
inline constexpr auto k_knob_scope_names =
    enum_table<KnobScope>({{KnobScope::per_call, "per_call"},
                           {KnobScope::per_communicator, "per_communicator"},
                           {KnobScope::per_process, "per_process"},
                           {KnobScope::not_settable, "not_settable"}});
constexpr const auto& enum_names(KnobScope) {
  return k_knob_scope_names;
}
// True for the collectives NCCL asks a tuner plugin about: allreduce, allgather, reducescatter,
// broadcast, reduce.
bool tuner_collective(Collective collective);
// The scope at which `knob` can be set for `collective` under `runtime`:
//   nccl: algo/proto per call for tuner collectives (else not settable); channels per call at or below the
//         communicator's count for tuner collectives, per communicator for alltoall/sendrecv; comm_ctas per
//         communicator; threads per process; chunk per process (NCCL_BUFFSIZE), or per call for tuner
//         collectives where the NCCL asks its tuner for each call's chunk (`tuner_chunk`: tuner v6's
//         getChunkSize, NCCL 2.30 and later: tuner_sets_chunk in model/nccl_topology.h).
//   nccl_extended: everything per call (a patched NCCL, as AutoCCL's fork).
KnobScope knob_scope(Runtime runtime, Collective collective, Knob knob, bool tuner_chunk = false);

}  // namespace lagom::model
