// The one reader of JSON fields: every file Lagom reads that is a JSON object (a cluster or workload spec,
// a HuggingFace config, lagom-config.json, a document a command wrote) is read through FieldReader, so a
// range check or a message fixed here holds for every reader of every file. Two readers of one file
// disagree: `ops[0].ranks = 4294967312` in lagom-config.json once read as 16 in one reader and was refused
// by the other.
//
// Errors have one form, "<origin>: <prefix><field>: <why>" (origin: the file, prefix: the path of the
// object inside it, e.g. "tune.calibration.collectives[2]."), all invalid_input. Integers are
// range-checked and never truncated ("ranks": 4294967312 is an error, not 16); numbers are finite and
// bounded; strings, booleans and enum names (from a table of {value, name} pairs) are checked by type.
//
// Unknown fields follow a policy chosen by the caller (UnknownFields): an error (spec files: a typo must
// not fall back to a default silently), collected (the caller reports or warns), or ignored (documents
// that later versions may extend). A field counts as known once any accessor (or mark()) read it.
//
// Not thread-safe (the set of fields read is mutable state); the reader refers to the JSON object, which
// must outlive it.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace lagom {

enum class UnknownFields {
  error,    // finish() fails on the first field no accessor read
  collect,  // finish() succeeds; unknown() lists them
  ignore,   // finish() succeeds
};

class FieldReader {
 public:
  // `number_maximum` is the default upper bound of number() in this object and the objects read from it
  // (the spec files use 10^6 in the field's unit, beyond any hardware; documents the largest finite double).
  FieldReader(const nlohmann::json& object, std::string origin, std::string prefix = "",
              UnknownFields unknown = UnknownFields::error,
              double number_maximum = std::numeric_limits<double>::max());

  // invalid_input "<origin>: <prefix><field>: <why>"; an empty field names the object itself.
  [[nodiscard]] Error error(const std::string& field, const std::string& why) const;
  // Present and not null.
  [[nodiscard]] bool has(const std::string& field) const;
  // The raw value (precondition: has(field)); marks the field read.
  [[nodiscard]] const nlohmann::json& at(const std::string& field) const;
  [[nodiscard]] const std::string& origin() const { return m_origin; }
  [[nodiscard]] const std::string& prefix() const { return m_prefix; }

  // An integer within [minimum, maximum] (by default positive and no larger than an int holds), never
  // truncated; a number with a fraction is an error, a whole float (16.0) is read. Absent or null: the
  // fallback, else "required".
  Result<std::int64_t> integer(const std::string& field, std::optional<std::int64_t> fallback,
                               std::int64_t minimum = 1,
                               std::int64_t maximum = std::numeric_limits<int>::max()) const;
  // A finite number > 0 (>= 0 when allow_zero) and at most `maximum` (the reader's number_maximum when
  // none is given).
  Result<double> number(const std::string& field, std::optional<double> fallback, bool allow_zero = false,
                        std::optional<double> maximum = std::nullopt) const;
  // Any finite number (a difference, a delta that may be negative).
  Result<double> finite(const std::string& field, std::optional<double> fallback) const;
  // A number in (0, 1].
  Result<double> fraction(const std::string& field, double fallback) const;
  // A finite number, or none when absent or null (a writer writes null for "not measured").
  Result<std::optional<double>> optional_number(const std::string& field, bool allow_zero = true,
                                                bool allow_negative = false) const;
  Result<std::string> string(const std::string& field, std::optional<std::string> fallback) const;
  Result<bool> boolean(const std::string& field, std::optional<bool> fallback) const;
  // One of the names of `table`, a range of {value, name} pairs; the error lists the names ("a|b|c").
  // E is named at the call: r.choice<Precision>("precision", s.precision, k_precisions).
  template <typename E, typename Table>
  Result<E> choice(const std::string& field, std::optional<E> fallback, const Table& table) const;
  // A nested object, read with the same origin, policy and bounds and the prefix "<prefix><field>.".
  Result<FieldReader> object(const std::string& field) const;
  // A required array (its elements through element()).
  Result<const nlohmann::json*> array(const std::string& field) const;
  // Element `index` of the array `field` as an object: prefix "<prefix><field>[<index>].".
  Result<FieldReader> element(const std::string& field, const nlohmann::json& array, std::size_t index) const;

  // Counts `field` as known without reading it (a field read elsewhere, or kept for older writers).
  void mark(const std::string& field) const { m_seen.insert(field); }
  // Applies the unknown-field policy to the fields read so far.
  [[nodiscard]] Status finish() const;
  // The fields of the object no accessor read, in the object's order ("<prefix><field>").
  [[nodiscard]] std::vector<std::string> unknown() const;

 private:
  const nlohmann::json* m_object;
  std::string m_origin;
  std::string m_prefix;
  UnknownFields m_unknown;
  double m_number_maximum;
  mutable std::set<std::string> m_seen;
};

// invalid_input "<origin>: not a JSON object" unless `document` is one.
// Reads a JSON file: not_found when it cannot be opened, invalid_input when it is not JSON (or a folder).
Result<nlohmann::json> read_json_file(const std::string& path);

Status require_object(const nlohmann::json& document, const std::string& origin);

template <typename E, typename Table>
Result<E> FieldReader::choice(const std::string& field, std::optional<E> fallback, const Table& table) const {
  std::optional<std::string> fallback_name;
  std::string names;
  for (const auto& [value, name] : table) {
    if (fallback && value == *fallback) fallback_name = std::string(name);
    names += (names.empty() ? "" : "|") + std::string(name);
  }
  LAGOM_TRY(const std::string text, string(field, fallback_name));
  for (const auto& [value, name] : table) {
    if (name == text) return value;
  }
  return error(field, fmt::format("'{}' is not one of {}", text, names));
}

}  // namespace lagom
