// The production record: one line of JSON per collective (or point-to-point operation) a running job
// executed, written by the NCCL profiler plugin (shim/profiler_plugin.cpp) and by the MPI profiler
// backend (profiler/mpi_bench.cpp), read by `lagom db import`, `lagom check --predicted` and
// `lagom adapt`. The format is specified in docs/records.md; this module holds its one writer and its one
// reader, so the two cannot drift.
//
// Record is plain data with fixed-size strings (no allocation), so the plugin can copy it into a
// lock-free ring buffer on NCCL's hot path and format it later on its writer thread.
//
// Thread safety: every function is reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lagom::records {

// The format version every line carries ("version"); the reader rejects any other.
inline constexpr int k_version = 1;

enum class Kind : std::uint8_t {
  collective,  // allreduce, allgather, reducescatter, broadcast, reduce, alltoall, ...
  p2p,         // one send or recv of a group of point-to-point operations
};

// Fixed-size text fields: NUL-terminated, truncated to fit by set_text.
template <std::size_t N>
struct Text {
  char value[N] = {};
  [[nodiscard]] std::string_view view() const;
  // Copies at most N-1 bytes of `text` (nullptr = empty).
  void set(std::string_view text);
  void set(const char* text) { set(text == nullptr ? std::string_view() : std::string_view(text)); }
};

struct Record {
  Kind kind = Kind::collective;
  Text<8> source;               // who measured: "nccl" (the profiler plugin) or "mpi" (lagom profile)
  Text<64> host;                // host name of the measuring process
  std::int64_t pid = 0;         // its process id
  std::uint64_t comm_hash = 0;  // the communicator (NCCL's commHash; the MPI backend's group hash)
  std::int32_t rank = 0;        // this process's rank in the communicator
  std::int32_t n_ranks = 0;     // ranks of the communicator (>= 1)
  std::int32_t n_nodes = 0;     // nodes it spans (>= 1)
  Text<16> collective;          // Lagom's name (collective_from_nccl); "send"/"recv" for p2p
  std::uint64_t count = 0;      // elements, as the collective's call passed them
  Text<16> dtype;               // Lagom's name of the element type (dtype_from_nccl): "float32", ...
  std::uint64_t bytes = 0;      // count × element size (saturating)
  Text<16> algorithm;           // "ring", "tree", ... as NCCL ran it; "" = unknown (MPI's choice)
  Text<8> protocol;             // "simple", "ll", "ll128"; "" = unknown
  std::int32_t channels = 0;    // channels it ran on; 0 = unknown
  std::uint64_t seq = 0;        // per communicator and collective sequence number (NCCL's seqNumber)
  std::int32_t peer = -1;       // p2p: the remote rank; -1 for collectives
  // Time base of start/end: "gpu" (GPU global timer), "host" (MPI_Wtime), or "enqueue" (host monotonic
  // clock around the enqueue of a copy-engine collective, whose execution NCCL does not time).
  Text<8> clock;
  std::int64_t start_ns = 0;  // start of execution
  std::int64_t end_ns = 0;    // end of execution (>= start_ns)

  [[nodiscard]] double duration_us() const { return static_cast<double>(end_ns - start_ns) / 1e3; }
  // False for "enqueue" records: their duration is not the operation's, so no fit or drift check reads it.
  [[nodiscard]] bool times_execution() const { return clock.view() != "enqueue"; }
};

// What the plugin says about itself when it closes a file: how many records it wrote and dropped.
struct Summary {
  Text<64> host;
  std::int64_t pid = 0;
  std::uint64_t recorded = 0;       // records handed to the writer
  std::uint64_t dropped_full = 0;   // a thread's ring buffer was full
  std::uint64_t dropped_slots = 0;  // no free in-flight slot when the operation started
  std::uint64_t untimed = 0;        // finished without any kernel-channel timing
  std::uint64_t write_failed = 0;   // lines lost to a failed write (full disk, unwritable directory)
};

// Longest line format_record/format_summary write, newline included.
inline constexpr std::size_t k_max_line_bytes = 1024;

// Writes `record` as one JSON line ending in '\n' into `out` (capacity >= k_max_line_bytes); returns the
// bytes written. Never allocates, never throws.
std::size_t format_record(const Record& record, char* out, std::size_t capacity) noexcept;
std::size_t format_summary(const Summary& summary, char* out, std::size_t capacity) noexcept;

// One parsed line.
struct ParsedLine {
  enum class Type { record, summary, blank, error } type = Type::blank;
  Record record;
  Summary summary;
  std::string error;  // Type::error: why the line is not a record (names the field)
};
// Parses one line (without its newline). Blank lines are Type::blank; a line of another version, a
// missing or mistyped field, a value out of its range or not one docs/records.md allows (a collective,
// dtype, algorithm, protocol, source or clock the format does not have; bytes other than count x the
// dtype's size; a p2p record of a collective; a peer, clock or source that contradicts the kind, algorithm
// or source) is Type::error, its message naming the field, its value and what is allowed.
ParsedLine parse_record_line(std::string_view line);

// The identity of a record across files and imports: the same operation read twice (a file imported
// again, a rotated file) has the same key.
std::string record_key(const Record& record);

// NCCL's names (src/collectives.cc: ncclFuncToString, ncclDatatypeToString, ncclAlgoToString,
// ncclProtoToString) to Lagom's; nullptr or an unknown name gives "unknown" (collective, dtype) or ""
// (algorithm, protocol).
const char* collective_from_nccl(const char* nccl_func);
const char* dtype_from_nccl(const char* nccl_datatype);
const char* algorithm_from_nccl(const char* nccl_algo);
const char* protocol_from_nccl(const char* nccl_proto);
// Bytes per element of a Lagom dtype name; 0 when unknown.
std::size_t dtype_bytes(std::string_view dtype);
// A record's `bytes`: count x the element size of `dtype`, saturating at 2^64-1; 0 for an unknown dtype.
// The writers write it and the reader refuses any other value.
std::uint64_t record_bytes(std::uint64_t count, std::string_view dtype);

}  // namespace lagom::records
