// The reader of docs/records.md: strict (every field present and typed), so a record that parses is one
// the writer wrote.
#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

#include <nlohmann/json.hpp>

#include "records/record.h"

namespace lagom::records {

namespace {

using Json = nlohmann::json;

// A field that is missing or of the wrong type ends the parse with its name.
struct FieldError {
  std::string message;
};

const Json& field(const Json& doc, const char* name) {
  const auto it = doc.find(name);
  if (it == doc.end()) throw FieldError{std::string("missing field \"") + name + "\""};
  return *it;
}

template <std::size_t N>
void read_text(const Json& doc, const char* name, Text<N>& out) {
  const Json& value = field(doc, name);
  if (!value.is_string()) throw FieldError{std::string("\"") + name + "\" must be a string"};
  const auto& text = value.get_ref<const std::string&>();
  if (text.size() >= N) {
    throw FieldError{std::string("\"") + name + "\" is longer than " + std::to_string(N - 1) + " bytes"};
  }
  out.set(text);
}

template <typename T>
T read_integer(const Json& doc, const char* name, T min = std::numeric_limits<T>::min()) {
  const Json& value = field(doc, name);
  if (!value.is_number_integer()) throw FieldError{std::string("\"") + name + "\" must be an integer"};
  if constexpr (std::is_unsigned_v<T>) {
    if (value.is_number_unsigned()) return static_cast<T>(value.get<std::uint64_t>());
    const auto v = value.get<std::int64_t>();
    if (v < 0) throw FieldError{std::string("\"") + name + "\" must not be negative"};
    return static_cast<T>(v);
  } else {
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
      throw FieldError{std::string("\"") + name + "\" is out of range"};
    }
    const auto v = value.get<std::int64_t>();
    if (v < static_cast<std::int64_t>(min) || v > static_cast<std::int64_t>(std::numeric_limits<T>::max())) {
      throw FieldError{std::string("\"") + name + "\" is out of range"};
    }
    return static_cast<T>(v);
  }
}

// Every field of a line is one of the format's (docs/records.md): a writer writes exactly these, so a line
// with another field is not a writer's line, and its field would be silently ignored.
constexpr std::array k_record_fields{"version", "kind",      "source",   "host",       "pid",   "comm_hash",
                                     "rank",    "n_ranks",   "n_nodes",  "collective", "count", "dtype",
                                     "bytes",   "algorithm", "protocol", "channels",   "seq",   "peer",
                                     "clock",   "start_ns",  "end_ns"};
constexpr std::array k_summary_fields{"version",      "kind",          "host",    "pid",         "recorded",
                                      "dropped_full", "dropped_slots", "untimed", "write_failed"};

template <std::size_t N>
void check_no_other_fields(const Json& doc, const std::array<const char*, N>& known, const char* what) {
  for (const auto& item : doc.items()) {
    if (std::find_if(known.begin(), known.end(), [&item](const char* f) { return item.key() == f; }) ==
        known.end()) {
      throw FieldError{"\"" + item.key() + "\" is not a field of " + what + " (docs/records.md)"};
    }
  }
}

std::uint64_t read_hash(const Json& doc) {
  const Json& value = field(doc, "comm_hash");
  if (!value.is_string()) throw FieldError{"\"comm_hash\" must be a string"};
  const auto& text = value.get_ref<const std::string&>();
  std::uint64_t hash = 0;
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || text[1] != 'x') {
    throw FieldError{"\"comm_hash\" must be 0x and up to 16 hex digits"};
  }
  const auto [end, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), hash, 16);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw FieldError{"\"comm_hash\" must be 0x and up to 16 hex digits"};
  }
  return hash;
}

// The names each string field may hold (docs/records.md "Record lines").
constexpr std::string_view k_sources[] = {"nccl", "mpi"};
constexpr std::string_view k_collectives[] = {"allreduce", "allgather", "reducescatter", "broadcast",
                                              "reduce",    "alltoall",  "gather",        "scatter",
                                              "sendrecv",  "unknown"};
