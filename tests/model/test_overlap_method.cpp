// The one parser of TP overlap methods (model/overlap_method.h): every command's flag and the comm config
// read methods through it.
#include <catch2/catch.hpp>

#include "model/overlap_method.h"

using namespace lagom::model;

TEST_CASE("overlap methods round-trip through their one spelling", "[model]") {
  for (const char* name : {"none", "slice:2", "slice:4", "slice:16", "slice:4096", "flash"}) {
    INFO(name);
    CHECK(to_string(parse_overlap_method(name).value()) == name);
  }
  CHECK(parse_overlap_method("slice:8").value() == OverlapMethod{OverlapMethodKind::slice, 8});
  CHECK(parse_overlap_method("flash").value() == OverlapMethod{OverlapMethodKind::flash, 1});
}

TEST_CASE("vanilla is none by its FlashOverlap name", "[model]") {
  CHECK(parse_overlap_method("vanilla").value() == OverlapMethod{});
  CHECK(to_string(parse_overlap_method("vanilla").value()) == "none");
  CHECK(parse_overlap_method("te").value().kind == OverlapMethodKind::te);
  CHECK(to_string(parse_overlap_method("te").value()) == "te");
}

TEST_CASE("slice:K takes K from 2 to 4096; anything else gets one message naming the range", "[model]") {
  // slice:1 is one chunk: the whole collective, then the whole GEMM, which is none.
  for (const char* bad : {"slice:1", "slice:0", "slice:4097", "slice:5000", "slice:-2", "slice:", "slice:2x",
                          "slice:99999999999", "ring", "", "Flash"}) {
    INFO(bad);
    const auto parsed = parse_overlap_method(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().code == lagom::ErrorCode::invalid_input);
    CHECK(parsed.error().message ==
          "'" + std::string(bad) + "' is not none, slice:K (K from 2 to 4096), flash or te");
  }
}

TEST_CASE("methods made in code are held to the parser's bounds", "[model]") {
  CHECK(check_overlap_method({OverlapMethodKind::slice, 2}).ok());
  CHECK(check_overlap_method({OverlapMethodKind::flash, 1}).ok());
  CHECK(check_overlap_method({OverlapMethodKind::slice, 1}).error().message ==
        "slice:K needs K from 2 to 4096 (got 1)");
  CHECK(check_overlap_method({OverlapMethodKind::slice, 4097}).error().message ==
        "slice:K needs K from 2 to 4096 (got 4097)");
}
