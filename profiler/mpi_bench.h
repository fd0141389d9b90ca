// Collectives across MPI ranks with nccl-tests' semantics (DESIGN.md "Units"): float data, sum; `bytes`
// is nccl-tests' size (per-rank buffer; the total across ranks for allgather's output and
// reducescatter's input), rounded down to whole elements (whole per-rank chunks where a collective
// splits its buffer). One call on freshly initialised buffers is checked element by element (#wrong,
// summed over ranks); then warm-up calls, then the timed calls in `batches` batches, each started after a
// barrier. time_us is the fastest batch's slowest-rank mean time per call. (nccl-tests reports the plain
// mean over all timed calls averaged over ranks; on a shared machine a rank descheduled for a time slice
// makes that mean arbitrary, while such delays never make a batch faster.) Every rank must call with
// the same arguments.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"
#include "db/database.h"
#include "profiler/group.h"

namespace lagom::profiler {

struct CollectiveTiming {
  int warmup_iters = 5;      // untimed calls after the checked call
  int min_iters = 5;         // timed calls at least
  int max_iters = 200;       // and at most
  double target_us = 20000;  // budget for the timed calls of one measurement
  int batches = 7;           // timed calls are split into this many barrier-separated batches
};

// Measures one collective at one size and placement. `nodes` is stored in the sample.
// invalid_input for an unknown collective or a size below one element per rank; failure when MPI fails.
Result<db::CommSample> measure_mpi_collective(Group& group, const std::string& collective, std::int64_t bytes,
                                              bool in_place, int nodes, const CollectiveTiming& timing);

// The element count nccl-tests prints for `bytes` of `collective` over `ranks` (float elements): the
// count argument of the call (per-rank count for allgather and reducescatter, unverified).
std::int64_t nccl_tests_count(const std::string& collective, std::int64_t bytes, int ranks);
// `bytes` rounded down to what the collective can move (whole floats, whole per-rank chunks).
std::int64_t round_collective_bytes(const std::string& collective, std::int64_t bytes, int ranks);

}  // namespace lagom::profiler
