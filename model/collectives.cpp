#include "model/collectives.h"

#include <utility>

namespace lagom::model {

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

std::int64_t nccl_chunk_ceiling(Algo algo, Proto proto, std::int64_t buffsize_bytes) {
  switch (proto) {
    case Proto::simple:
      return buffsize_bytes / k_nccl_steps * (algo == Algo::ring ? k_nccl_steps / 2 : 1);
    case Proto::ll:
    case Proto::ll128:
      return default_chunk_bytes(proto);
  }
  return buffsize_bytes / k_nccl_steps;
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

KnobScope knob_scope(Runtime runtime, Collective collective, Knob knob, bool tuner_chunk) {
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
      return KnobScope::per_process;
    case Knob::chunk:
      return tuned && tuner_chunk ? KnobScope::per_call : KnobScope::per_process;
  }
  return KnobScope::not_settable;
}

}  // namespace lagom::model
