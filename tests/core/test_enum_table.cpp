#include <catch2/catch.hpp>

#include "core/enum_table.h"

namespace lagom::test_enum {

enum class Color { red, green, blue };
inline constexpr auto k_color_names =
    enum_table<Color>({{Color::red, "red"}, {Color::green, "green"}, {Color::blue, "light-blue"}});
constexpr const auto& enum_names(Color) {
  return k_color_names;
}

enum class Lonely { only };
inline constexpr auto k_lonely_names = enum_table<Lonely>({{Lonely::only, "only"}});

TEST_CASE("an enum table names, parses and lists its values from one array", "[core]") {
  static_assert(k_color_names.name(Color::blue) == "light-blue");  // usable at compile time
  CHECK(to_string(Color::green) == "green");
  CHECK(parse_enum<Color>("light-blue") == Color::blue);
  CHECK_FALSE(parse_enum<Color>("blue").has_value());
  CHECK_FALSE(parse_enum<Color>("").has_value());
  CHECK(k_color_names.choices() == "red|green|light-blue");
  CHECK(k_color_names.choices(", ") == "red, green, light-blue");
  CHECK(k_color_names.alternatives() == "red, green or light-blue");
  CHECK(k_lonely_names.alternatives() == "only");
  CHECK(k_color_names.name(static_cast<Color>(7)) == "?");
}

TEST_CASE("an enum table's parse_or_error names the value and every choice", "[core]") {
  CHECK(k_color_names.parse_or_error("red").value() == Color::red);
  const auto bad = k_color_names.parse_or_error("purple");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == ErrorCode::invalid_input);
  CHECK(bad.error().message == "'purple' is not red, green or light-blue");
}

}  // namespace lagom::test_enum
