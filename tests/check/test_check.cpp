#include <catch2/catch.hpp>

#include "check/regression.h"

using namespace lagom::check;
using nlohmann::json;

namespace {
json simulate_doc(double iteration_s, double mfu) {
  return {{"iteration_time_s", iteration_s},
          {"tokens_per_s", 1000.0 / iteration_s},
          {"mfu", mfu},
          {"breakdown_s", {{"compute", iteration_s * 0.8}, {"exposed_comm", iteration_s * 0.2}}},
          {"memory_gib_per_gpu", {{"total", 40.0}}},
          {"fits_in_memory", true}};
}
Report run(const json& a, const json& b, const std::string& tol) {
  const auto kind = detect_kind(a).value();
  return compare(kind, extract_metrics(a, kind).value(), extract_metrics(b, kind).value(),
                 parse_tolerance(tol).value());
}
}  // namespace

TEST_CASE("identical documents pass", "[cli]") {
  const auto report = run(simulate_doc(2.0, 0.5), simulate_doc(2.0, 0.5), "5");
  CHECK(report.regressions() == 0);
  CHECK(report.comparisons.size() == 7);  // 3 headline + 2 breakdown + memory + fits
}

TEST_CASE("a 10% slower iteration regresses under a 5% tolerance and names the metric", "[cli]") {
  const auto report = run(simulate_doc(2.0, 0.5), simulate_doc(2.2, 0.5), "5%");
  REQUIRE(report.regressions() >= 1);
  bool named = false;
  for (const auto& c : report.comparisons) {
    if (c.name == "iteration_time_s") {
      named = true;
      CHECK(c.verdict == Verdict::regressed);
      CHECK(c.delta_pct == Approx(10.0));
    }
  }
  CHECK(named);
}

TEST_CASE("a faster iteration passes and shows as improved", "[cli]") {
  const auto report = run(simulate_doc(2.0, 0.5), simulate_doc(1.8, 0.5), "5");
  CHECK(report.regressions() == 0);
  CHECK(report.comparisons[0].verdict == Verdict::improved);
}

TEST_CASE("per-metric tolerances override the default", "[cli]") {
  // +10% iteration time, +12.5% of both breakdown terms, tokens/s -9.1%: only what 20% does not cover fails.
  const auto report = run(simulate_doc(2.0, 0.5), simulate_doc(2.2, 0.5), "20,iteration_time_s=1");
  CHECK(report.regressions() == 1);
  const auto t = parse_tolerance("busbw_GBps=3,iteration_time_s=1").value();
  CHECK(t.for_field("busbw_GBps") == 3.0);
  CHECK(t.for_field("mfu") == 5.0);
}

TEST_CASE("bad tolerances are errors", "[cli]") {
  for (const char* bad : {"", "-1", "abc", "x=", "=3", "5%%"}) {
    INFO(bad);
    CHECK_FALSE(parse_tolerance(bad).ok());
  }
}

TEST_CASE("a profile with one size's busbw lowered by 20% fails at that collective and size", "[cli]") {
  json base = {{"run", {{"id", 1}}}, {"comm_samples", json::array()}};
  for (long long bytes : {1LL << 20, 1LL << 24, 1LL << 28}) {
    base["comm_samples"].push_back(
        {{"collective", "allreduce"}, {"ranks", 2}, {"bytes", bytes}, {"busbw_GBps", 10.0}});
  }
  json cur = base;
  cur["comm_samples"][1]["busbw_GBps"] = 8.0;
  const auto report = run(base, cur, "5");
  REQUIRE(report.regressions() == 1);
  for (const auto& c : report.comparisons) {
    if (c.verdict == Verdict::regressed) CHECK(c.name == "busbw_GBps allreduce 2r 16M");
  }
}

TEST_CASE("documents of different kinds are told apart", "[cli]") {
  CHECK(detect_kind(simulate_doc(1, 0.5)).value() == DocumentKind::simulate);
  CHECK(detect_kind(json{{"search", "lagom"}, {"predicted_iteration_time_s", 1.0}}).value() ==
        DocumentKind::tune);
  CHECK_FALSE(detect_kind(json{{"hello", 1}}).ok());
}
