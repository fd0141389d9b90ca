// The tuned rules the NCCL tuner plugin applies, and their parser. Part of libnccl-tuner-lagom.so only;
// depends on nothing else of Lagom (the plugin must load into any process that uses NCCL).
//
// File format (what `lagom tune` writes as nccl_tuner.conf; NVIDIA's example-plugin CSV):
//   # collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff
//   allreduce,0,65535,tree,ll,4,2,16,-1,-1
// Blank lines and lines whose first non-blank character is '#' are ignored. Fields are comma separated and
// whitespace-trimmed; 8, 9 or 10 fields (omitted trailing fields mean "any"). -1 means "any" for
// min_bytes, max_bytes, nNodes, nRanks, numPipeOps, regBuff and "keep NCCL's" for channels; algorithm and
// protocol are both named or both -1 (a channels-only rule). Byte ranges are inclusive.
// A file with any bad line is rejected as a whole (ParseResult::error names the line): applying the rest
// would silently change which line matches first.
#pragma once

#include <cstddef>
#include <cstdint>
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
  int line = 0;          // 1-based line in the file, for logs
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

// Names used in the file and in logs ("allreduce", "ring", "ll128", ...).
const char* collective_name(int collective);
const char* algorithm_name(int algorithm);
const char* protocol_name(int protocol);

}  // namespace lagom::shim
