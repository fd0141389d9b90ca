// report/report.h: the kinds of documents `lagom report` reads, the sections it builds from them and the
// page.
#include <cmath>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "documents/plan.h"
#include "report/report.h"

using lagom::report::build_section;
using lagom::report::detect_kind;
using lagom::report::Kind;
using nlohmann::json;

namespace {

json strategy() {
  return {{"gpus", 16},
          {"tp", 2},
          {"pp", 2},
          {"dp", 4},
          {"cp", 1},
          {"ep", 1},
          {"sp", false},
          {"vpp", 1},
          {"zero", 1},
          {"micro_batch", 1},
          {"recompute", "none"},
          {"tp_overlap", "none"},
          {"global_batch", 64}};
}

json cluster() {
  return {{"name", "dgx-a100"}, {"nodes", 2}, {"gpus_per_node", 8}, {"gpu", "A100-SXM4-80GB"}};
}

json simulate_doc() {
  const json stage = {
      {"compute", 1.0}, {"exposed_comm", 0.25}, {"pipeline_bubble", 0.125}, {"optimizer", 0.0625}};
  return {{"model", "gpt2"},
          {"iteration_time_s", 1.4375},
          {"tokens_per_s", 1000.0},
          {"model_tflops_per_gpu", 100.0},
          {"mfu", 0.5},
          {"breakdown_s", stage},
          {"stage_breakdown_s", json::array({stage, stage})},
          {"memory_gib_per_gpu",
           {{"weights", 1.0}, {"grads", 1.0}, {"optimizer", 2.0}, {"activations", 4.0}, {"total", 8.0}}},
          {"fits_in_memory", true},
          {"strategy", strategy()},
          {"cluster", cluster()},
          {"op_classes", json::array({{{"name", "dp.allreduce.1024"},
                                       {"collective", "allreduce"},
                                       {"group", "dp"},
                                       {"bytes", 1024},
                                       {"ranks", 4},
                                       {"nodes", 2},
                                       {"count", 2.0},
                                       {"time_us", 10.0}},
                                      {{"name", "tp.allreduce.64"},
                                       {"collective", "allreduce"},
                                       {"group", "tp"},
                                       {"bytes", 64},
                                       {"ranks", 2},
                                       {"nodes", 1},
                                       {"count", 100.0},
                                       {"time_us", 5.0}}})}};
}

json explore_doc(const std::vector<std::pair<double, double>>& points) {
  json results = json::array();
  for (const auto& [time, memory] : points) {
    results.push_back({{"strategy", strategy()},
                       {"iteration_time_s", time},
                       {"tokens_per_s", 1.0 / time},
                       {"mfu", 0.4},
                       {"memory_gib_per_gpu_total", memory}});
  }
  return {{"model", "gpt2"},    {"cluster", cluster()},
          {"gpus", 16},         {"global_batch", 64},
          {"evaluated", 100},   {"pruned", 10},
          {"out_of_memory", 5}, {"simulated", 85},
          {"elapsed_s", 0.5},   {"results", std::move(results)}};
}

json tune_doc() {
  return {
      {"search", "lagom"},
      {"runtime", "nccl"},
      {"predicted_iteration_time_s", 1.0},
      {"baseline_iteration_time_s", 1.25},
      {"speedup", 1.25},
      {"evaluations", 12},
      {"ops", json::array(
                  {{{"name", "dp.allreduce.1024"},
                    {"count", 2.0},
                    {"algo", "ring"},
                    {"proto", "simple"},
                    {"channels", 8},
                    {"scope", "per call (tuner plugin)"},
                    {"predicted_time_us", 8.0},
                    {"default", {{"algo", "tree"}, {"proto", "ll"}, {"channels", 4}, {"time_us", 10.0}}}}})}};
}

json profile_doc() {
  return {{"run", {{"id", 3}, {"backend", "cpu"}, {"host", "box"}, {"status", "complete"}}},
          {"fits",
           {{"collectives", json::array({{{"collective", "allreduce"},
                                          {"algo", "ring"},
                                          {"proto", "simple"},
                                          {"channels", 0},
                                          {"ranks", 8},
                                          {"nodes", 1},
                                          {"latency_us", 10.0},
                                          {"bus_bw_GBps", 100.0},
                                          {"rel_error", 0.02},
                                          {"samples", 2},
                                          {"min_bytes", 1e6},
                                          {"max_bytes", 1e8}}})},
            {"gemms", json::array({{{"precision", "fp32"},
                                    {"peak_tflops", 0.1},
                                    {"half_flops", 1e9},
                                    {"rel_error", 0.05},
                                    {"samples", 2}}})}}},
          {"comm", json::array({{{"collective", "allreduce"},
                                 {"algo", "ring"},
                                 {"proto", "simple"},
                                 {"channels", 0},
                                 {"ranks", 8},
                                 {"nodes", 1},
                                 {"bytes", 1000000},
                                 {"busbw_GBps", 60.0},
                                 {"wrong", 0},
                                 {"in_place", false}},
                                {{"collective", "allreduce"},
                                 {"algo", "ring"},
                                 {"proto", "simple"},
                                 {"channels", 0},
                                 {"ranks", 8},
                                 {"nodes", 1},
                                 {"bytes", 2000000},
                                 {"busbw_GBps", 5.0},
                                 {"wrong", 3},  // a failed data check: not drawn
                                 {"in_place", false}}})},
          {"compute",
           json::array({{{"kind", "gemm"},
                         {"precision", "fp32"},
                         {"m", 512},
                         {"n", 512},
                         {"k", 512},
                         {"tflops", 0.05},
                         {"time_us", 1.0}},
                        {{"kind", "memory"}, {"bytes", 1 << 20}, {"bw_GBps", 12.5}, {"time_us", 1.0}}})}};
}

json validate_doc() {
  return {{"kind", "validate"},
          {"runs", json::array({{{"line", 3},
                                 {"model", "gpt2"},
                                 {"gpus", 8},
                                 {"parallel", "tp2"},
                                 {"measured_iteration_s", 1.0},
                                 {"predicted_iteration_s", 1.04}},
                                {{"line", 4},
                                 {"model", "gpt2"},
                                 {"gpus", 8},
                                 {"parallel", "tp2"},
                                 {"measured_iteration_s", 1.0},
                                 {"failure", "does not divide"}}})},
          {"overall",
           {{"runs", 2},
            {"failed", 1},
            {"median_abs_error_pct", 4},
            {"mape_pct", 4},
            {"mean_signed_error_pct", 4},
            {"worst_error_pct", 4}}},
          {"groups",
           {{"model",
             {{"gpt2",
               {{"runs", 2},
                {"failed", 1},
                {"median_abs_error_pct", 4},
                {"mape_pct", 4},
                {"mean_signed_error_pct", 4},
                {"worst_error_pct", 4}}}}}}},
          {"failed", 1},
          {"passed", false}};
}

json check_doc(int metrics, int regressed_index) {
  json list = json::array();
  for (int i = 0; i < metrics; ++i) {
    list.push_back({{"metric", "m" + std::to_string(i)},
                    {"better", "lower"},
                    {"baseline", 1.0},
                    {"current", 1.0 + 0.0001 * i},
                    {"delta_pct", 0.01 * i},
                    {"tolerance_pct", 5.0},
                    {"status", i == regressed_index ? "regressed" : "ok"}});
  }
  return {{"kind", "simulate"}, {"passed", false}, {"regressions", 1}, {"metrics", list}};
}

// One row of a plan: `days` to train at `cost` dollars (half as many GPU-hours), `useful` the goodput and
// the rest of the wall time 2% checkpoint writes, 3% restarts and the remainder lost work.
lagom::plan::PlanRow plan_row(const std::string& cluster, int gpus, double days, double cost, double useful) {
  lagom::plan::PlanRow row;
  row.cluster_name = cluster;
  row.gpu_name = cluster == "a" ? "H100" : "A100";
  row.gpus = gpus;
  row.nodes = (gpus + 7) / 8;
  row.strategy.gpus = row.strategy.dp = gpus;  // resolved, as the planner leaves it
  row.iteration_s = 1.0;
  row.step.mean_s = 1.01;
  row.iterations = 1000;
  row.mtbf_s = 36000;
  row.checkpoint_write_s = 5;
  row.restart_s = 605;
  row.goodput = {600.0, useful, 0.02, 0.03, 1 - useful - 0.05};
  row.wall_s = days * 86400;
  row.gpu_hours = cost / 2;
  row.price_per_gpu_hour = 2.0;
  row.cost_usd = cost;
  return row;
}

// Two clusters with a deadline of 5 days (rows: a at 8, 16, 32 GPUs, b at 8, 16 and 32; b's 32 runs no
// strategy). a's front is rows 1 and 0 (its 32 GPUs are slower and dearer than its 16), b's rows 4 and 3;
// over both clusters the front is rows 4, 1, 3 (row 0 costs more than the faster row 3). Within the
// deadline row 1 is the cheapest: chosen; row 3 is the cheapest overall, row 4 the fastest. Without
// prices cost is GPU-hours (half the dollars here, so the same rows win).
json plan_doc(bool priced) {
  lagom::plan::PlanResult plan;
  plan.workload_name = "llama3-8b";
  plan.options.tokens = 20e9;
  plan.options.deadline_s = 5 * 86400.0;
  plan.options.explore.base.global_batch = 64;
  plan.strategies_evaluated = 500;
  plan.rows = {plan_row("a", 8, 8, 1000, 0.9),    plan_row("a", 16, 4, 1100, 0.85),
               plan_row("a", 32, 4.5, 1800, 0.8), plan_row("b", 8, 6, 900, 0.92),
               plan_row("b", 16, 2, 1300, 0.88),  plan_row("b", 32, 0, 0, 1)};
  plan.rows[5].infeasible = "no strategy fits in memory";
  for (auto& row : plan.rows) {
    if (!priced) row.price_per_gpu_hour = row.cost_usd = std::nullopt;
  }
  plan.selection = lagom::plan::select_plans(plan.rows, plan.options.deadline_s, std::nullopt);
  return lagom::documents::plan_json(plan);
}

}  // namespace

