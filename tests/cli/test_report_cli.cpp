// `lagom report` as a user runs it: the page it writes, and inputs that are wrong in one place.
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::read_file;
using lagom::test::run_lagom;
using lagom::test::temp_dir;
using lagom::test::write_file;

namespace {

const std::vector<std::string> k_simulate{"simulate",  "--json",   "--model",        "gpt2",
                                          "--cluster", "dgx-a100", "--gpus",         "8",
                                          "--tp",      "2",        "--global-batch", "32"};

// A simulate --json document in `dir`; returns its path.
std::string simulate_file(const std::string& dir) {
  const auto r = run_lagom(k_simulate);
  REQUIRE(r.exit_code == 0);
  const std::string path = dir + "/sim.json";
  write_file(path, r.out);
  return path;
}

bool have_chart_js() {
  return std::ifstream("/usr/share/javascript/chart.js/chart.min.js").good();
}

// A stand-in for chart.min.js with the header the command looks for: these tests check the command, not
// the library (the browser tests run the real one).
std::string fake_library(const std::string& dir) {
  const std::string path = dir + "/chart.min.js";
  write_file(path, "/*!\n * Chart.js v0.0.1-test\n */\nwindow.Chart = function () {};\n");
  return path;
}

}  // namespace

TEST_CASE("report writes one HTML page that holds the library, the data and a section per input",
          "[cli][report]") {
  const std::string dir = temp_dir("report");
  const std::string sim = simulate_file(dir);
  const std::string library = fake_library(dir);
  const auto r = run_lagom({"report", sim, sim, "--out", dir + "/r.html", "--chart-js", library, "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto listing = nlohmann::json::parse(r.out);
  REQUIRE(listing["sections"].size() == 2);
  CHECK(listing["sections"][0]["kind"] == "simulate");
  CHECK(listing["sections"][0]["source"] == sim);
  const std::string html = read_file(dir + "/r.html");
  CHECK(listing["bytes"] == html.size());
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("Chart.js v0.0.1-test") != std::string::npos);
  CHECK(html.find("\"stage_breakdown_s\"") == std::string::npos);  // the section's data, not the document
  CHECK(html.find("\"stages\":[{") != std::string::npos);
  CHECK(html.find("src=\"http") == std::string::npos);
}

TEST_CASE("report reads Debian's Chart.js by default", "[cli][report]") {
  if (!have_chart_js()) {
    WARN("libjs-chart.js is not installed: the default library path is not tested");
    return;
  }
  const std::string dir = temp_dir("report");
  const auto r = run_lagom({"report", simulate_file(dir), "--out", dir + "/r.html", "--quiet"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  const std::string html = read_file(dir + "/r.html");
  CHECK(html.find(" * Chart.js v") != std::string::npos);
  CHECK(html.find("Released under the MIT License") != std::string::npos);
}

TEST_CASE("report without its chart library names the Debian package and exits 2", "[cli][report]") {
  const std::string dir = temp_dir("report");
  const auto r =
      run_lagom({"report", simulate_file(dir), "--out", dir + "/r.html", "--chart-js", dir + "/none.js"});
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "lagom: error: report: chart library " + dir +
            "/none.js: cannot open file (install the Debian package libjs-chart.js, or give --chart-js "
            "the path of chart.min.js)\n");
  write_file(dir + "/other.js", "var x = 1;\n");
  const auto other =
      run_lagom({"report", simulate_file(dir), "--out", dir + "/r.html", "--chart-js", dir + "/other.js"});
  CHECK(other.exit_code == 2);
  CHECK(other.err.find("lagom: error: report: chart library " + dir + "/other.js: not a Chart.js build") ==
        0);
  CHECK_FALSE(std::ifstream(dir + "/r.html").good());
}

TEST_CASE("report refuses a document of an unknown kind, malformed JSON and a missing field, naming each",
          "[cli][report]") {
  const std::string dir = temp_dir("report");
  const std::string library = fake_library(dir);
  write_file(dir + "/other.json", "{\"hello\": 1}");
  const auto unknown =
      run_lagom({"report", dir + "/other.json", "--out", dir + "/r.html", "--chart-js", library});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err ==
        "lagom: error: report: " + dir +
            "/other.json: not a document lagom report reads (simulate --json, explore --json, tune "
            "--json or lagom-config.json, profile --json or db export --format json, validate --json, check "
            "--json)\n");
  write_file(dir + "/bad.json", "{\"iteration_time_s\": ");
  const auto bad = run_lagom({"report", dir + "/bad.json", "--out", dir + "/r.html", "--chart-js", library});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("lagom: error: report: " + dir + "/bad.json: not valid JSON") == 0);
  auto doc = nlohmann::json::parse(read_file(simulate_file(dir)));
  doc["breakdown_s"].erase("exposed_comm");
  write_file(dir + "/cut.json", doc.dump());
  const auto cut = run_lagom({"report", dir + "/cut.json", "--out", dir + "/r.html", "--chart-js", library});
  CHECK(cut.exit_code == 2);
  CHECK(cut.err == "lagom: error: report: " + dir + "/cut.json: breakdown_s.exposed_comm: required\n");
  const auto none = run_lagom({"report", "--out", dir + "/r.html", "--chart-js", library});
  CHECK(none.exit_code == 2);
  CHECK(none.err == "lagom: error: report: no input (give documents, or --run ID with --db PATH)\n");
  const auto run = run_lagom(
      {"report", "--db", dir + "/none.db", "--run", "4", "--out", dir + "/r.html", "--chart-js", library});
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("lagom: error: report: " + dir + "/none.db run 4: ") == 0);
  CHECK_FALSE(std::ifstream(dir + "/r.html").good());
}