constexpr std::string_view k_p2p_operations[] = {"send", "recv", "unknown"};
constexpr std::string_view k_dtypes[] = {"int8",     "uint8",    "int32",    "uint32",  "int64",
                                         "uint64",   "float16",  "bfloat16", "float32", "float64",
                                         "fp8_e4m3", "fp8_e5m2", "unknown"};
constexpr std::string_view k_algorithms[] = {
    "", "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat", "ce"};
constexpr std::string_view k_protocols[] = {"", "ll", "ll128", "simple"};
constexpr std::string_view k_clocks[] = {"gpu", "host", "enqueue"};

// The list of allowed names for a message: "a, b or c" ("" shown as "" (unknown)).
template <std::size_t N>
std::string allowed(const std::string_view (&names)[N]) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    out += i == 0 ? "" : (i + 1 == N ? " or " : ", ");
    out += names[i].empty() ? std::string("\"\" (unknown)") : std::string(names[i]);
  }
  return out;
}

// A string field holds one of `names`, else: "dtype" is "float99": allowed int8, ... or unknown.
template <std::size_t N, std::size_t M>
void check_name(const char* name, const Text<M>& value, const std::string_view (&names)[N],
                const char* context = "") {
  for (const std::string_view n : names) {
    if (value.view() == n) return;
  }
  throw FieldError{std::string("\"") + name + "\" is \"" + std::string(value.view()) + "\": allowed " +
                   allowed(names) + context};
}

// Every field against what docs/records.md allows it, and the fields against each other: what the
// writers (the profiler plugin, the MPI backend) can write, and nothing else.
void check_fields(const Record& r) {
  check_name("source", r.source, k_sources);
  if (r.kind == Kind::p2p) {
    check_name("collective", r.collective, k_p2p_operations, " (a p2p record is one send or receive)");
  } else {
    check_name("collective", r.collective, k_collectives, " (of a collective record)");
  }
  check_name("dtype", r.dtype, k_dtypes);
  check_name("algorithm", r.algorithm, k_algorithms);
  check_name("protocol", r.protocol, k_protocols);
  check_name("clock", r.clock, k_clocks);
  const std::uint64_t bytes = record_bytes(r.count, r.dtype.view());
  if (r.bytes != bytes) {
    throw FieldError{"\"bytes\" is " + std::to_string(r.bytes) + ", not \"count\" " +
                     std::to_string(r.count) + " x the size of " + std::string(r.dtype.view()) + " = " +
                     std::to_string(bytes) + " (0 for an unknown dtype)"};
  }
  if (r.kind == Kind::collective && r.peer != -1) {
    throw FieldError{"\"peer\" is " + std::to_string(r.peer) + ": a collective record's is -1"};
  }
  if (r.kind == Kind::p2p && (r.peer < 0 || r.peer >= r.n_ranks)) {
    throw FieldError{
        "\"peer\" is " + std::to_string(r.peer) +
        ": a p2p record's is a rank from 0 to \"n_ranks\" - 1 = " + std::to_string(r.n_ranks - 1)};
  }
  const bool copy_engine = r.algorithm.view() == "ce";
  if (copy_engine != (r.clock.view() == "enqueue")) {
    throw FieldError{"\"clock\" is \"" + std::string(r.clock.view()) + "\" with \"algorithm\" \"" +
                     std::string(r.algorithm.view()) +
                     "\": a copy-engine collective (algorithm ce) and only it has the clock enqueue"};
  }
  const bool mpi = r.source.view() == "mpi";
  if (mpi != (r.clock.view() == "host")) {
    throw FieldError{"\"clock\" is \"" + std::string(r.clock.view()) + "\" with \"source\" \"" +
                     std::string(r.source.view()) +
                     "\": the MPI backend's clock is host, the plugin's gpu or enqueue"};
  }
}

}  // namespace

