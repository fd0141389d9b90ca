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

TEST_CASE("a size with a fraction is read when it comes to whole bytes, as format_size writes it", "[core]") {
  CHECK(parse_size("1.5G").value() == 1610612736);
  CHECK(parse_size("1.5M").value() == 1572864);
  CHECK(parse_size("0.25K").value() == 256);
  CHECK(parse_size("2.0").value() == 2);
  CHECK(parse_size("1.001953125K").value() == 1026);                             // 1 + 2/1024
  CHECK(parse_size("1.0001220703125T").value() == 1099511627776LL + 134217728);  // 1 + 2^-13
  for (const std::int64_t bytes : {1536LL, 1572864LL, 3221225472LL, 100LL, 1099511627776LL}) {
    INFO(bytes);
    CHECK(parse_size(lagom::units::format_size(bytes)).value() == bytes);
  }
}

TEST_CASE("negative, empty, fractional and overflowing sizes are errors", "[core]") {
  for (const char* bad : {"-1", "", "1.3K", "1.5", "1.", ".5K", "M", "12Q", "1.5Q", "99999999999999999999",
                          "9000000T", "8388607.99999T", "1.1234567890123456789M"}) {
    INFO(bad);
    const auto r = parse_size(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == lagom::ErrorCode::invalid_input);
  }
  CHECK(parse_size("-1").error().message == "'-1': size must not be negative");
  CHECK(parse_size("1.3K").error().message == "'1.3K': 1331.2 bytes is not a whole number of bytes");
  CHECK(parse_size("1.5").error().message == "'1.5': 1.5 bytes is not a whole number of bytes");
  CHECK(parse_size("12Q").error().message ==
        "'12Q': unknown size suffix (K, M, G or T, powers of 1024, with an optional B or iB)");
}

TEST_CASE("booleans are one vocabulary: on/off, true/false, yes/no, 1/0 in any case", "[core]") {
  for (const char* yes : {"on", "true", "yes", "1", "ON", "True", "YES"})
    CHECK(lagom::units::parse_boolean(yes) == true);
  for (const char* no : {"off", "false", "no", "0", "Off", "FALSE"})
    CHECK(lagom::units::parse_boolean(no) == false);
  for (const char* neither : {"", "maybe", "2", "onn", " on"})
    CHECK_FALSE(lagom::units::parse_boolean(neither));
}

TEST_CASE("format_size renders powers of 1024 compactly", "[core]") {
  CHECK(lagom::units::format_size(1048576) == "1M");
  CHECK(lagom::units::format_size(1536) == "1.5K");
  CHECK(lagom::units::format_size(100) == "100");
}
