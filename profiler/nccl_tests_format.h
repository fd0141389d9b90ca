// nccl-tests' text formats: rendering our collective samples as nccl-tests' stdout table, and reading
// logs users already have: nccl-tests stdout (any *_perf binary) and vTrain's LUT CSV files
// (e.g. AR_GPU8_1M_1024M_LUT). Pure functions on text; no I/O.
//
// nccl-tests table (src/common.cu; column layout from memory, unverified against every version):
//   #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw
//   busbw #wrong
//           1024           256     float     sum      -1    10.21    0.10    0.19      0    10.05    0.10
//           0.20      0
// out-of-place columns first, then in-place; sizes in bytes, time in µs, bandwidths in GB/s.
// Older versions print no root column (12 fields); #wrong may read N/A when checking was off.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "db/database.h"

namespace lagom::profiler {

// Renders samples as nccl-tests tables, one block per series (collective, algo, proto, channels,
// ranks, nodes) in first-seen order; out-of-place and in-place samples of the same size share a row.
std::string render_nccl_tests(const std::vector<db::CommSample>& samples);

// What the caller knows that a log may not say.
struct ImportOptions {
  std::optional<std::string> collective;  // --collective: overrides the file name
  std::optional<int> ranks;               // --ranks: overrides the file name / log
  std::optional<int> nodes;               // --nodes: overrides the log (default: what it says, else 1)
};

struct ImportedLog {
  std::string format;  // "nccl-tests" | "vtrain-lut"
  std::string collective;
  int ranks = 0;
  int nodes = 1;
  std::string host;  // first host named in the log, "" when none
  std::vector<db::CommSample> samples;
  // Rows not imported, each "line N: why" (a size or time that is not a measurement, #wrong > 0, a row
  // whose bandwidth columns contradict its size and time or the collective's bus factor, a short row).
  std::vector<std::string> skipped;
};

// Parses `text` read from a file named `file_name` (base name used for the collective and rank count
// when the log does not say). Every row is checked (ImportedLog::skipped says what was left out and
// why). Errors (invalid_input): no usable data rows, unknown collective, no rank count, a rank count
// outside 1..model::k_max_gpus (a vTrain file AR_GPU0 names 0: the error names the file), nodes that do
// not divide the ranks.
Result<ImportedLog> parse_log(const std::string& file_name, const std::string& text,
                              const ImportOptions& options);

// The collective a file name suggests: vTrain prefixes (AR_, AG_, RS_, A2A_) or nccl-tests binary names
// (all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv). nullopt when none.
std::optional<std::string> collective_from_file_name(const std::string& file_name);

}  // namespace lagom::profiler