TEST_CASE("report tells each document kind by the fields only its writer writes", "[cli][report]") {
  CHECK(*detect_kind(simulate_doc()) == Kind::simulate);
  CHECK(*detect_kind(explore_doc({{1, 1}})) == Kind::explore);
  CHECK(*detect_kind(tune_doc()) == Kind::tune);
  CHECK(*detect_kind(profile_doc()) == Kind::profile);
  CHECK(*detect_kind(validate_doc()) == Kind::validate);
  // check's own "kind" names the documents it compared, not itself
  CHECK(*detect_kind(check_doc(3, 1)) == Kind::check);
  CHECK(*detect_kind(plan_doc(true)) == Kind::plan);
  const auto unknown = detect_kind(json{{"kind", "simulate"}, {"iteration_time_s", 1.0}});
  REQUIRE_FALSE(unknown.ok());
  CHECK(
      unknown.error().message ==
      "not a document lagom report reads (simulate --json, explore --json, tune --json or lagom-config.json, "
      "profile --json or db export --format json, validate --json, check --json, plan --json)");
  CHECK(detect_kind(json::array()).error().message == "not a Lagom document (expected a JSON object)");
}

TEST_CASE("a document with a missing or mistyped field is an error naming the source and the field",
          "[cli][report]") {
  json doc = simulate_doc();
  doc["stage_breakdown_s"][1].erase("optimizer");
  auto missing = build_section(doc, Kind::simulate, "sim.json");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "sim.json: stage_breakdown_s[1].optimizer: required");
  doc = simulate_doc();
  doc["iteration_time_s"] = "fast";
  CHECK(build_section(doc, Kind::simulate, "sim.json").error().message ==
        "sim.json: iteration_time_s: must be a finite number");
  json explore = explore_doc({{1, 2}, {2, 1}});
  explore["results"][1]["strategy"].erase("pp");
  CHECK(build_section(explore, Kind::explore, "e.json").error().message ==
        "e.json: results[1].strategy.pp: required");
  json tune = tune_doc();
  tune["ops"][0]["default"]["time_us"] = nullptr;
  CHECK(build_section(tune, Kind::tune, "t.json").error().message ==
        "t.json: ops[0].default.time_us: required");
}

