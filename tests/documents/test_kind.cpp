// documents/kind.h: every document carries its kind and version, and one detector tells the kind of a
// document, from `kind` and `version`, or (a file written before they existed, version 0) from its fields.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "documents/kind.h"
#include "documents/plan.h"

using namespace lagom::documents;
using json = nlohmann::json;

TEST_CASE("every kind round-trips through its name, and a stamped document is detected as its kind",
          "[documents]") {
  for (const Kind kind : all_kinds()) {
    INFO(to_string(kind));
    CHECK(parse_kind(to_string(kind)) == kind);
    const json doc = stamp(kind, json{{"field", 1}});
    CHECK(doc.at("kind") == std::string(to_string(kind)));
    CHECK(doc.at("version") == version_of(kind));
    const auto detected = detect(doc);
    REQUIRE(detected.ok());
    CHECK(detected->kind == kind);
    CHECK(detected->version == version_of(kind));
  }
  CHECK_FALSE(parse_kind("simulation").has_value());
}

TEST_CASE("a document without a version is told by the fields its writer wrote before kinds existed",
          "[documents]") {
  const json simulate = {{"iteration_time_s", 1.5}, {"breakdown_s", {{"compute", 1.0}}}};
  CHECK(detect(simulate)->kind == Kind::simulate);
  CHECK(detect(simulate)->version == 0);
  CHECK(detect(json{{"results", json::array()}, {"evaluated", 3}, {"simulated", 2}})->kind == Kind::explore);
  const json tune = {{"search", "lagom"}, {"predicted_iteration_time_s", 1.0}, {"ops", json::array()}};
  CHECK(detect(tune)->kind == Kind::tune);
  json config = tune;
  config["process"] = json::object();
  CHECK(detect(config)->kind == Kind::lagom_config);
  CHECK(detect(json{{"run_id", 3}, {"comm", json::array()}, {"compute", json::array()}})->kind ==
        Kind::profile);
  // A sample at any depth: an export nested by another tool.
  CHECK(detect(json{{"x", {{{"busbw_GBps", 1.0}, {"collective", "allreduce"}, {"bytes", 8}}}}})->kind ==
        Kind::profile);
  CHECK(detect(json{{"kind", "validate"}, {"runs", json::array()}, {"groups", json::object()}})->kind ==
        Kind::validate);
  // check's `kind` named the kind it compared: its own fields win.
  CHECK(detect(json{{"kind", "simulate"}, {"passed", true}, {"regressions", 0}, {"metrics", json::array()}})
            ->kind == Kind::check);
  CHECK(detect(json{{"kind", "predicted"}, {"passed", true}, {"op_classes", json::array()}})->kind ==
        Kind::check_predicted);
}

TEST_CASE("the detector refuses what no Lagom wrote, a kind it does not know and a newer version",
          "[documents]") {
  CHECK(detect(json::array()).error().message == "not a Lagom document (expected a JSON object)");
  CHECK(detect(json{{"hello", 1}}).error().message ==
        "not a Lagom document (no kind and version, and not a document written before them)");
  CHECK(detect(json{{"kind", "plan9"}, {"version", 1}}).error().message ==
        "document: kind: 'plan9' is not a kind of Lagom document");
  CHECK(detect(json{{"kind", "simulate"}, {"version", 2}}).error().message ==
        "document: version: simulate 2 is newer than this lagom reads (1): upgrade lagom");
  CHECK(detect(json{{"kind", "simulate"}, {"version", 4294967297ULL}}).error().message ==
        "document: version: 4294967297 is out of range (at most 2147483647)");
}

TEST_CASE("a reader names the kinds it reads", "[documents]") {
  const Detected d{Kind::explore, 1};
  CHECK(require_kind(d, {Kind::explore}, "lagom report").ok());
  CHECK(require_kind(d, {Kind::simulate, Kind::tune}, "lagom check").error().message ==
        "a explore document; lagom check reads simulate, tune");
}

TEST_CASE("a plan document is stamped kind plan with its rows, the infeasible ones saying why",
          "[documents]") {
  lagom::plan::PlanResult plan;
  plan.workload_name = "llama3-8b";
  lagom::plan::PlanRow row;
  row.cluster_name = "dgx-h100";
  row.gpus = 24;
  row.infeasible = "no strategy fits";
  plan.rows = {row, row};
  const json doc = plan_json(plan);
  CHECK(detect(doc)->kind == Kind::plan);
  CHECK(doc.at("version") == version_of(Kind::plan));
  REQUIRE(doc.at("rows").size() == 2);
  CHECK(doc.at("rows")[0].at("why") == "no strategy fits");
  CHECK(doc.at("selection").at("chosen").is_null());
}

TEST_CASE("a plan row's document carries its goodput and the power figures it used", "[documents]") {
  lagom::plan::PlanRow row;
  row.cluster_name = "dgx-h100";
  row.gpus = 16;
  row.iteration_s = 1.5;
  row.goodput.useful = 0.93;
  row.power.gpu_full_w = 700.0;
  const json j = plan_row_json(row);
  CHECK(j.at("feasible") == true);
  CHECK(j.at("goodput").at("useful") == 0.93);
  CHECK(j.at("power").at("gpu_full_w") == 700.0);
}
