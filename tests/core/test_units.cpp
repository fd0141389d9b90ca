#include <catch2/catch.hpp>

#include "core/units.h"

using lagom::units::parse_size;

TEST_CASE("sizes accept K/M/G/T suffixes as powers of 1024", "[core]") {
  CHECK(parse_size("4096").value() == 4096);
  CHECK(parse_size("64K").value() == 64 * 1024);
  CHECK(parse_size("1M").value() == 1048576);
  CHECK(parse_size("1g").value() == 1073741824);
  CHECK(parse_size("2GiB").value() == 2LL * 1073741824);
  CHECK(parse_size("1T").value() == 1099511627776LL);
}

TEST_CASE("negative, empty, fractional and overflowing sizes are errors", "[core]") {
  for (const char* bad : {"-1", "", "1.5M", "M", "12Q", "99999999999999999999", "9000000T"}) {
    INFO(bad);
    const auto r = parse_size(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == lagom::ErrorCode::invalid_input);
  }
  CHECK(parse_size("-1").error().message == "'-1': size must not be negative");
}

TEST_CASE("format_size renders powers of 1024 compactly", "[core]") {
  CHECK(lagom::units::format_size(1048576) == "1M");
  CHECK(lagom::units::format_size(1536) == "1.5K");
  CHECK(lagom::units::format_size(100) == "100");
}