TEST_CASE("a simulate section holds one timeline row per pipeline stage and the op classes by total time",
          "[cli][report]") {
  lagom::report::SectionOptions options;
  options.gpu_memory_gib = 80;
  const json s = *build_section(simulate_doc(), Kind::simulate, "sim.json", options);
  CHECK(s["kind"] == "simulate");
  REQUIRE(s["stages"].size() == 2);
  CHECK(s["stages"][1]["pipeline_bubble"] == 0.125);
  CHECK(s["capacity_gib"] == 80.0);
  CHECK(s["budget_gib"] == nullptr);  // a document from before the reserve
  // 100 calls × 5 µs = 0.5 ms before 2 × 10 µs = 0.02 ms
  REQUIRE(s["op_classes"].size() == 2);
  CHECK(s["op_classes"][0]["name"] == "tp.allreduce.64");
  CHECK(s["op_classes"][0]["total_ms"].get<double>() == Approx(0.5));
  CHECK(s["op_classes"][0]["stage_ms"].get<double>() == Approx(0.25));  // the mean over the 2 stages
}

TEST_CASE("a simulate section shows memory against the budget fits_in_memory was judged on",
          "[cli][report]") {
  lagom::report::SectionOptions options;
  options.gpu_memory_gib = 80;
  json doc = simulate_doc();
  doc["memory_budget_gib"] = 73.77;
  const json s = *build_section(doc, Kind::simulate, "sim.json", options);
  CHECK(s["budget_gib"] == 73.77);
  CHECK(s["capacity_gib"] == 80.0);
  bool shown = false;
  for (const auto& stat : s["stats"]) {
    if (stat["label"] == "memory per GPU")
      shown = stat["value"].get<std::string>().ends_with("of 73.8 GiB budget");
  }
  CHECK(shown);
  doc["memory_budget_gib"] = -1.0;  // the documents' bounds (documents/bounds.h) refuse it first
  CHECK(build_section(doc, Kind::simulate, "sim.json", options).error().message ==
        "sim.json: memory_budget_gib: -1 is negative: a time, size, count, memory or rate never is");
  doc["memory_budget_gib"] = 0.0;  // not negative, but no budget to draw against
  CHECK(build_section(doc, Kind::simulate, "sim.json", options).error().message ==
        "sim.json: memory_budget_gib: must be a positive number");
  doc["memory_budget_gib"] = "74";  // present but not a number: an error, not a missing budget
  CHECK(build_section(doc, Kind::simulate, "sim.json", options).error().message ==
        "sim.json: memory_budget_gib: must be a finite number");
}

