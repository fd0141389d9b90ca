// core/json_fields.h: the one reader of JSON fields. Messages are asserted word for word: they are what a
// user sees for a wrong field in any file Lagom reads.
#include <array>
#include <string_view>
#include <utility>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/json_fields.h"

using lagom::FieldReader;
using lagom::UnknownFields;
using json = nlohmann::json;

TEST_CASE("an integer no int holds is refused, never truncated, and bounds are the caller's", "[core]") {
  const json doc = {{"ranks", 4294967312ULL}, {"neg", -3},  {"half", 1.5}, {"whole", 16.0}, {"big", 1e300},
                    {"bytes", 4294967312ULL}, {"text", "8"}};
  const FieldReader r(doc, "cfg.json", "ops[0].");
  CHECK(r.integer("ranks", std::nullopt).error().message ==
        "cfg.json: ops[0].ranks: 4294967312 is out of range (at most 2147483647)");
  CHECK(r.integer("neg", std::nullopt).error().message == "cfg.json: ops[0].neg: must be a positive integer");
  CHECK(r.integer("neg", std::nullopt, 0).error().message ==
        "cfg.json: ops[0].neg: must be a non-negative integer");
  CHECK(r.integer("neg", std::nullopt, -10).value() == -3);
  CHECK(r.integer("half", std::nullopt).error().message ==
        "cfg.json: ops[0].half: must be a positive integer");
  CHECK(r.integer("whole", std::nullopt).value() == 16);
  CHECK(r.integer("big", std::nullopt, 0, std::numeric_limits<std::int64_t>::max()).error().message ==
        "cfg.json: ops[0].big: 1e+300 is out of range (at most 9223372036854775807)");
  CHECK(r.integer("bytes", std::nullopt, 0, std::numeric_limits<std::int64_t>::max()).value() ==
        4294967312LL);
  CHECK(r.integer("text", std::nullopt).error().message ==
        "cfg.json: ops[0].text: must be a positive integer");
  CHECK(r.integer("absent", std::nullopt).error().message == "cfg.json: ops[0].absent: required");
  CHECK(r.integer("absent", 7).value() == 7);
}

TEST_CASE("numbers are finite and bounded, strings, booleans and names are checked by type", "[core]") {
  const json doc = {{"x", 2.5},  {"zero", 0},    {"huge", 2e6},  {"s", "a"},
                    {"b", true}, {"n", nullptr}, {"e", "ll128"}, {"neg", -0.5}};
  const FieldReader r(doc, "f", "", UnknownFields::ignore, 1e6);
  CHECK(r.number("x", std::nullopt).value() == 2.5);
  CHECK(r.number("zero", std::nullopt).error().message == "f: zero: must be a positive number");
  CHECK(r.number("zero", std::nullopt, true).value() == 0);
  CHECK(r.number("huge", std::nullopt).error().message == "f: huge: 2e+06 is out of range (at most 1e+06)");
  CHECK(r.number("huge", std::nullopt, false, 1e7).value() == 2e6);
  CHECK(r.fraction("x", 0.5).error().message == "f: x: must be in (0, 1]");
  CHECK(r.optional_number("n").value() == std::nullopt);
  CHECK(r.optional_number("neg").error().message == "f: neg: must be a non-negative number");
  CHECK(r.optional_number("neg", true, true).value() == -0.5);
  CHECK(r.string("x", std::nullopt).error().message == "f: x: must be a string");
  CHECK(r.string("n", std::string("dflt")).value() == "dflt");  // null is absent
  CHECK(r.boolean("s", std::nullopt).error().message == "f: s: must be true or false");
  CHECK(r.boolean("b", false).value());
  enum class Proto { simple, ll, ll128 };
  constexpr std::array<std::pair<Proto, std::string_view>, 3> k_protos{
      {{Proto::simple, "simple"}, {Proto::ll, "ll"}, {Proto::ll128, "ll128"}}};
  CHECK(r.choice<Proto>("e", std::nullopt, k_protos).value() == Proto::ll128);
  CHECK(r.choice<Proto>("absent", Proto::ll, k_protos).value() == Proto::ll);
  CHECK(r.choice<Proto>("s", std::nullopt, k_protos).error().message ==
        "f: s: 'a' is not one of simple|ll|ll128");
}

TEST_CASE("nested objects and array elements carry their path, and unknown fields follow the policy",
          "[core]") {
  const json doc = {
      {"gpu", {{"tflops", 1.0}, {"typo", 2}}}, {"ops", json::array({{{"a", 1}}, 3})}, {"extra", 1}};
  const FieldReader strict(doc, "c.json");
  auto gpu = strict.object("gpu");
  REQUIRE(gpu.ok());
  CHECK(gpu->number("tflops", std::nullopt).value() == 1.0);
  CHECK(gpu->finish().error().message == "c.json: gpu.typo: unknown field");
  const auto ops = strict.array("ops");
  REQUIRE(ops.ok());
  CHECK(strict.element("ops", **ops, 0)->integer("a", std::nullopt).value() == 1);
  CHECK(strict.element("ops", **ops, 1).error().message == "c.json: ops[1]: must be an object");
  CHECK(strict.object("extra").error().message == "c.json: extra: must be an object");
  CHECK(strict.array("gpu").error().message == "c.json: gpu: must be an array");
  CHECK(strict.finish().ok());  // every field was read above

  const FieldReader collect(doc, "c.json", "", UnknownFields::collect);
  (void)collect.array("ops");
  CHECK(collect.finish().ok());
  CHECK(collect.unknown() == std::vector<std::string>{"extra", "gpu"});
  const FieldReader ignore(doc, "c.json", "", UnknownFields::ignore);
  CHECK(ignore.finish().ok());
  CHECK(ignore.error("", "must be an object").message == "c.json: must be an object");
}
