// Collectives across MPI ranks with nccl-tests' semantics (docs/cli.md#units): float data, sum; `bytes`
// is nccl-tests' size (per-rank buffer; the total across ranks for allgather's output and
// reducescatter's input), rounded down to whole elements (whole per-rank chunks where a collective
// splits its buffer). One call on freshly initialised buffers is checked element by element (#wrong,
// summed over ranks); then warm-up calls. The timed calls run in `batches` rounds: each round times one
// barrier-started batch of every size and placement of the series in turn, so a stretch of load on a
// shared machine (another process, a rank descheduled for a time slice) falls on all sizes alike rather
// than on the few measured while it lasted; rounds continue (up to max_rounds) until every size's two
// fastest batches agree. time_us is a size's fastest batch's slowest-rank mean time per call. (nccl-tests
// reports the plain mean over all timed calls averaged over ranks; such delays make that mean arbitrary,
// while they never make a batch faster.) Every rank must call with the same arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "db/database.h"
#include "profiler/group.h"

namespace lagom::profiler {

struct CollectiveTiming {
  int warmup_iters = 5;      // untimed calls after the checked call
  int min_iters = 5;         // timed calls at least
  int max_iters = 200;       // and at most
  double target_us = 20000;  // budget for the timed calls of one measurement
  int batches = 7;           // timed calls are split into this many barrier-separated batches (rounds)
  int max_rounds = 21;       // more rounds while the two fastest batches of a size disagree
  double agreement = 0.03;   // by more than this fraction
  // Told every timed call (may be empty): its nccl-tests bytes and its start and end on this rank, in
  // nanoseconds of the steady clock (MPI_Wtime's doubles resolve only ~0.2 us at epoch seconds).
  // `lagom profile --records` writes production records from it (docs/records.md).
  std::function<void(std::int64_t bytes, std::int64_t start_ns, std::int64_t end_ns)> on_call;
};

// Measures one collective at every size of `sizes_bytes`, out of place then in place: two samples per
// size, in that order. `nodes` is stored in the samples; `on_size` (may be empty) is told each size once
// it is checked and warmed up. invalid_input for an unknown collective or a size below one element per
// rank; failure when MPI fails.
Result<std::vector<db::CommSample>> measure_mpi_series(Group& group, const std::string& collective,
                                                       const std::vector<std::int64_t>& sizes_bytes,
                                                       int nodes, const CollectiveTiming& timing,
                                                       const std::function<void(std::int64_t)>& on_size);

// The element count nccl-tests prints for `bytes` of `collective` over `ranks` (float elements): the
// count argument of the call (per-rank count for allgather and reducescatter, unverified).
std::int64_t nccl_tests_count(const std::string& collective, std::int64_t bytes, int ranks);
// `bytes` rounded down to what the collective can move (whole floats, whole per-rank chunks).
std::int64_t round_collective_bytes(const std::string& collective, std::int64_t bytes, int ranks);

}  // namespace lagom::profiler