TEST_CASE("report never writes over one of its inputs", "[cli][report]") {
  const std::string dir = temp_dir("report");
  const std::string sim = simulate_file(dir);
  const std::string before = read_file(sim);
  const auto r = run_lagom({"report", sim, "--out", sim, "--chart-js", fake_library(dir)});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("lagom: error: report: --out: ") == 0);
  CHECK(read_file(sim) == before);
}

TEST_CASE("tune's default per op class is NCCL's choice: with --search default it is the tuned one",
          "[cli][report]") {
  const std::string dir = temp_dir("report");
  const std::vector<std::string> scenario{
      "--model", "llama3-8b",      "--cluster", "a40-nvlink-ib400", "--gpus", "16", "--tp", "8",
      "--sp",    "--global-batch", "64",        "--quiet",          "--json"};
  auto args = scenario;
  args.insert(args.begin(), {"tune", "--search", "default", "--out", dir + "/default"});
  const auto r = run_lagom(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  REQUIRE_FALSE(doc["ops"].empty());
  for (const auto& op : doc["ops"]) {
    INFO(op.dump());
    REQUIRE(op.contains("default"));
    CHECK(op["default"]["algo"] == op["algo"]);
    CHECK(op["default"]["proto"] == op["proto"]);
    CHECK(op["default"]["channels"] == op["channels"]);
    CHECK(op["default"]["time_us"].get<double>() ==
          Approx(op["predicted_time_us"].get<double>()).epsilon(1e-12));
  }
  // the lagom search moves the gradient bucket: that class has no default, the others keep theirs
  args = scenario;
  args.insert(args.begin(), {"tune", "--out", dir + "/lagom"});
  const auto tuned = nlohmann::json::parse(run_lagom(args).out);
  int with_default = 0;
  for (const auto& op : tuned["ops"]) with_default += op.contains("default") ? 1 : 0;
  CHECK(with_default > 0);
  CHECK(with_default < static_cast<int>(tuned["ops"].size()));
}

TEST_CASE("report takes one id per --run, so documents may follow it; runs come after the documents",
          "[cli][report]") {
  const std::string dir = temp_dir("report");
  const std::string db = dir + "/lagom.db";
  const auto imported =
      run_lagom({"db", "import", std::string(LAGOM_TEST_DATA_DIR) + "/vtrain/AR_GPU2_1M_1024M_LUT", "--db",
                 db, "--quiet"});
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  const std::string sim = simulate_file(dir);
  const auto r = run_lagom({"report", "--db", db, "--run", "1", sim, "--out", dir + "/r.html", "--chart-js",
                            fake_library(dir), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto listing = nlohmann::json::parse(r.out);
  REQUIRE(listing["sections"].size() == 2);
  CHECK(listing["sections"][0]["kind"] == "simulate");
  CHECK(listing["sections"][1]["kind"] == "profile");
  CHECK(listing["sections"][1]["source"] == db + " run 1");
}
