#include "model/collectives.h"

#include <utility>

namespace lagom::model {

namespace {
constexpr std::array<std::pair<Algo, std::string_view>, 8> k_algo_names{
    {{Algo::tree, "tree"},
     {Algo::ring, "ring"},
     {Algo::collnet_direct, "collnet_direct"},
     {Algo::collnet_chain, "collnet_chain"},
     {Algo::nvls, "nvls"},
     {Algo::nvls_tree, "nvls_tree"},
     {Algo::pat, "pat"},
     {Algo::p2p, "p2p"}}};
constexpr std::array<std::pair<Proto, std::string_view>, 3> k_proto_names{
    {{Proto::ll, "ll"}, {Proto::ll128, "ll128"}, {Proto::simple, "simple"}}};
}  // namespace

std::string_view to_string(Algo algo) {
  for (const auto& [a, n] : k_algo_names) {
    if (a == algo) return n;
  }
  return "unknown";
}
std::string_view to_string(Proto proto) {
  for (const auto& [p, n] : k_proto_names) {
    if (p == proto) return n;
  }
  return "unknown";
}
std::optional<Algo> parse_algo(std::string_view name) {
  for (const auto& [a, n] : k_algo_names) {
    if (n == name) return a;
  }
  return std::nullopt;
}
std::optional<Proto> parse_proto(std::string_view name) {
  for (const auto& [p, n] : k_proto_names) {
    if (n == name) return p;
  }
  return std::nullopt;
}

std::int64_t default_chunk_bytes(Proto proto, std::int64_t buffsize_bytes) {
  switch (proto) {
    case Proto::simple:
      return buffsize_bytes / 2;
    case Proto::ll:
      return k_nccl_ll_buffsize / k_nccl_steps / 2;
    case Proto::ll128:
      return k_nccl_ll128_buffsize / k_nccl_steps / 16 * 15;
  }
  return buffsize_bytes / 2;
}

std::string_view to_string(Runtime runtime) {
  return runtime == Runtime::nccl ? "nccl" : "nccl-extended";
}
std::optional<Runtime> parse_runtime(std::string_view name) {
  if (name == "nccl") return Runtime::nccl;
  if (name == "nccl-extended") return Runtime::nccl_extended;
  return std::nullopt;
}
std::string_view to_string(KnobScope scope) {
  switch (scope) {
    case KnobScope::per_call:
      return "per_call";
    case KnobScope::per_communicator:
      return "per_communicator";
    case KnobScope::per_process:
      return "per_process";
    case KnobScope::not_settable:
      return "not_settable";
  }
  return "not_settable";
}
std::string_view to_string(Knob knob) {
  switch (knob) {
    case Knob::algo:
      return "algo";
    case Knob::proto:
      return "proto";
    case Knob::channels:
      return "channels";
    case Knob::comm_ctas:
      return "comm_ctas";
    case Knob::threads:
      return "threads";
    case Knob::chunk:
      return "chunk";
  }
  return "unknown";
}

bool tuner_collective(Collective collective) {
  switch (collective) {
    case Collective::allreduce:
    case Collective::allgather:
    case Collective::reducescatter:
    case Collective::broadcast:
    case Collective::reduce:
      return true;
    case Collective::alltoall:
    case Collective::sendrecv:
      return false;
  }
  return false;
}

KnobScope knob_scope(Runtime runtime, Collective collective, Knob knob) {
  if (runtime == Runtime::nccl_extended) return KnobScope::per_call;
  const bool tuned = tuner_collective(collective);
  switch (knob) {
    case Knob::algo:
    case Knob::proto:
      return tuned ? KnobScope::per_call : KnobScope::not_settable;
    case Knob::channels:
      return tuned ? KnobScope::per_call : KnobScope::per_communicator;
    case Knob::comm_ctas:
      return KnobScope::per_communicator;
    case Knob::threads:
    case Knob::chunk:
      return KnobScope::per_process;
  }
  return KnobScope::not_settable;
}

}  // namespace lagom::model
