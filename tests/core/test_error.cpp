#include <catch2/catch.hpp>

#include "core/error.h"

namespace {
lagom::Result<int> half(int x) {
  if (x % 2 != 0) return lagom::make_error(lagom::ErrorCode::invalid_input, "odd");
  return x / 2;
}
lagom::Result<int> quarter(int x) {
  LAGOM_TRY(int h, half(x));
  LAGOM_TRY(int q, half(h));
  return q;
}
}  // namespace

TEST_CASE("LAGOM_TRY propagates the first error", "[core]") {
  CHECK(quarter(8).value() == 2);
  CHECK_FALSE(quarter(6).ok());
  CHECK(quarter(6).error().message == "odd");
  CHECK(half(3).error().with_context("x").message == "x: odd");
}
