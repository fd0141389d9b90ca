// Internal to model/: the name tables of the enums the spec files use (their fields are read by
// core/json_fields.h's FieldReader). specs.cpp and hf_config.cpp share it; nothing outside model/
// includes it.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace lagom::model {

template <typename E, std::size_t N>
inline std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "unknown";
}
template <typename E, std::size_t N>
inline std::optional<E> value_of(const std::array<std::pair<E, std::string_view>, N>& table,
                                 std::string_view name) {
  for (const auto& [e, n] : table) {
    if (n == name) return e;
  }
  return std::nullopt;
}
template <typename E, std::size_t N>
inline std::string names_of(const std::array<std::pair<E, std::string_view>, N>& table) {
  std::string out;
  for (const auto& [e, n] : table) out += (out.empty() ? "" : "|") + std::string(n);
  return out;
}

}  // namespace lagom::model