TEST_CASE("a simulate section shows the iteration's 90% interval and where it comes from", "[cli][report]") {
  lagom::report::SectionOptions options;
  json doc = simulate_doc();
  auto stat_value = [](const json& section, const std::string& label) {
    for (const auto& stat : section["stats"]) {
      if (stat["label"] == label) return stat["value"].get<std::string>();
    }
    return std::string("(absent)");
  };
  // A document from before the intervals: no interval stat, the source line as it was.
  json s = *build_section(doc, Kind::simulate, "sim.json", options);
  CHECK(stat_value(s, "iteration, 90% interval") == "(absent)");
  doc["interval"] = {
      {"level", 0.9}, {"iteration_time_s", {0.9, 1.2}}, {"source", "33 runs (a.csv) of sm90 x"}};
  s = *build_section(doc, Kind::simulate, "sim.json", options);
  CHECK(stat_value(s, "iteration, 90% interval") == "900.000 ms – 1.200 s");
  CHECK(s["source"].get<std::string>().ends_with("· 90% interval: 33 runs (a.csv) of sm90 x"));
  doc["interval"]["iteration_time_s"] = nullptr;  // outside every validated regime
  s = *build_section(doc, Kind::simulate, "sim.json", options);
  CHECK(stat_value(s, "iteration, 90% interval") == "none");
  doc["interval"]["iteration_time_s"] = {1.2, 0.9};
  CHECK(build_section(doc, Kind::simulate, "sim.json", options).error().message ==
        "sim.json: interval.iteration_time_s: must be [low, high] with 0 <= low <= high, or null");
}

