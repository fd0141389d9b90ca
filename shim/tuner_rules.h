// The tuned rules the NCCL tuner plugin applies, and their parser. Part of libnccl-tuner-lagom.so only;
// depends on nothing else of Lagom (the plugin must load into any process that uses NCCL).
//
// File format (what `lagom tune` writes as nccl_tuner.conf; NVIDIA's example-plugin CSV):
//   # collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff[,chunk]
//   allreduce,0,65535,tree,ll,4,2,16,-1,-1
// Blank lines and lines whose first non-blank character is '#' are ignored. Fields are comma separated and
// whitespace-trimmed; 8, 9 or 10 fields (omitted trailing fields mean "any"), or 11 with Lagom's chunk
// column (bytes per chunk, applied through tuner v6's getChunkSize; NVIDIA's format stops at regBuff).
// -1 means "any" for min_bytes, max_bytes, nNodes, nRanks, numPipeOps, regBuff and "keep NCCL's" for
// channels and chunk; algorithm and
// protocol are both named or both -1 (a channels-only rule). Byte ranges are inclusive.
// A file with any bad line is rejected as a whole (ParseResult::error names the line): applying the rest
// would silently change which line matches first.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lagom::shim {

inline constexpr int k_any = -1;

// One line of the config. Values are NCCL indices (nccl_tuner_abi.h) or k_any.
struct Rule {
  int collective = k_any;           // ncclFunc_t 0..4
  uint64_t min_bytes = 0;           // inclusive
  uint64_t max_bytes = UINT64_MAX;  // inclusive
  int algorithm = k_any;            // LAGOM_NCCL_ALGO_*, or k_any together with protocol
  int protocol = k_any;             // LAGOM_NCCL_PROTO_*
  int channels = k_any;             // 1..64, or k_any = keep NCCL's
  int n_nodes = k_any;
  int n_ranks = k_any;
  int num_pipe_ops = k_any;
  int reg_buff = k_any;  // 0, 1 or k_any
  // Bytes per chunk (1..2^31-1, NCCL keeps its chunk in an int), or k_any = keep NCCL's. Only the v6
  // interface can apply it (getChunkSize); NCCL clamps it to the buffer's ceiling.
  int64_t chunk_bytes = k_any;
  int line = 0;  // 1-based line in the file, for logs
};

// What a collective call looks like to the tuner.
struct CallShape {
  int collective = 0;
  uint64_t bytes = 0;
  std::size_t n_nodes = 0;
  std::size_t n_ranks = 0;
  int num_pipe_ops = 0;
  int reg_buff = 0;
};

struct ParseResult {
  std::vector<Rule> rules;  // empty when error is set
  int error_line = 0;       // 0 when the error is not about one line
  std::string error;        // empty on success
};

// Parses the config text. Never throws except std::bad_alloc.
ParseResult parse_rules(std::string_view text);

// Reads and parses `path`. A file that cannot be read, or is over 16 MiB, is an error.
ParseResult load_rules(const std::string& path);

// The first rule matching `call`, or nullptr.
const Rule* find_rule(const std::vector<Rule>& rules, const CallShape& call);

// One parsed config: the rules of one version of the file. Immutable once published.
struct RuleTable {
  // Lines with a chunk (chunk_bytes != k_any): what a v4/v5 interface, which cannot apply them, warns of.
  [[nodiscard]] std::size_t chunk_rules() const;
  std::vector<Rule> rules;
  std::uint64_t generation = 0;  // 1 for the first table of a source, +1 per reload
};

// The identity of a file's content as stat(2) sees it: a rewrite in place (size or modification time) or
// a new file renamed over it (inode) changes it.
struct FileIdentity {
  std::uint64_t device = 0, inode = 0, size = 0;
  std::int64_t mtime_ns = 0;
  bool exists = false;
  bool operator==(const FileIdentity&) const = default;
};
FileIdentity identify(const std::string& path);

// The rules of one config file, reloaded when its identity changes (`lagom adapt` replaces the file by
// write + fsync + rename). Readers take the current table with one atomic load and use that table for
// the whole call, so a call sees either the whole old or the whole new rules, never a mix. Tables are
// kept until the source is destroyed (a reader may still hold an old one; reloads are rare, so the
// memory is a few tables); the plugin keeps one source per communicator, destroyed by finalize.
//
// Reload policy: at most one identity check per `interval_ms` (0 = never reload), done by whichever
// caller of maybe_reload() wins a compare-and-swap on the check time; the others keep reading the current
// table and never wait. A file that cannot be read or parsed keeps the current table and gives one
// warning per identity of the bad file.
class RuleSource {
 public:
  struct Event {
    bool reloaded = false;  // a new table is current
    std::string message;    // "" when nothing happened; else what to log (warning when !reloaded)
  };

  RuleSource(std::string path, std::int64_t interval_ms);
  RuleSource(const RuleSource&) = delete;
  RuleSource& operator=(const RuleSource&) = delete;

  // The first load's outcome (as for a reload: message is the warning when the file is bad).
  Event load();
  // Checks the file when the interval has passed since the last check (now_ms: a monotonic clock).
  Event maybe_reload(std::int64_t now_ms);
  [[nodiscard]] const RuleTable* current() const { return m_current.load(std::memory_order_acquire); }
  [[nodiscard]] const std::string& path() const { return m_path; }

 private:
  Event reload_if_changed();

  const std::string m_path;
  const std::int64_t m_interval_ms;
  std::atomic<const RuleTable*> m_current{nullptr};
  std::atomic<std::int64_t> m_next_check_ms{0};
  std::mutex m_reload_mutex;  // held only by the one caller reloading, never by readers
  FileIdentity m_loaded;      // identity of the file behind the current table (or of the bad file warned)
  std::uint64_t m_generation = 0;
  std::vector<std::unique_ptr<RuleTable>> m_tables;
};

// Names used in the file and in logs ("allreduce", "ring", "ll128", ...).
const char* collective_name(int collective);
const char* algorithm_name(int algorithm);
const char* protocol_name(int protocol);

// ncclProtoGrainSize of NCCL (nccl_tuner_abi.h): the smallest chunk NCCL can run for `protocol`; 0 for an
// unknown protocol.
std::size_t protocol_grain_bytes(int protocol);

}  // namespace lagom::shim
