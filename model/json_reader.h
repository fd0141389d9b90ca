// Internal to model/: reading the fields of a JSON spec file (a cluster, a workload, a HuggingFace config)
// with errors that name the file and the field, "<origin>: <prefix><field>: <why>" (the enums' names come
// from their tables, core/enum_table.h). specs.cpp and hf_config.cpp share it; nothing outside model/
// includes it.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/enum_table.h"
#include "core/error.h"

namespace lagom::model {

// Reads fields of one JSON object with errors of the form "<origin>: <prefix><field>: <why>".
class Reader {
 public:
  Reader(const nlohmann::json& object, std::string origin, std::string prefix)
      : m_object(object), m_origin(std::move(origin)), m_prefix(std::move(prefix)) {}

  [[nodiscard]] Error error(const std::string& field, const std::string& why) const {
    return make_error(ErrorCode::invalid_input, fmt::format("{}: {}{}: {}", m_origin, m_prefix, field, why));
  }
  [[nodiscard]] bool has(const std::string& field) const {
    return m_object.contains(field) && !m_object.at(field).is_null();
  }
  [[nodiscard]] const nlohmann::json& at(const std::string& field) const { return m_object.at(field); }

  // An integer within [minimum, maximum]: positive when minimum is 1, and by default no larger than the
  // field's type (int) holds, so a value is never truncated ("layers": 4294967308 is an error, not 12).
  Result<long> integer(const std::string& field, std::optional<long> fallback, long minimum = 1,
                       long maximum = std::numeric_limits<int>::max()) const {
    m_seen.insert(field);
    if (!has(field)) {
      if (fallback) return *fallback;
      return error(field, "required");
    }
    const auto& v = m_object.at(field);
    const char* why = minimum >= 1 ? "must be a positive integer" : "must be a non-negative integer";
    auto too_large = [&](const std::string& text) {
      return error(field, fmt::format("{} is out of range (at most {})", text, maximum));
    };
    if (v.is_number_unsigned()) {
      const auto x = v.get<std::uint64_t>();
      if (x > static_cast<std::uint64_t>(maximum)) return too_large(std::to_string(x));
      if (static_cast<long>(x) < minimum) return error(field, why);
      return static_cast<long>(x);
    }
    if (v.is_number_integer()) {
      const auto x = v.get<std::int64_t>();
      if (x < minimum) return error(field, why);
      if (x > maximum) return too_large(std::to_string(x));
      return static_cast<long>(x);
    }
    if (v.is_number_float()) {
      const double x = v.get<double>();
      if (std::isfinite(x) && std::floor(x) == x && x >= static_cast<double>(minimum)) {
        if (x > static_cast<double>(maximum)) return too_large(fmt::format("{:g}", x));
        return static_cast<long>(x);
      }
    }
    return error(field, why);
  }
  // A finite number > 0 (or >= 0 when allow_zero), at most `maximum`. The default bound, 10^6 in the
  // field's unit (1 s of latency, 10^6 GB/s, 10^6 TFLOP/s, 10^6 GiB), is beyond any hardware: a larger
  // value is a typo or a unit mistake, reported here rather than as a failure deep in the model.
  Result<double> number(const std::string& field, std::optional<double> fallback, bool allow_zero = false,
                        double maximum = 1e6) const {
    m_seen.insert(field);
    if (!has(field)) {
      if (fallback) return *fallback;
      return error(field, "required");
    }
    const auto& v = m_object.at(field);
    const char* why = allow_zero ? "must be a non-negative number" : "must be a positive number";
    if (!v.is_number()) return error(field, why);
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < 0 || (!allow_zero && x == 0)) return error(field, why);
    if (x > maximum) return error(field, fmt::format("{:g} is out of range (at most {:g})", x, maximum));
    return x;
  }
  Result<double> fraction(const std::string& field, double fallback) const {
    LAGOM_TRY(double x, number(field, fallback));
    if (x > 1.0) return error(field, "must be in (0, 1]");
    return x;
  }
  Result<std::string> string(const std::string& field, std::optional<std::string> fallback) const {
    m_seen.insert(field);
    if (!has(field)) {
      if (fallback) return *fallback;
      return error(field, "required");
    }
    if (!m_object.at(field).is_string()) return error(field, "must be a string");
    return m_object.at(field).get<std::string>();
  }
  Result<bool> boolean(const std::string& field, bool fallback) const {
    m_seen.insert(field);
    if (!has(field)) return fallback;
    if (!m_object.at(field).is_boolean()) return error(field, "must be true or false");
    return m_object.at(field).get<bool>();
  }
  template <typename E, std::size_t N>
  Result<E> choice(const std::string& field, std::optional<E> fallback, const EnumTable<E, N>& table) const {
    LAGOM_TRY(std::string text,
              string(field, fallback ? std::optional<std::string>(std::string(table.name(*fallback)))
                                     : std::nullopt));
    const auto value = table.parse(text);
    if (!value) return error(field, fmt::format("'{}' is not one of {}", text, table.choices()));
    return *value;
  }
  Result<Reader> object(const std::string& field) const {
    m_seen.insert(field);
    if (!has(field)) return error(field, "required");
    if (!m_object.at(field).is_object()) return error(field, "must be an object");
    return Reader(m_object.at(field), m_origin, m_prefix + field + ".");
  }
  void mark(const std::string& field) const { m_seen.insert(field); }
  // Spec files reject unknown fields: a typo must not silently fall back to a default.
  [[nodiscard]] Status no_unknown_fields() const {
    for (const auto& item : m_object.items()) {
      if (m_seen.count(item.key()) == 0) return error(item.key(), "unknown field");
    }
    return {};
  }

 private:
  const nlohmann::json& m_object;
  std::string m_origin;
  std::string m_prefix;
  mutable std::set<std::string> m_seen;
};

inline Status require_object(const nlohmann::json& document, const std::string& origin) {
  if (!document.is_object()) {
    return make_error(ErrorCode::invalid_input, fmt::format("{}: not a JSON object", origin));
  }
  return {};
}

}  // namespace lagom::model