TEST_CASE("explore's Pareto front keeps the strategies no other beats on both time and memory",
          "[cli][report]") {
  // (3 s, 45 GiB) is beaten by (2 s, 40 GiB); (5 s, 10 GiB) ties on memory with a faster one.
  const json doc = explore_doc({{1, 50}, {2, 40}, {3, 45}, {4, 10}, {5, 10}});
  lagom::report::SectionOptions options;
  options.table_rows = 2;
  const json s = *build_section(doc, Kind::explore, "e.json", options);
  CHECK(s["pareto"] == json::array({0, 1, 3}));
  CHECK(s["points"].size() == 5);
  CHECK(s["labels"][0] == "tp 2 · pp 2 · dp 4 · zero 1 · mb 1");
  REQUIRE(s["rows"].size() == 2);
  CHECK(s["rows"][1]["rank"] == 2);
}

TEST_CASE("a tune section pairs each op class's default and tuned knobs and times", "[cli][report]") {
  const json s = *build_section(tune_doc(), Kind::tune, "t.json");
  REQUIRE(s["ops"].size() == 1);
  CHECK(s["ops"][0]["default_algo"] == "tree/ll");
  CHECK(s["ops"][0]["default_time_us"] == 10.0);
  CHECK(s["ops"][0]["time_us"] == 8.0);
  CHECK(s["baseline_s"] == 1.25);
  // a document written before tune recorded defaults: the defaults are empty, not invented
  json old = tune_doc();
  old["ops"][0].erase("default");
  CHECK(build_section(old, Kind::tune, "t.json")->at("ops")[0]["default_time_us"].is_null());
}

TEST_CASE("a profile section's curves are the fits' predictions at each size", "[cli][report]") {
  const json s = *build_section(profile_doc(), Kind::profile, "lagom.db run 3");
  REQUIRE(s["collectives"].size() == 1);
  const json& series = s["collectives"][0]["series"];
  REQUIRE(series.size() == 1);
  CHECK(series[0]["points"].size() == 1);  // the sample with #wrong > 0 is left out
  // docs/profiler.md#fits: all-reduce on 8 ranks has busbw factor 2·7/8 = 1.75; at 1e6 bytes
  // time = 10 + 1e6 / (100 / 1.75 · 1e3) = 27.5 µs, busbw = 1.75 · 1e6 / 27.5e3 GB/s
  const json& fit = series[0]["fit"];
  REQUIRE(fit.size() == 48);
  CHECK(fit[0][0].get<double>() == Approx(1e6));
  CHECK(fit[0][1].get<double>() == Approx(1.75e6 / 27.5e3));
  CHECK(fit[47][0].get<double>() == Approx(1e8));
  // GEMM: tflops = peak · flops / (flops + half_flops) at 2·512³ FLOP
  REQUIRE(s["gemms"].size() == 1);
  const double flops = 2.0 * 512 * 512 * 512;
  CHECK(s["gemms"][0]["fit"][0][1].get<double>() == Approx(0.1 * flops / (flops + 1e9)));
  REQUIRE(s["collective_fits"].size() == 1);
  CHECK(s["collective_fits"][0]["name"] == "allreduce 8 ranks ring simple");
  CHECK(s["gemm_fits"].size() == 1);
}

