#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::run_lagom;
using lagom::test::temp_dir;
using lagom::test::write_file;

namespace {
std::string sim(double t) {
  return "{\"iteration_time_s\":" + std::to_string(t) + ",\"tokens_per_s\":" + std::to_string(1000 / t) +
         ",\"mfu\":0.5,\"breakdown_s\":{\"compute\":" + std::to_string(t) + "},\"fits_in_memory\":true}";
}
}  // namespace

TEST_CASE("check exits 0 on identical inputs, 1 on a regression that it names, 2 on mixed kinds", "[cli]") {
  const std::string dir = temp_dir("check");
  write_file(dir + "/a.json", sim(2.0));
  write_file(dir + "/b.json", sim(2.2));
  write_file(dir + "/c.json", sim(1.8));
  write_file(dir + "/t.json", R"({"search":"lagom","predicted_iteration_time_s":1.0,"speedup":1.1})");

  CHECK(run_lagom({"check", "--baseline", dir + "/a.json", "--current", dir + "/a.json"}).exit_code == 0);

  const auto slower = run_lagom({"check", "--baseline", dir + "/a.json", "--current", dir + "/b.json",
                                 "--tolerance", "5", "--junit", dir + "/junit.xml"});
  CHECK(slower.exit_code == 1);
  CHECK(slower.err.find("iteration_time_s (+10.0%)") != std::string::npos);
  CHECK(slower.out.find("REGRESSED") != std::string::npos);
  CHECK(lagom::test::read_file(dir + "/junit.xml").find("<failure message=\"iteration_time_s:") !=
        std::string::npos);

  CHECK(run_lagom({"check", "--baseline", dir + "/a.json", "--current", dir + "/c.json"}).exit_code == 0);

  const auto mixed = run_lagom({"check", "--baseline", dir + "/a.json", "--current", dir + "/t.json"});
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.err == "lagom: error: check: baseline is a simulate document but current is a tune document\n");

  const auto json =
      run_lagom({"check", "--baseline", dir + "/a.json", "--current", dir + "/b.json", "--json"});
  CHECK(json.out.find("\"passed\":false") != std::string::npos);
  CHECK(run_lagom({"check", "--baseline", dir + "/nope.json", "--current", dir + "/a.json"}).exit_code == 2);
}

TEST_CASE("a profile run checked against a copy with one size's busbw 20% lower fails naming it", "[cli]") {
  const std::string dir = temp_dir("check-db");
  const std::string db = dir + "/p.db";
  const auto imported =
      run_lagom({"db", "import", std::string(LAGOM_TEST_DATA_DIR) + "/vtrain/AR_GPU8_1M_1024M_LUT", "--db",
                 db, "--quiet"});
  REQUIRE(imported.exit_code == 0);
  CHECK(run_lagom({"check", "--baseline", "1", "--current", "1", "--db", db}).exit_code == 0);

  const auto exported = run_lagom({"db", "export", "1", "--format", "json", "--db", db});
  REQUIRE(exported.exit_code == 0);
  auto doc = nlohmann::json::parse(exported.out);
  int lowered = 0;
  for (auto& sample : doc["comm"]) {
    if (sample["bytes"] == 64 * 1024 * 1024) {
      sample["busbw_GBps"] = sample["busbw_GBps"].get<double>() * 0.8;
      ++lowered;
    }
  }
  REQUIRE(lowered > 0);
  write_file(dir + "/lowered.json", doc.dump());
  const auto r = run_lagom({"check", "--baseline", "1", "--current", dir + "/lowered.json", "--db", db});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("busbw_GBps allreduce 8r 64M (-20.0%)") != std::string::npos);
  CHECK(run_lagom({"check", "--baseline", "7", "--current", "1", "--db", db}).exit_code == 2);

  // A run of another backend or host is compared, with a warning that it measures other things.
  CHECK(r.err.find("warning") == std::string::npos);
  doc["run"]["host"] = "here";
  write_file(dir + "/here.json", doc.dump());
  doc["run"]["backend"] = "cpu";
  doc["run"]["host"] = "elsewhere";
  write_file(dir + "/other.json", doc.dump());
  const auto other = run_lagom({"check", "--baseline", dir + "/here.json", "--current", dir + "/other.json"});
  CHECK(other.exit_code == 0);  // the same numbers: only a warning
  CHECK(other.err.find("lagom: warning: check: the baseline's backend is ") != std::string::npos);
  CHECK(other.err.find("but the current's is cpu") != std::string::npos);
  CHECK(other.err.find("the baseline's host is here but the current's is elsewhere") != std::string::npos);
}
