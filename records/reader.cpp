// The reader of docs/records.md: strict (every field present and typed), so a record that parses is one
// the writer wrote.
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
    if (r.clock.view() != "gpu" && r.clock.view() != "host" && r.clock.view() != "enqueue")
      throw FieldError{"\"clock\" must be gpu, host or enqueue"};
    r.start_ns = read_integer<std::int64_t>(doc, "start_ns");
    r.end_ns = read_integer<std::int64_t>(doc, "end_ns");
    if (r.end_ns < r.start_ns) throw FieldError{"\"end_ns\" is before \"start_ns\""};
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