TEST_CASE("a profile --json document is read like an export: run_id, backend and status at the top",
          "[cli][report]") {
  json doc = profile_doc();
  doc.erase("run");
  doc["run_id"] = 7;
  doc["backend"] = "mpi";
  doc["status"] = "complete";
  REQUIRE(*detect_kind(doc) == Kind::profile);
  const json s = *build_section(doc, Kind::profile, "profile.json");
  CHECK(s["heading"] == "Profile: run 7 (mpi)");
  CHECK(s["collectives"].size() == 1);
}

TEST_CASE("a validate section draws the runs with both times and counts the ±5% share", "[cli][report]") {
  const json s = *build_section(validate_doc(), Kind::validate, "v.json");
  CHECK(s["runs"] == json::array({json::array({1.0, 1.04})}));
  REQUIRE(s["groups"].size() == 1);
  CHECK(s["groups"][0]["by"] == "model");
  bool found = false;
  for (const auto& st : s["stats"]) found = found || (st["label"] == "within ±5%" && st["value"] == "100%");
  CHECK(found);
}

TEST_CASE("a check section charts the metrics nearest their tolerance, regressions always", "[cli][report]") {
  const json s = *build_section(check_doc(70, 3), Kind::check, "c.json");
  CHECK(s["metrics"].size() == 70);
  REQUIRE(s["chart"].size() == 60);
  CHECK(s["chart"][0]["metric"] == "m3");   // the regression, though its delta is small
  CHECK(s["chart"][1]["metric"] == "m11");  // then the 59 largest deltas, in the table's order
}

TEST_CASE("the page inlines the library and the data so that neither can end a script block",
          "[cli][report]") {
  lagom::report::Page page;
  page.title = "a <b>bold</b> & \"quoted\" title";
  page.sections.push_back(json{{"kind", "check"}, {"note", "</script><script>alert(1)</script>"}});
  const std::string html = lagom::report::render_html(page, "/* Chart.js v9 */ var s = '</SCRIPT>';");
  CHECK(html.find("<title>a &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; title</title>") !=
        std::string::npos);
  CHECK(html.find("var s = '<\\/SCRIPT>';") != std::string::npos);
  CHECK(html.find("alert(1)") != std::string::npos);
  CHECK(html.find("</script><script>alert(1)") == std::string::npos);
  CHECK(html.find("\\u003c/script>\\u003cscript>alert(1)") != std::string::npos);
  CHECK(html.find("@LAGOM_") == std::string::npos);
  CHECK(html.find("Permission is hereby granted") != std::string::npos);  // the library's licence
}