ParsedLine parse_record_line(std::string_view line) {
  ParsedLine out;
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return out;
  const Json doc = Json::parse(line.begin(), line.end(), nullptr, false);
  out.type = ParsedLine::Type::error;
  if (doc.is_discarded()) {
    out.error = "not JSON";
    return out;
  }
  if (!doc.is_object()) {
    out.error = "not a JSON object";
    return out;
  }
  try {
    const int version = read_integer<int>(doc, "version");
    if (version != k_version) {
      out.error = "version " + std::to_string(version) + " (this build reads version " +
                  std::to_string(k_version) + ")";
      return out;
    }
    const Json& kind = field(doc, "kind");
    if (!kind.is_string()) throw FieldError{"\"kind\" must be a string"};
    const auto& kind_name = kind.get_ref<const std::string&>();
    if (kind_name == "summary") {
      check_no_other_fields(doc, k_summary_fields, "a summary line");
      Summary& s = out.summary;
      read_text(doc, "host", s.host);
      s.pid = read_integer<std::int64_t>(doc, "pid");
      s.recorded = read_integer<std::uint64_t>(doc, "recorded");
      s.dropped_full = read_integer<std::uint64_t>(doc, "dropped_full");
      s.dropped_slots = read_integer<std::uint64_t>(doc, "dropped_slots");
      s.untimed = read_integer<std::uint64_t>(doc, "untimed");
      s.write_failed = read_integer<std::uint64_t>(doc, "write_failed");
      out.type = ParsedLine::Type::summary;
      return out;
    }
    Record& r = out.record;
    if (kind_name == "collective") {
      r.kind = Kind::collective;
    } else if (kind_name == "p2p") {
      r.kind = Kind::p2p;
    } else {
      throw FieldError{"\"kind\" must be collective, p2p or summary, not \"" + kind_name + "\""};
    }
    check_no_other_fields(doc, k_record_fields, "a record");
    read_text(doc, "source", r.source);
    read_text(doc, "host", r.host);
    r.pid = read_integer<std::int64_t>(doc, "pid");
    r.comm_hash = read_hash(doc);
    r.rank = read_integer<std::int32_t>(doc, "rank", 0);
    r.n_ranks = read_integer<std::int32_t>(doc, "n_ranks", 1);
    r.n_nodes = read_integer<std::int32_t>(doc, "n_nodes", 1);
    if (r.rank >= r.n_ranks) throw FieldError{"\"rank\" must be below \"n_ranks\""};
    if (r.n_nodes > r.n_ranks) throw FieldError{"\"n_nodes\" must not exceed \"n_ranks\""};
    read_text(doc, "collective", r.collective);
    r.count = read_integer<std::uint64_t>(doc, "count");
    read_text(doc, "dtype", r.dtype);
    r.bytes = read_integer<std::uint64_t>(doc, "bytes");
    read_text(doc, "algorithm", r.algorithm);
    read_text(doc, "protocol", r.protocol);
    r.channels = read_integer<std::int32_t>(doc, "channels", 0);
    r.seq = read_integer<std::uint64_t>(doc, "seq");
    r.peer = read_integer<std::int32_t>(doc, "peer", -1);
    read_text(doc, "clock", r.clock);
    r.start_ns = read_integer<std::int64_t>(doc, "start_ns");
    r.end_ns = read_integer<std::int64_t>(doc, "end_ns");
    if (r.end_ns < r.start_ns) throw FieldError{"\"end_ns\" is before \"start_ns\""};
    check_fields(r);
    out.type = ParsedLine::Type::record;
  } catch (const FieldError& e) {
    out.error = e.message;
  }
  return out;
}

std::string record_key(const Record& r) {
  // Everything that tells two executions apart; times included, so a restarted process that reuses a
  // pid and sequence numbers does not collide with its predecessor.
  std::string key;
  key.reserve(160);
  key.append(r.host.view()).append("|").append(std::to_string(r.pid)).append("|");
  key.append(std::to_string(r.comm_hash)).append("|").append(std::to_string(r.rank)).append("|");
  key.append(r.kind == Kind::p2p ? "p2p" : "coll").append("|").append(r.collective.view()).append("|");
  key.append(std::to_string(r.seq)).append("|").append(std::to_string(r.peer)).append("|");
  key.append(std::to_string(r.start_ns)).append("|").append(std::to_string(r.end_ns));
  return key;
}

}  // namespace lagom::records
