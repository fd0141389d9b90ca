#include "core/json_fields.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/files.h"

namespace lagom {

FieldReader::FieldReader(const nlohmann::json& object, std::string origin, std::string prefix,
                         UnknownFields unknown, double number_maximum)
    : m_object(&object),
      m_origin(std::move(origin)),
      m_prefix(std::move(prefix)),
      m_unknown(unknown),
      m_number_maximum(number_maximum) {}

Error FieldReader::error(const std::string& field, const std::string& why) const {
  if (field.empty()) {
    std::string path = m_prefix;
    if (!path.empty() && path.back() == '.') path.pop_back();
    if (path.empty()) return make_error(ErrorCode::invalid_input, fmt::format("{}: {}", m_origin, why));
    return make_error(ErrorCode::invalid_input, fmt::format("{}: {}: {}", m_origin, path, why));
  }
  return make_error(ErrorCode::invalid_input, fmt::format("{}: {}{}: {}", m_origin, m_prefix, field, why));
}

bool FieldReader::has(const std::string& field) const {
  return m_object->is_object() && m_object->contains(field) && !m_object->at(field).is_null();
}

const nlohmann::json& FieldReader::at(const std::string& field) const {
  m_seen.insert(field);
  return m_object->at(field);
}

Result<std::int64_t> FieldReader::integer(const std::string& field, std::optional<std::int64_t> fallback,
                                          std::int64_t minimum, std::int64_t maximum) const {
  m_seen.insert(field);
  if (!has(field)) {
    if (fallback) return *fallback;
    return error(field, "required");
  }
  const auto& v = m_object->at(field);
  const char* why = minimum >= 1 ? "must be a positive integer" : "must be a non-negative integer";
  if (minimum < 0) why = "must be an integer";
  auto too_large = [&](const std::string& text) {
    return error(field, fmt::format("{} is out of range (at most {})", text, maximum));
  };
  if (v.is_number_unsigned()) {
    const auto x = v.get<std::uint64_t>();
    if (x > static_cast<std::uint64_t>(maximum)) return too_large(std::to_string(x));
    if (static_cast<std::int64_t>(x) < minimum) return error(field, why);
    return static_cast<std::int64_t>(x);
  }
  if (v.is_number_integer()) {
    const auto x = v.get<std::int64_t>();
    if (x < minimum) return error(field, why);
    if (x > maximum) return too_large(std::to_string(x));
    return x;
  }
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (std::isfinite(x) && std::floor(x) == x && x >= static_cast<double>(minimum)) {
      // 2^63 is the first double above every int64: compare before converting.
      if (x >= 9223372036854775808.0 || x > static_cast<double>(maximum))
        return too_large(fmt::format("{:g}", x));
      return static_cast<std::int64_t>(x);
    }
  }
  return error(field, why);
}

Result<double> FieldReader::number(const std::string& field, std::optional<double> fallback, bool allow_zero,
                                   std::optional<double> maximum) const {
  m_seen.insert(field);
  if (!has(field)) {
    if (fallback) return *fallback;
    return error(field, "required");
  }
  const auto& v = m_object->at(field);
  const char* why = allow_zero ? "must be a non-negative number" : "must be a positive number";
  if (!v.is_number()) return error(field, why);
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < 0 || (!allow_zero && x == 0)) return error(field, why);
  const double bound = maximum.value_or(m_number_maximum);
  if (x > bound) return error(field, fmt::format("{:g} is out of range (at most {:g})", x, bound));
  return x;
}

Result<double> FieldReader::finite(const std::string& field, std::optional<double> fallback) const {
  m_seen.insert(field);
  if (!has(field)) {
    if (fallback) return *fallback;
    return error(field, "required");
  }
  const auto& v = m_object->at(field);
  if (!v.is_number() || !std::isfinite(v.get<double>())) return error(field, "must be a finite number");
  return v.get<double>();
}

Result<double> FieldReader::fraction(const std::string& field, double fallback) const {
  LAGOM_TRY(double x, number(field, fallback));
  if (x > 1.0) return error(field, "must be in (0, 1]");
  return x;
}

Result<std::optional<double>> FieldReader::optional_number(const std::string& field, bool allow_zero,
                                                           bool allow_negative) const {
  m_seen.insert(field);
  if (!has(field)) return std::optional<double>();
  const auto& v = m_object->at(field);
  if (allow_negative) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) return error(field, "must be a finite number");
    return std::optional<double>(v.get<double>());
  }
  LAGOM_TRY(const double x, number(field, std::nullopt, allow_zero));
  return std::optional<double>(x);
}

Result<std::string> FieldReader::string(const std::string& field, std::optional<std::string> fallback) const {
  m_seen.insert(field);
  if (!has(field)) {
    if (fallback) return *fallback;
    return error(field, "required");
  }
  if (!m_object->at(field).is_string()) return error(field, "must be a string");
  return m_object->at(field).get<std::string>();
}

Result<bool> FieldReader::boolean(const std::string& field, std::optional<bool> fallback) const {
  m_seen.insert(field);
  if (!has(field)) {
    if (fallback) return *fallback;
    return error(field, "required");
  }
  if (!m_object->at(field).is_boolean()) return error(field, "must be true or false");
  return m_object->at(field).get<bool>();
}

Result<FieldReader> FieldReader::object(const std::string& field) const {
  m_seen.insert(field);
  if (!has(field)) return error(field, "required");
  if (!m_object->at(field).is_object()) return error(field, "must be an object");
  return FieldReader(m_object->at(field), m_origin, m_prefix + field + ".", m_unknown, m_number_maximum);
}

Result<const nlohmann::json*> FieldReader::array(const std::string& field) const {
  m_seen.insert(field);
  if (!has(field)) return error(field, "required");
  if (!m_object->at(field).is_array()) return error(field, "must be an array");
  return &m_object->at(field);
}

Result<FieldReader> FieldReader::element(const std::string& field, const nlohmann::json& array,
                                         std::size_t index) const {
  const std::string name = fmt::format("{}[{}]", field, index);
  if (index >= array.size() || !array[index].is_object()) return error(name, "must be an object");
  return FieldReader(array[index], m_origin, m_prefix + name + ".", m_unknown, m_number_maximum);
}

std::vector<std::string> FieldReader::unknown() const {
  std::vector<std::string> out;
  if (!m_object->is_object()) return out;
  for (const auto& item : m_object->items()) {
    if (m_seen.count(item.key()) == 0) out.push_back(m_prefix + item.key());
  }
  return out;
}

Status FieldReader::finish() const {
  if (m_unknown != UnknownFields::error || !m_object->is_object()) return {};
  for (const auto& item : m_object->items()) {
    if (m_seen.count(item.key()) == 0) return error(item.key(), "unknown field");
  }
  return {};
}

Status require_object(const nlohmann::json& document, const std::string& origin) {
  if (!document.is_object()) {
    return make_error(ErrorCode::invalid_input, fmt::format("{}: not a JSON object", origin));
  }
  return {};
}

Result<nlohmann::json> read_json_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return make_error(ErrorCode::invalid_input, fmt::format("{}: is a directory, not a JSON file", path));
  }
  LAGOM_TRY(const std::string text, files::read_input(path));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and out_of_range for a number no double holds (1e400: "number overflow"): both are the
    // file's fault, not an internal error.
    return make_error(ErrorCode::invalid_input, fmt::format("{}: not valid JSON ({})", path, e.what()));
  }
}

}  // namespace lagom