TEST_CASE(
    "a plan section draws each cluster's time-cost front, cost per GPU count and the chosen plans' "
    "goodput",
    "[cli][report]") {
  const json s = *build_section(plan_doc(true), Kind::plan, "plan.json");
  CHECK(s["kind"] == "plan");
  CHECK(s["heading"] == "Plan: llama3-8b on 20B tokens, global batch 64");
  CHECK(s["cost_unit"] == "usd");
  CHECK(s["why"] == "");
  REQUIRE(s["clusters"].size() == 2);
  const json& a = s["clusters"][0];
  CHECK(a["name"] == "a");
  CHECK(a["gpu"] == "H100");
  REQUIRE(a["points"].size() == 3);
  CHECK(a["points"][1] == json{{"row", 1}, {"gpus", 16}, {"days", 4.0}, {"cost", 1100.0}});
  CHECK(a["front"] == json::array({1, 0}));
  const json& b = s["clusters"][1];
  REQUIRE(b["points"].size() == 2);  // its 32 GPUs run no strategy
  CHECK(b["points"][0]["cost"] == 900.0);
  CHECK(b["front"] == json::array({4, 3}));
  // The document's own front, over both clusters.
  REQUIRE(s["pareto"].size() == 3);
  CHECK(s["pareto"][0] == json{{"row", 4}, {"cluster", "b"}, {"gpus", 16}, {"days", 2.0}, {"cost", 1300.0}});
  CHECK(s["pareto"][1]["row"] == 1);
  CHECK(s["pareto"][2]["row"] == 3);
  // The plans the selection names, chosen first, each once (row 1 is also the cheapest within the deadline).
  REQUIRE(s["goodput"].size() == 3);
  const json& chosen = s["goodput"][0];
  CHECK(chosen["label"] == "chosen: 16 GPUs of a");
  CHECK(chosen["row"] == 1);
  CHECK(chosen["wall_s"] == 4 * 86400.0);
  CHECK(chosen["useful"] == 0.85);
  CHECK(chosen["checkpoint"] == 0.02);
  CHECK(chosen["restart"] == 0.03);
  CHECK(chosen["lost"].get<double>() == Approx(0.10));
  CHECK(chosen["mtbf_s"] == 36000.0);
  CHECK(chosen["checkpoint_interval_s"] == 600.0);
  CHECK(chosen["checkpoint_write_s"] == 5.0);
  CHECK(chosen["restart_s"] == 605.0);
  CHECK(s["goodput"][1]["label"] == "cheapest: 8 GPUs of b");
  CHECK(s["goodput"][2]["label"] == "fastest: 16 GPUs of b");
  REQUIRE(s["rows"].size() == 6);
  CHECK(s["rows"][0]["marks"] == "");
  CHECK(s["rows"][1]["marks"] == "chosen, front");
  CHECK(s["rows"][3]["marks"] == "cheapest, front");
  CHECK(s["rows"][4]["marks"] == "fastest, front");
  CHECK(s["rows"][1]["strategy"] == "tp 1 · pp 1 · dp 16 · mb 1");
  CHECK(s["rows"][1]["gpu_hours"] == 550.0);
  CHECK(s["rows"][5]["why"] == "no strategy fits in memory");
  CHECK(s["rows"][5]["cost"] == nullptr);
  const auto stat_value = [&](const std::string& label) {
    for (const auto& st : s["stats"]) {
      if (st["label"] == label) return st["value"].get<std::string>();
    }
    return std::string("(none)");
  };
  CHECK(stat_value("rows") == "6 (5 run)");
  CHECK(stat_value("chosen") == "16 GPUs of a");
  CHECK(stat_value("time to train") == "4.0 days");
  CHECK(stat_value("cost") == "$1100");
  CHECK(stat_value("goodput") == "85.0%");
  CHECK(stat_value("deadline") == "5.0 days");
  CHECK(stat_value("on the time–cost front") == "3");

  // Without prices cost is in GPU-hours.
  const json hours = *build_section(plan_doc(false), Kind::plan, "plan.json");
  CHECK(hours["cost_unit"] == "gpu_hours");
  CHECK(hours["clusters"][0]["points"][1]["cost"] == 550.0);
  CHECK(hours["pareto"][0]["cost"] == 650.0);
}

TEST_CASE("a plan document with a missing or wrong field is an error naming the field", "[cli][report]") {
  json doc = plan_doc(true);
  doc["rows"][1].erase("goodput");
  CHECK(build_section(doc, Kind::plan, "plan.json").error().message ==
        "plan.json: rows[1].goodput: required");
  doc = plan_doc(true);
  doc["selection"]["chosen"] = 5;  // the row that runs no strategy
  CHECK(build_section(doc, Kind::plan, "plan.json").error().message ==
        "plan.json: selection.chosen: 5 is not a feasible row (rows: 6)");
}
