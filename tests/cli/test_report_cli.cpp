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

// A plan --json document in `dir` (two clusters at two GPU counts each, priced, with a deadline: the
// small plan of tests/plan/test_plan_cli.cpp); returns its path.
std::string plan_file(const std::string& dir) {
  const auto r =
      run_lagom({"plan",     "--model",    "llama3-8b", "--cluster",      "dgx-h100",   "--cluster",
                 "dgx-a100", "--gpus",     "8,16",      "--global-batch", "64",         "--threads",
                 "2",        "--tokens",   "20B",       "--price",        "dgx-h100=3", "--price",
                 "2",        "--deadline", "60d",       "--json",         "--quiet"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string path = dir + "/plan.json";
  write_file(path, r.out);
  return path;
}

// The data the page embeds for its script (the block report/report_template.html reads).
nlohmann::json page_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"lagom-data\">";
  const std::size_t begin = html.find(open);
  REQUIRE(begin != std::string::npos);
  const std::size_t end = html.find("</script>", begin);
  REQUIRE(end != std::string::npos);
  return nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
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
            "--json, plan --json)\n");
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

TEST_CASE(
    "report draws lagom plan's document: each cluster's points and front, the document's front and the "
    "chosen plan's goodput",
    "[cli][report]") {
  const std::string dir = temp_dir("report");
  const std::string path = plan_file(dir);
  const auto plan = nlohmann::json::parse(read_file(path));
  const auto r =
      run_lagom({"report", path, "--out", dir + "/r.html", "--chart-js", fake_library(dir), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto listing = nlohmann::json::parse(r.out);
  REQUIRE(listing["sections"].size() == 1);
  CHECK(listing["sections"][0]["kind"] == "plan");
  const auto data = page_data(read_file(dir + "/r.html"));
  REQUIRE(data["sections"].size() == 1);
  const auto& s = data["sections"][0];
  CHECK(s["kind"] == "plan");
  CHECK(s["heading"] == "Plan: llama3-8b on 20B tokens, global batch 64");
  CHECK(s["cost_unit"] == "usd");
  const auto& rows = plan["rows"];
  REQUIRE(rows.size() == 4);
  // Every row runs (test_plan_cli.cpp): two clusters of two points each, in the document's order, with
  // the document's own figures.
  REQUIRE(s["clusters"].size() == 2);
  CHECK(s["clusters"][0]["name"] == "dgx-h100");
  CHECK(s["clusters"][1]["name"] == "dgx-a100");
  for (const auto& cluster : s["clusters"]) {
    REQUIRE(cluster["points"].size() == 2);
    CHECK_FALSE(cluster["front"].empty());
    for (const auto& point : cluster["points"]) {
      const auto& row = rows[point["row"].get<std::size_t>()];
      CHECK(row["cluster"] == cluster["name"]);
      CHECK(point["gpus"] == row["gpus"]);
      CHECK(point["cost"] == row["cost_usd"]);
      CHECK(point["days"].get<double>() == Approx(row["wall_s"].get<double>() / 86400).epsilon(1e-12));
    }
  }
  REQUIRE(s["pareto"].size() == plan["selection"]["pareto"].size());
  for (std::size_t k = 0; k < s["pareto"].size(); ++k) {
    CHECK(s["pareto"][k]["row"] == plan["selection"]["pareto"][k]);
  }
  const std::size_t chosen = plan["selection"]["chosen"].get<std::size_t>();
  REQUIRE_FALSE(s["goodput"].empty());
  const auto& g = s["goodput"][0];
  CHECK(g["row"] == chosen);
  CHECK(g["label"] == "chosen: " + std::to_string(rows[chosen]["gpus"].get<int>()) + " GPUs of " +
                          rows[chosen]["cluster"].get<std::string>());
  for (const char* part : {"useful", "checkpoint", "restart", "lost"}) {
    CHECK(g[part] == rows[chosen]["goodput"][part]);
  }
  CHECK(g["checkpoint_write_s"] == rows[chosen]["failures"]["checkpoint_write_s"]);
  CHECK(g["restart_s"] == rows[chosen]["failures"]["restart_s"]);
  CHECK(g["wall_s"] == rows[chosen]["wall_s"]);
  CHECK(s["rows"].size() == rows.size());
}

TEST_CASE("report refuses a plan document cut short or wrong in one field, naming it, with exit 2",
          "[cli][report]") {
  const std::string dir = temp_dir("report");
  const std::string library = fake_library(dir);
  const std::string text = read_file(plan_file(dir));
  auto doc = nlohmann::json::parse(text);
  doc["rows"][1]["goodput"].erase("lost");
  write_file(dir + "/cut.json", doc.dump());
  const auto cut = run_lagom({"report", dir + "/cut.json", "--out", dir + "/r.html", "--chart-js", library});
  CHECK(cut.exit_code == 2);
  CHECK(cut.err == "lagom: error: report: " + dir + "/cut.json: rows[1].goodput.lost: required\n");
  doc = nlohmann::json::parse(text);
  doc["selection"]["chosen"] = 9;
  write_file(dir + "/index.json", doc.dump());
  const auto index =
      run_lagom({"report", dir + "/index.json", "--out", dir + "/r.html", "--chart-js", library});
  CHECK(index.exit_code == 2);
  CHECK(index.err == "lagom: error: report: " + dir +
                         "/index.json: selection.chosen: 9 is not a feasible row (rows: 4)\n");
  write_file(dir + "/truncated.json", text.substr(0, text.size() / 2));
  const auto truncated =
      run_lagom({"report", dir + "/truncated.json", "--out", dir + "/r.html", "--chart-js", library});
  CHECK(truncated.exit_code == 2);
  CHECK(truncated.err.find("lagom: error: report: " + dir + "/truncated.json: not valid JSON") == 0);
  CHECK_FALSE(std::ifstream(dir + "/r.html").good());
}

TEST_CASE(
    "report refuses a document with a negative time or byte count, naming the field path, no page written",
    "[cli][report]") {
  const std::string dir = temp_dir("report-impossible");
  const std::string library = fake_library(dir);
  const auto sim = nlohmann::json::parse(read_file(simulate_file(dir)));
  REQUIRE_FALSE(sim["op_classes"].empty());
  struct Case {
    nlohmann::json::json_pointer pointer;
    nlohmann::json value;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{
           {nlohmann::json::json_pointer("/iteration_time_s"), -0.5, "iteration_time_s: -0.5 is negative"},
           {nlohmann::json::json_pointer("/op_classes/0/time_us"), -3,
            "op_classes[0].time_us: -3 is negative"},
           {nlohmann::json::json_pointer("/op_classes/0/bytes"), -1024, "op_classes[0].bytes: "},
           {nlohmann::json::json_pointer("/stage_breakdown_s/0/pipeline_bubble"), -1,
            "stage_breakdown_s[0].pipeline_bubble: -1 is negative"},
           {nlohmann::json::json_pointer("/memory_gib_per_gpu/total"), -2, "memory_gib_per_gpu.total: -2"}}) {
    auto doc = sim;
    doc[c.pointer] = c.value;
    write_file(dir + "/bad.json", doc.dump());
    const auto r = run_lagom({"report", dir + "/bad.json", "--out", dir + "/r.html", "--chart-js", library});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("lagom: error: report: " + dir + "/bad.json: " + c.field) == 0);
    CHECK_FALSE(std::ifstream(dir + "/r.html").good());
  }
}
