// One table per enum of the names its values have in flags, files and output: the name of a value, the value
// of a name, and the list of names that an error message offers, all read from one array so that the three
// never disagree (they were written by hand in three styles before: `to_string` switches, `parse_*` loops
// and choice lists typed into messages).
//
// An enum joins by declaring its table beside itself and a hook that ADL finds:
//
//   inline constexpr auto k_recompute_names = enum_table<Recompute>(
//       {{Recompute::none, "none"}, {Recompute::selective, "selective"}, {Recompute::full, "full"}});
//   constexpr const auto& enum_names(Recompute) { return k_recompute_names; }
//
// and then `to_string(value)`, `parse_enum<Recompute>(text)` and `k_recompute_names.choices()` work for it.
// A namespace that names values of its own enums unqualified brings `to_string` in with
// `using lagom::to_string;` (so its other `to_string` overloads do not hide this one).
//
// Tables are constexpr, immutable, safe to read from any thread.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"

namespace lagom {

template <typename E, std::size_t N>
struct EnumTable {
  std::array<std::pair<E, std::string_view>, N> entries;

  // The value's name. Every enumerator has a row (tests/model/test_enum_names.cpp checks the model's
  // tables), so "?" marks a value the table lacks: a programming error, never a name a user can give.
  [[nodiscard]] constexpr std::string_view name(E value) const {
    for (const auto& [e, n] : entries) {
      if (e == value) return n;
    }
    return "?";
  }
  [[nodiscard]] constexpr std::optional<E> parse(std::string_view text) const {
    for (const auto& [e, n] : entries) {
      if (n == text) return e;
    }
    return std::nullopt;
  }
  // The names joined by `separator`: "none|selective|full" (flags' help, docs/cli.md's flag rows).
  [[nodiscard]] std::string choices(std::string_view separator = "|") const {
    std::string out;
    for (const auto& [e, n] : entries) {
      if (!out.empty()) out += separator;
      out += n;
    }
    return out;
  }
  // The names as prose: "none, selective or full".
  [[nodiscard]] std::string alternatives() const {
    std::string out;
    for (std::size_t i = 0; i < N; ++i) {
      if (i > 0) out += i + 1 == N ? " or " : ", ";
      out += entries[i].second;
    }
    return out;
  }
  // The value of `text`, or invalid_input "'<text>' is not <alternatives>" (the caller adds the flag or the
  // field as context).
  [[nodiscard]] Result<E> parse_or_error(std::string_view text) const {
    if (const auto value = parse(text)) return *value;
    return make_error(ErrorCode::invalid_input, fmt::format("'{}' is not {}", text, alternatives()));
  }
  [[nodiscard]] static constexpr std::size_t size() { return N; }
  // The {value, name} rows, in order (FieldReader::choice reads a table through them).
  [[nodiscard]] constexpr auto begin() const { return entries.begin(); }
  [[nodiscard]] constexpr auto end() const { return entries.end(); }
};

// enum_table<E>({{E::a, "a"}, {E::b, "b"}}): the table of E's names, in the order choices() lists them.
template <typename E, std::size_t N>
constexpr EnumTable<E, N> enum_table(const std::pair<E, std::string_view> (&entries)[N]) {
  EnumTable<E, N> table{};
  for (std::size_t i = 0; i < N; ++i) table.entries[i] = entries[i];
  return table;
}

// An enum whose table `enum_names(E{})` finds (declared beside the enum).
template <typename E>
concept NamedEnum = std::is_enum_v<E> && requires(E value) {
  enum_names(value).name(value);
};

template <NamedEnum E>
constexpr std::string_view to_string(E value) {
  return enum_names(value).name(value);
}
template <NamedEnum E>
constexpr std::optional<E> parse_enum(std::string_view text) {
  return enum_names(E{}).parse(text);
}

}  // namespace lagom
