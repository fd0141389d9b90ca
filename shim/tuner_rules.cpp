#include "shim/tuner_rules.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include <sys/stat.h>

#include "shim/nccl_tuner_abi.h"

namespace lagom::shim {
namespace {

// Large enough for any real tuned config (a few hundred lines), small enough that a wrong path (a log,
// a dataset) is refused instead of read into every rank's memory.
constexpr std::size_t k_max_file_bytes = std::size_t{16} << 20;
constexpr std::size_t k_min_fields = 8;
constexpr std::size_t k_max_fields = 11;

struct Name {
  const char* text;
  int value;
};

// Names in the file, lower-case. The example plugin's spellings come first (they are what logs print);
// NCCL's own spellings of NCCL_ALGO ("CollNetDirect", "NVLSTree") are accepted too.
constexpr std::array<Name, 5> k_collectives{{{"broadcast", LAGOM_NCCL_FUNC_BROADCAST},
                                             {"reduce", LAGOM_NCCL_FUNC_REDUCE},
                                             {"allgather", LAGOM_NCCL_FUNC_ALLGATHER},
                                             {"reducescatter", LAGOM_NCCL_FUNC_REDUCESCATTER},
                                             {"allreduce", LAGOM_NCCL_FUNC_ALLREDUCE}}};
constexpr std::array<Name, 10> k_algorithms{{{"tree", LAGOM_NCCL_ALGO_TREE},
                                             {"ring", LAGOM_NCCL_ALGO_RING},
                                             {"collnet_direct", LAGOM_NCCL_ALGO_COLLNET_DIRECT},
                                             {"collnet_chain", LAGOM_NCCL_ALGO_COLLNET_CHAIN},
                                             {"nvls", LAGOM_NCCL_ALGO_NVLS},
                                             {"nvls_tree", LAGOM_NCCL_ALGO_NVLS_TREE},
                                             {"pat", LAGOM_NCCL_ALGO_PAT},
                                             {"collnetdirect", LAGOM_NCCL_ALGO_COLLNET_DIRECT},
                                             {"collnetchain", LAGOM_NCCL_ALGO_COLLNET_CHAIN},
                                             {"nvlstree", LAGOM_NCCL_ALGO_NVLS_TREE}}};
constexpr std::array<Name, 3> k_protocols{
    {{"ll", LAGOM_NCCL_PROTO_LL}, {"ll128", LAGOM_NCCL_PROTO_LL128}, {"simple", LAGOM_NCCL_PROTO_SIMPLE}}};

std::string_view trim(std::string_view s) {
  const char* blanks = " \t\r\v\f";
  std::size_t begin = s.find_first_not_of(blanks);
  if (begin == std::string_view::npos) return {};
  std::size_t end = s.find_last_not_of(blanks);
  return s.substr(begin, end - begin + 1);
}

bool iequals(std::string_view a, const char* b) {
  std::size_t n = std::strlen(b);
  if (a.size() != n) return false;
  for (std::size_t i = 0; i < n; ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != b[i]) return false;
  }
  return true;
}

template <std::size_t N>
std::optional<int> lookup(const std::array<Name, N>& names, std::string_view text) {
  for (const Name& name : names) {
    if (iequals(text, name.text)) return name.value;
  }
  return std::nullopt;
}

template <std::size_t N>
const char* name_of(const std::array<Name, N>& names, int value) {
  for (const Name& name : names) {
    if (name.value == value) return name.text;
  }
  return value == k_any ? "any" : "unknown";
}

// Strict integer: optional '-', digits, nothing else; fails on overflow.
std::optional<int64_t> parse_int(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// Renders a field for an error message: printable ASCII only, at most 40 characters.
std::string quoted(std::string_view field) {
  std::string out = "'";
  for (std::size_t i = 0; i < field.size() && i < 40; ++i) {
    unsigned char c = static_cast<unsigned char>(field[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  if (field.size() > 40) out += "...";
  return out + "'";
}

// Parses one data line into `rule`; returns an empty string or the reason it is bad.
std::string parse_line(std::string_view line, Rule& rule) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = line.find(',', start);
    fields.push_back(trim(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (fields.size() < k_min_fields || fields.size() > k_max_fields) {
    return "expected 8 to 11 comma-separated fields "
           "(collective,min_bytes,max_bytes,algorithm,protocol,channels,"
           "nNodes,nRanks,numPipeOps,regBuff[,chunk]), got " +
           std::to_string(fields.size());
  }

  std::optional<int> collective = lookup(k_collectives, fields[0]);
  if (!collective) return "unknown collective " + quoted(fields[0]);
  rule.collective = *collective;

  // An integer field: -1 (k_any) or a value in [lo, hi].
  auto integer = [&](std::size_t index, const char* what, int64_t lo, int64_t hi,
                     int64_t& out) -> std::string {
    std::optional<int64_t> value = parse_int(fields[index]);
    if (!value) return std::string(what) + " is not an integer: " + quoted(fields[index]);
    if (*value != k_any && (*value < lo || *value > hi)) {
      return std::string(what) + " " + std::to_string(*value) + " is out of range (-1 or " +
             std::to_string(lo) + ".." + std::to_string(hi) + ")";
    }
    out = *value;
    return {};
  };

  int64_t min_bytes = 0;
  int64_t max_bytes = 0;
  if (std::string why = integer(1, "min_bytes", 0, INT64_MAX, min_bytes); !why.empty()) return why;
  if (std::string why = integer(2, "max_bytes", 0, INT64_MAX, max_bytes); !why.empty()) return why;
  rule.min_bytes = min_bytes == k_any ? 0 : static_cast<uint64_t>(min_bytes);
  rule.max_bytes = max_bytes == k_any ? UINT64_MAX : static_cast<uint64_t>(max_bytes);
  if (rule.min_bytes > rule.max_bytes) {
    return "min_bytes " + std::to_string(rule.min_bytes) + " is above max_bytes " +
           std::to_string(rule.max_bytes);
  }

  bool any_algorithm = fields[3] == "-1";
  bool any_protocol = fields[4] == "-1";
  if (any_algorithm != any_protocol) return "algorithm and protocol must both be named or both be -1";
  if (!any_algorithm) {
    std::optional<int> algorithm = lookup(k_algorithms, fields[3]);
    if (!algorithm) return "unknown algorithm " + quoted(fields[3]);
    std::optional<int> protocol = lookup(k_protocols, fields[4]);
    if (!protocol) return "unknown protocol " + quoted(fields[4]);
    rule.algorithm = *algorithm;
    rule.protocol = *protocol;
  }

  int64_t value = 0;
  if (std::string why = integer(5, "channels", 1, LAGOM_NCCL_MAX_CHANNELS, value); !why.empty()) return why;
  rule.channels = static_cast<int>(value);
  if (std::string why = integer(6, "nNodes", 1, INT32_MAX, value); !why.empty()) return why;
  rule.n_nodes = static_cast<int>(value);
  if (std::string why = integer(7, "nRanks", 1, INT32_MAX, value); !why.empty()) return why;
  rule.n_ranks = static_cast<int>(value);
  if (fields.size() > 8) {
    if (std::string why = integer(8, "numPipeOps", 1, INT32_MAX, value); !why.empty()) return why;
    rule.num_pipe_ops = static_cast<int>(value);
  }
  if (fields.size() > 9) {
    if (std::string why = integer(9, "regBuff", 0, 1, value); !why.empty()) return why;
    rule.reg_buff = static_cast<int>(value);
  }
  if (fields.size() > 10) {
    if (std::string why = integer(10, "chunk", 1, INT32_MAX, value); !why.empty()) return why;
    rule.chunk_bytes = value;
  }
  return {};
}

bool matches(int wanted, int64_t actual) {
  return wanted == k_any || wanted == actual;
}

}  // namespace

ParseResult parse_rules(std::string_view text) {
  ParseResult result;
  int line_number = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t newline = text.find('\n', start);
    std::string_view raw =
        text.substr(start, newline == std::string_view::npos ? text.npos : newline - start);
    start = newline == std::string_view::npos ? text.size() + 1 : newline + 1;
    ++line_number;
    std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    Rule rule;
    rule.line = line_number;
    if (std::string why = parse_line(line, rule); !why.empty()) {
      result.rules.clear();
      result.error_line = line_number;
      result.error = std::move(why);
      return result;
    }
    result.rules.push_back(rule);
  }
  return result;
}

ParseResult load_rules(const std::string& path) {
  ParseResult result;
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    result.error = std::string("cannot open: ") + std::strerror(errno);
    return result;
  }
  std::string text;
  std::array<char, 65536> buffer{};
  while (true) {
    std::size_t n = std::fread(buffer.data(), 1, buffer.size(), file);
    text.append(buffer.data(), n);
    if (text.size() > k_max_file_bytes) {
      std::fclose(file);
      result.error = "larger than 16 MiB; not a tuner config";
      return result;
    }
    if (n < buffer.size()) break;
  }
  // A directory opens fine with fopen but fails here with EISDIR.
  bool failed = std::ferror(file) != 0;
  int read_errno = errno;
  std::fclose(file);
  if (failed) {
    result.error = std::string("cannot read: ") + std::strerror(read_errno);
    return result;
  }
  return parse_rules(text);
}

const Rule* find_rule(const std::vector<Rule>& rules, const CallShape& call) {
  for (const Rule& rule : rules) {
    if (rule.collective != call.collective) continue;
    if (call.bytes < rule.min_bytes || call.bytes > rule.max_bytes) continue;
    if (!matches(rule.n_nodes, static_cast<int64_t>(call.n_nodes))) continue;
    if (!matches(rule.n_ranks, static_cast<int64_t>(call.n_ranks))) continue;
    if (!matches(rule.num_pipe_ops, call.num_pipe_ops)) continue;
    if (!matches(rule.reg_buff, call.reg_buff)) continue;
    return &rule;
  }
  return nullptr;
}

const char* collective_name(int collective) {
  return name_of(k_collectives, collective);
}
const char* algorithm_name(int algorithm) {
  return name_of(k_algorithms, algorithm);
}
const char* protocol_name(int protocol) {
  return name_of(k_protocols, protocol);
}

std::size_t protocol_grain_bytes(int protocol) {
  switch (protocol) {
    case LAGOM_NCCL_PROTO_LL:
      return LAGOM_NCCL_GRAIN_LL;
    case LAGOM_NCCL_PROTO_LL128:
      return LAGOM_NCCL_GRAIN_LL128;
    case LAGOM_NCCL_PROTO_SIMPLE:
      return LAGOM_NCCL_GRAIN_SIMPLE;
    default:
      return 0;
  }
}

std::size_t RuleTable::chunk_rules() const {
  std::size_t n = 0;
  for (const Rule& rule : rules) n += rule.chunk_bytes != k_any ? 1 : 0;
  return n;
}

FileIdentity identify(const std::string& path) {
  FileIdentity id;
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return id;
  id.exists = true;
  id.device = static_cast<std::uint64_t>(info.st_dev);
  id.inode = static_cast<std::uint64_t>(info.st_ino);
  id.size = static_cast<std::uint64_t>(info.st_size);
  id.mtime_ns = static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
  return id;
}

RuleSource::RuleSource(std::string path, std::int64_t interval_ms)
    : m_path(std::move(path)), m_interval_ms(interval_ms) {}

RuleSource::Event RuleSource::load() {
  std::lock_guard<std::mutex> lock(m_reload_mutex);
  m_loaded = FileIdentity{};
  m_loaded.exists = false;
  m_loaded.size = UINT64_MAX;  // differs from any real identity: the first check always reads
  return reload_if_changed();
}

RuleSource::Event RuleSource::maybe_reload(std::int64_t now_ms) {
  if (m_interval_ms <= 0) return {};
  std::int64_t next = m_next_check_ms.load(std::memory_order_relaxed);
  if (now_ms < next) return {};
  // One caller per interval wins; the others go on with the current table.
  if (!m_next_check_ms.compare_exchange_strong(next, now_ms + m_interval_ms, std::memory_order_relaxed))
    return {};
  std::unique_lock<std::mutex> lock(m_reload_mutex, std::try_to_lock);
  if (!lock.owns_lock()) return {};
  return reload_if_changed();
}

RuleSource::Event RuleSource::reload_if_changed() {
  const FileIdentity now = identify(m_path);
  if (now == m_loaded) return {};
  // Parse into a new table; publish it only when the whole file is good.
  ParseResult parsed = load_rules(m_path);
  // The file may have changed again while it was read: then the next check reads it once more.
  m_loaded = identify(m_path) == now ? now : FileIdentity{};
  Event event;
  if (!parsed.error.empty()) {
    const std::string where =
        parsed.error_line > 0 ? m_path + ":" + std::to_string(parsed.error_line) : m_path;
    const bool first = current() == nullptr;
    event.message = where + ": " + parsed.error +
                    (first ? "; ignoring the file, NCCL keeps its own choices"
                           : "; keeping the rules loaded before (generation " +
                                 std::to_string(current()->generation) + ")");
    return event;
  }
  auto table = std::make_unique<RuleTable>();
  table->rules = std::move(parsed.rules);
  table->generation = ++m_generation;
  const RuleTable* published = table.get();
  m_tables.push_back(std::move(table));
  m_current.store(published, std::memory_order_release);
  event.reloaded = true;
  event.message = "loaded " + std::to_string(published->rules.size()) + " rules from " + m_path +
                  " (generation " + std::to_string(published->generation) + ")";
  return event;
}

}  // namespace lagom::shim
