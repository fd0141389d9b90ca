// The readers of the documents `lagom report` draws (documents/simulate.h, explore.h, tune.h, profile.h,
// validate.h, check.h, plan.h): what a writer wrote reads back, the documents of version 0
// (tests/data/documents/v0/) read with the fields older writers left out as none, and a missing or mistyped
// field is an error naming the source and the field's path.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "documents/check.h"
#include "documents/explore.h"
#include "documents/lagom_config.h"
#include "documents/plan.h"
#include "documents/profile.h"
#include "documents/simulate.h"
#include "documents/tune.h"
#include "documents/validate.h"
#include "search/fixture.h"
#include "support/run.h"

using namespace lagom;
using json = nlohmann::json;

namespace {

const std::string k_v0 = std::string(LAGOM_TEST_DATA_DIR) + "/documents/v0";

json v0(const std::string& name) {
  return json::parse(test::read_file(k_v0 + "/" + name));
}

test::TuneFixture fsdp() {
  return test::TuneFixture("gpt2", "a40-pcie-ib100", 16, [](model::Strategy& s, const model::WorkloadSpec&) {
    s.zero = 3;
    s.micro_batch = 2;
    s.global_batch = 32;
  });
}

// The message of the error `read` returns for `document`.
template <typename Read>
std::string error_of(Read read, const json& document, const std::string& source) {
  const auto result = read(document, source);
  REQUIRE_FALSE(result.ok());
  return result.error().message;
}

json profile_doc() {
  return {
      {"run", {{"id", 3}, {"backend", "cpu"}, {"host", "box"}, {"status", "complete"}}},
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
                             {"algo", ""},
                             {"proto", ""},
                             {"channels", 0},
                             {"ranks", 8},
                             {"nodes", 1},
                             {"bytes", 1000000},
                             {"busbw_GBps", 60.0},
                             {"wrong", -1},
                             {"in_place", false}}})},
      {"compute",
       json::array(
           {{{"kind", "gemm"}, {"precision", "fp32"}, {"m", 512}, {"n", 256}, {"k", 128}, {"tflops", 0.05}},
            {{"kind", "memory"}, {"bytes", 1 << 20}, {"bw_GBps", 12.5}}})}};
}

json validate_doc() {
  const json stats = {{"runs", 2},     {"failed", 1},           {"median_abs_error_pct", 4},
                      {"mape_pct", 4}, {"worst_error_pct", -4}, {"mean_signed_error_pct", 4}};
  return {{"kind", "validate"},
          {"version", 1},
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
                                 {"failure", "does not divide"}}})},
          {"overall", stats},
          {"groups", {{"model", {{"gpt2", stats}}}, {"cluster", {{"a100", stats}, {"h100", stats}}}}},
          {"failed", 1},
          {"passed", false}};
}

json check_doc() {
  return {{"kind", "check"},
          {"version", 1},
          {"compared", "tune"},
          {"passed", false},
          {"regressions", 1},
          {"metrics", json::array({{{"metric", "speedup"},
                                    {"better", "higher"},
                                    {"baseline", 1.2},
                                    {"current", 1.0},
                                    {"delta_pct", -16.7},
                                    {"tolerance_pct", 5.0},
                                    {"status", "regressed"}},
                                   {{"metric", "predicted_time_us dp.allreduce.64"},
                                    {"better", "lower"},
                                    {"baseline", 8.0},
                                    {"current", nullptr},
                                    {"delta_pct", nullptr},
                                    {"tolerance_pct", 5.0},
                                    {"status", "missing"}}})}};
}

}  // namespace

TEST_CASE("a simulate document reads back what its writer wrote", "[documents]") {
  auto f = fsdp();
  const auto r = simulator::simulate(f.workload, f.cluster, f.strategy, *f.costs).value();
  // Through text, as a reader gets it.
  const json doc = json::parse(documents::simulation_json(r, f.strategy, f.cluster, f.workload).dump());
  const auto v = documents::read_simulate(doc, "sim.json");
  REQUIRE(v.ok());
  CHECK(v->model == "gpt2");
  CHECK(v->iteration_time_s == r.iteration_time_s);
  CHECK(v->mfu == r.mfu);
  CHECK(v->fits_in_memory == r.fits_in_memory);
  REQUIRE(v->stages.size() == r.stages.size());
  CHECK(v->stages[0].compute == r.stages[0].compute_s);
  CHECK(v->breakdown.exposed_comm == r.breakdown.exposed_comm_s);
  CHECK(v->memory.total == r.memory.total);
  CHECK(v->memory_budget_gib == r.memory_budget_gib);
  CHECK(v->cluster.name == "a40-pcie-ib100");
  CHECK(v->cluster.gpu == f.cluster.gpu.name);
  CHECK(v->cluster.nodes == 2);
  CHECK(v->gpus == 16);
  CHECK(v->strategy.zero == 3);
  CHECK(v->strategy.micro_batch == 2);
  CHECK(v->strategy.sp == "off");
  REQUIRE(v->op_classes.size() == r.op_classes.size());
  CHECK(v->op_classes[0].bytes == r.op_classes[0].key.bytes);
  CHECK(v->op_classes[0].count == r.op_classes[0].count);
  const auto names = documents::simulated_cluster_names(doc);
  CHECK(names.cluster == "a40-pcie-ib100");
  CHECK(names.gpu == f.cluster.gpu.name);
  CHECK(documents::simulated_cluster_names(json{{"cluster", "dgx"}}).gpu.empty());
}

TEST_CASE("a simulate document of version 0, and one from before the memory reserve, read", "[documents]") {
  json doc = v0("simulate.json");
  const auto v = documents::read_simulate(doc, "simulate.json");
  REQUIRE(v.ok());
  CHECK(v->memory_budget_gib.has_value());
  CHECK(v->strategy.sp == "off");
  CHECK(v->strategy.tp_overlap == "none");
  doc.erase("memory_budget_gib");
  CHECK_FALSE(documents::read_simulate(doc, "simulate.json")->memory_budget_gib.has_value());
  // sp as older writers wrote it: a number, or the word.
  doc["strategy"]["sp"] = 1;
  CHECK(documents::read_simulate(doc, "simulate.json")->strategy.sp == "on");
  doc["strategy"]["sp"] = "off";
  CHECK(documents::read_simulate(doc, "simulate.json")->strategy.sp == "off");
  doc["strategy"].erase("sp");
  CHECK_FALSE(documents::read_simulate(doc, "simulate.json")->strategy.sp.has_value());
}

TEST_CASE("a simulate document with a missing or mistyped field names the field's path", "[documents]") {
  const json good = v0("simulate.json");
  json doc = good;
  doc["stage_breakdown_s"][0].erase("optimizer");
  CHECK(error_of(documents::read_simulate, doc, "sim.json") ==
        "sim.json: stage_breakdown_s[0].optimizer: required");
  doc = good;
  doc["op_classes"][1]["ranks"] = "eight";
  CHECK(error_of(documents::read_simulate, doc, "sim.json") ==
        "sim.json: op_classes[1].ranks: must be a positive integer");
  doc = good;
  doc["strategy"]["tp"] = nullptr;
  CHECK(error_of(documents::read_simulate, doc, "sim.json") == "sim.json: strategy.tp: required");
  doc = good;
  doc["memory_budget_gib"] = 0;
  CHECK(error_of(documents::read_simulate, doc, "sim.json") ==
        "sim.json: memory_budget_gib: must be a positive number");
  doc = good;
  doc["stage_breakdown_s"] = json::array();
  CHECK(error_of(documents::read_simulate, doc, "sim.json") == "sim.json: stage_breakdown_s: no stage");
  CHECK(error_of(documents::read_simulate, json::array(), "sim.json") == "sim.json: not a JSON object");
}

TEST_CASE("an explore document reads back what its writer wrote, version 0 too", "[documents]") {
  auto f = fsdp();
  search::ExploreResult result;
  result.evaluated = 7;
  result.simulated = 3;
  result.results.push_back(
      {f.strategy, simulator::simulate(f.workload, f.cluster, f.strategy, *f.costs).value()});
  const json doc = json::parse(documents::explore_json(result, f.strategy, f.cluster, f.workload).dump());
  const auto v = documents::read_explore(doc, "e.json");
  REQUIRE(v.ok());
  CHECK(v->gpus == 16);
  CHECK(v->global_batch == 32);
  CHECK(v->evaluated == 7);
  CHECK(v->simulated == 3);
  CHECK(v->cluster.gpus_per_node == f.cluster.gpus_per_node);
  REQUIRE(v->results.size() == 1);
  CHECK(v->results[0].iteration_time_s == result.results[0].result.iteration_time_s);
  CHECK(v->results[0].memory_gib_per_gpu_total == result.results[0].result.memory.total);
  CHECK(v->results[0].strategy.dp == f.strategy.dp);

  const auto old = documents::read_explore(v0("explore.json"), "explore.json");
  REQUIRE(old.ok());
  CHECK(old->results.size() == 3);
  json bad = v0("explore.json");
  bad["results"][2]["strategy"].erase("micro_batch");
  CHECK(error_of(documents::read_explore, bad, "e.json") ==
        "e.json: results[2].strategy.micro_batch: required");
  bad = v0("explore.json");
  bad["results"][1]["mfu"] = "high";
  CHECK(error_of(documents::read_explore, bad, "e.json") ==
        "e.json: results[1].mfu: must be a finite number");
  bad = v0("explore.json");
  bad["cluster"] = "dgx-a100";
  CHECK(error_of(documents::read_explore, bad, "e.json") == "e.json: cluster: must be an object");
}

TEST_CASE("a tune document and a lagom-config.json read as the tune's result", "[documents]") {
  auto f = fsdp();
  const auto r = search::run_search(search::SearchKind::lagom, f.problem).value();
  const json doc = json::parse(documents::tune_json(f.problem, r, {}, "out", "", false).dump());
  const auto v = documents::read_tune(doc, "t.json");
  REQUIRE(v.ok());
  CHECK(v->search == "lagom");
  CHECK(v->predicted_iteration_time_s == r.predicted_iteration_s());
  CHECK(v->speedup == r.speedup());
  CHECK_FALSE(v->model.has_value());  // tune --json names no cluster
  REQUIRE(v->ops.size() == doc.at("ops").size());
  CHECK(v->ops[0].name == doc["ops"][0]["name"].get<std::string>());
  CHECK(v->ops[0].channels == doc["ops"][0]["channels"].get<int>());

  const auto config = documents::read_tune(v0("tune-out/lagom-config.json"), "lagom-config.json");
  REQUIRE(config.ok());
  CHECK(config->model == "gpt2");
  CHECK(config->cluster == "a40-pcie-ib100");
  const auto old = documents::read_tune(v0("tune.json"), "tune.json");
  REQUIRE(old.ok());
  REQUIRE_FALSE(old->ops.empty());
  CHECK(old->ops[0].nccl_default.has_value());
  CHECK_FALSE(old->model.has_value());
  // Written before `default` existed: none.
  json before = v0("tune.json");
  before["ops"][0].erase("default");
  CHECK_FALSE(documents::read_tune(before, "tune.json")->ops[0].nccl_default.has_value());
}

TEST_CASE("a tune document with a missing or mistyped field names the field's path", "[documents]") {
  json doc = v0("tune.json");
  doc["ops"][0]["default"].erase("time_us");
  CHECK(error_of(documents::read_tune, doc, "t.json") == "t.json: ops[0].default.time_us: required");
  doc = v0("tune.json");
  doc["ops"][1]["channels"] = 2.5;
  CHECK(error_of(documents::read_tune, doc, "t.json") ==
        "t.json: ops[1].channels: must be a non-negative integer");
  doc = v0("tune.json");
  doc["search"] = 3;
  CHECK(error_of(documents::read_tune, doc, "t.json") == "t.json: search: must be a string");
}

TEST_CASE("a profile document reads as an export and as profile --json", "[documents]") {
  const auto v = documents::read_profile(profile_doc(), "lagom.db run 3");
  REQUIRE(v.ok());
  CHECK(v->run.id == 3);
  CHECK(v->run.host == "box");
  REQUIRE(v->comm.size() == 1);
  CHECK(v->comm[0].wrong == -1);  // not checked (production records)
  CHECK(v->comm[0].bytes == 1000000);
  REQUIRE(v->gemms.size() == 1);
  CHECK(v->gemms[0].n == 256);
  REQUIRE(v->memory.size() == 1);
  CHECK(v->memory[0].bw_GBps == 12.5);
  CHECK(v->compute_samples() == 2);
  REQUIRE(v->collective_fits.size() == 1);
  CHECK(v->collective_fits[0].min_bytes == 1000000);
  REQUIRE(v->gemm_fits.size() == 1);
  CHECK(v->gemm_fits[0].samples == 2);

  json top = profile_doc();
  top.erase("run");
  top["run_id"] = 7;
  top["backend"] = "mpi";
  top["status"] = "complete";
  const auto flat = documents::read_profile(top, "profile.json");
  REQUIRE(flat.ok());
  CHECK(flat->run.id == 7);
  CHECK_FALSE(flat->run.host.has_value());

  const auto old = documents::read_profile(v0("profile.json"), "profile.json");
  REQUIRE(old.ok());
  CHECK_FALSE(old->comm.empty());
  CHECK_FALSE(old->collective_fits.empty());
}

TEST_CASE("a profile document with a missing or mistyped field names the field's path", "[documents]") {
  json doc = profile_doc();
  doc["compute"][0].erase("tflops");
  CHECK(error_of(documents::read_profile, doc, "p.json") == "p.json: compute[0].tflops: required");
  doc = profile_doc();
  doc["fits"]["collectives"][0]["bus_bw_GBps"] = "fast";
  CHECK(error_of(documents::read_profile, doc, "p.json") ==
        "p.json: fits.collectives[0].bus_bw_GBps: must be a finite number");
  doc = profile_doc();
  doc["comm"][0] = 3;
  CHECK(error_of(documents::read_profile, doc, "p.json") == "p.json: comm[0]: must be an object");
  doc = profile_doc();
  doc.erase("run");
  CHECK(error_of(documents::read_profile, doc, "p.json") == "p.json: run_id: required");
}

TEST_CASE("a validate document reads its runs, groups and statistics", "[documents]") {
  const auto v = documents::read_validate(validate_doc(), "v.json");
  REQUIRE(v.ok());
  REQUIRE(v->runs.size() == 2);
  CHECK(v->runs[0].predicted_iteration_s == 1.04);
  CHECK_FALSE(v->runs[1].predicted_iteration_s.has_value());  // a failed run
  CHECK_FALSE(v->runs[1].measured_iteration_s.has_value());
  REQUIRE(v->groups.size() == 3);
  CHECK(v->groups[0].by == "cluster");  // in the document's order: by name
  CHECK(v->groups[1].name == "h100");
  CHECK(v->groups[2].stats.worst_error_pct == -4);
  CHECK(v->overall.runs == 2);
  CHECK(v->failed == 1);
  CHECK_FALSE(v->passed);
  const auto old = documents::read_validate(v0("validate.json"), "validate.json");
  REQUIRE(old.ok());
  CHECK_FALSE(old->runs.empty());

  json doc = validate_doc();
  doc["runs"][1].erase("gpus");
  CHECK(error_of(documents::read_validate, doc, "v.json") == "v.json: runs[1].gpus: required");
  doc = validate_doc();
  doc["groups"]["model"]["gpt2"]["mape_pct"] = true;
  CHECK(error_of(documents::read_validate, doc, "v.json") ==
        "v.json: groups.model.gpt2.mape_pct: must be a finite number");
  doc = validate_doc();
  doc["groups"]["model"] = json::array();
  CHECK(error_of(documents::read_validate, doc, "v.json") == "v.json: groups.model: must be an object");
}

TEST_CASE("a check document reads its metrics and the kind it compared, of version 0 too", "[documents]") {
  const auto v = documents::read_check(check_doc(), "c.json");
  REQUIRE(v.ok());
  CHECK(v->compared == "tune");
  CHECK(v->regressions == 1);
  REQUIRE(v->metrics.size() == 2);
  CHECK(v->metrics[0].delta_pct == -16.7);
  CHECK_FALSE(v->metrics[1].current.has_value());  // null: missing in current
  CHECK(v->metrics[1].baseline == 8.0);
  // Version 0 named the kind compared in `kind`.
  const auto old = documents::read_check(v0("check.json"), "check.json");
  REQUIRE(old.ok());
  CHECK(old->compared == "simulate");
  CHECK(old->passed);

  json doc = check_doc();
  doc["metrics"][0].erase("tolerance_pct");
  CHECK(error_of(documents::read_check, doc, "c.json") == "c.json: metrics[0].tolerance_pct: required");
  doc = check_doc();
  doc["metrics"][1]["status"] = 0;
  CHECK(error_of(documents::read_check, doc, "c.json") == "c.json: metrics[1].status: must be a string");
  doc = check_doc();
  doc.erase("compared");
  CHECK(error_of(documents::read_check, doc, "c.json") == "c.json: compared: required");
}

namespace {

// A plan of three rows as the planner leaves it: cluster a at 8 and 16 GPUs (both run), cluster b at 8
// (no strategy fits); the selection is the planner's own (plan::select_plans) with a deadline of 3 days.
plan::PlanResult small_plan() {
  plan::PlanResult p;
  p.workload_name = "llama3-8b";
  p.options.tokens = 2e9;
  p.options.deadline_s = 3 * 86400.0;
  p.options.explore.base.global_batch = 64;
  p.strategies_evaluated = 120;
  p.strategies_simulated = 30;
  plan::PlanRow row;
  row.cluster_name = "a";
  row.gpu_name = "H100";
  row.gpus = 8;
  row.nodes = 1;
  row.strategy.tp = 2;
  row.strategy.dp = 4;
  row.iteration_s = 2.0;
  row.step.mean_s = 2.02;
  row.iterations = 1000;
  row.mtbf_s = 1e6;
  row.checkpoint_write_s = 10;
  row.restart_s = 610;
  row.goodput = {400.0, 0.9, 0.025, 0.05, 0.025};
  row.wall_s = 4 * 86400.0;
  row.gpu_hours = 768;
  row.price_per_gpu_hour = 2.0;
  row.cost_usd = 1536;
  plan::PlanRow wide = row;
  wide.gpus = 16;
  wide.nodes = 2;
  wide.mtbf_s = INFINITY;  // no failures: null in the document
  wide.goodput = {INFINITY, 1.0, 0, 0, 0};
  wide.wall_s = 2 * 86400.0;
  wide.gpu_hours = 768;
  wide.cost_usd = 1600;
  plan::PlanRow none;
  none.cluster_name = "b";
  none.gpu_name = "A100";
  none.gpus = 8;
  none.nodes = 1;
  none.infeasible = "no strategy fits in memory";
  p.rows = {row, wide, none};
  p.selection = plan::select_plans(p.rows, p.options.deadline_s, std::nullopt);
  return p;
}

}  // namespace

TEST_CASE("a plan document reads back its rows, their goodput and the planner's choice", "[documents]") {
  const auto v = documents::read_plan(documents::plan_json(small_plan()), "p.json");
  REQUIRE(v.ok());
  CHECK(v->model == "llama3-8b");
  CHECK(v->tokens == 2e9);
  CHECK(v->global_batch == 64);
  CHECK(v->deadline_s == 3 * 86400.0);
  CHECK_FALSE(v->budget_usd.has_value());
  CHECK(v->strategies_evaluated == 120);
  CHECK(v->strategies_simulated == 30);
  REQUIRE(v->rows.size() == 3);
  const documents::PlanRowView& a8 = v->rows[0];
  CHECK(a8.cluster == "a");
  CHECK(a8.gpu == "H100");
  CHECK(a8.gpus == 8);
  CHECK(a8.feasible);
  CHECK(a8.wall_s == 4 * 86400.0);
  CHECK(a8.gpu_hours == 768);
  CHECK(a8.cost_usd == 1536.0);
  CHECK(a8.price_per_gpu_hour == 2.0);
  REQUIRE(a8.simulated.has_value());
  CHECK(a8.simulated->strategy.tp == 2);
  CHECK(a8.simulated->strategy.dp == 4);
  CHECK(a8.simulated->step_mean_s == 2.02);
  CHECK(a8.simulated->iterations == 1000);
  CHECK(a8.simulated->goodput.useful == 0.9);
  CHECK(a8.simulated->goodput.checkpoint == 0.025);
  CHECK(a8.simulated->goodput.restart == 0.05);
  CHECK(a8.simulated->goodput.lost == 0.025);
  CHECK(a8.simulated->failures.mtbf_s == 1e6);
  CHECK(a8.simulated->failures.checkpoint_interval_s == 400.0);
  CHECK(a8.simulated->failures.checkpoint_write_s == 10);
  CHECK(a8.simulated->failures.restart_s == 610);
  // No failures: the unbounded figures were written as null and read back as none.
  CHECK_FALSE(v->rows[1].simulated->failures.mtbf_s.has_value());
  CHECK_FALSE(v->rows[1].simulated->failures.checkpoint_interval_s.has_value());
  CHECK_FALSE(v->rows[2].feasible);
  CHECK(v->rows[2].why == "no strategy fits in memory");
  CHECK_FALSE(v->rows[2].simulated.has_value());
  // Row 0 is cheaper but misses the 3-day deadline; row 1 meets it.
  const documents::PlanSelectionView& s = v->selection;
  CHECK(s.by_dollars);
  CHECK(s.cheapest == 0u);
  CHECK(s.fastest == 1u);
  CHECK(s.chosen == 1u);
  CHECK(s.cheapest_in_deadline == 1u);
  CHECK_FALSE(s.fastest_in_budget.has_value());
  CHECK_FALSE(s.closest.has_value());
  CHECK(s.pareto == std::vector<std::size_t>{1, 0});
}

TEST_CASE("a plan document with a missing, mistyped or out-of-range field names the field's path",
          "[documents]") {
  const json good = documents::plan_json(small_plan());
  json doc = good;
  doc["rows"][0]["goodput"].erase("lost");
  CHECK(error_of(documents::read_plan, doc, "p.json") == "p.json: rows[0].goodput.lost: required");
  doc = good;
  doc["rows"][1]["wall_s"] = "long";
  CHECK(error_of(documents::read_plan, doc, "p.json") == "p.json: rows[1].wall_s: must be a positive number");
  doc = good;
  doc["rows"][2].erase("why");
  CHECK(error_of(documents::read_plan, doc, "p.json") == "p.json: rows[2].why: required");
  doc = good;
  doc["rows"][0]["strategy"].erase("pp");
  CHECK(error_of(documents::read_plan, doc, "p.json") == "p.json: rows[0].strategy.pp: required");
  doc = good;
  doc["selection"]["chosen"] = 7;
  CHECK(error_of(documents::read_plan, doc, "p.json") ==
        "p.json: selection.chosen: 7 is not a feasible row (rows: 3)");
  doc = good;
  doc["selection"]["pareto"] = json::array({1, 2});  // row 2 runs no strategy
  CHECK(error_of(documents::read_plan, doc, "p.json") ==
        "p.json: selection.pareto[1]: 2 is not a feasible row (rows: 3)");
  doc = good;
  doc["selection"]["fastest"] = -1;
  CHECK(error_of(documents::read_plan, doc, "p.json") ==
        "p.json: selection.fastest: must be a row index (an integer >= 0)");
  doc = good;
  doc["selection"]["cost_unit"] = "euro";
  CHECK(error_of(documents::read_plan, doc, "p.json") ==
        "p.json: selection.cost_unit: 'euro' is not one of usd|gpu_hours");
  doc = good;
  doc["rows"][1]["cost_usd"] = nullptr;
  CHECK(error_of(documents::read_plan, doc, "p.json") ==
        "p.json: rows[1].cost_usd: required (selection.cost_unit is usd)");
  doc = good;
  doc["rows"] = json::object();
  CHECK(error_of(documents::read_plan, doc, "p.json") == "p.json: rows: must be an array");
  doc = good;
  doc.erase("inputs");
  CHECK(error_of(documents::read_plan, doc, "p.json") == "p.json: inputs: required");
  CHECK(error_of(documents::read_plan, json::array(), "p.json") == "p.json: not a JSON object");
}

TEST_CASE(
    "every reader refuses an impossible value: a negative quantity or a change below -100 %, naming its path",
    "[documents]") {
  json validate = {{"kind", "validate"},
                   {"runs", json::array({{{"line", 3},
                                          {"model", "gpt2"},
                                          {"gpus", 8},
                                          {"parallel", "tp1 pp1 cp1 ep1 vpp1"},
                                          {"measured_iteration_s", 1.0},
                                          {"predicted_iteration_s", 1.1}}})},
                   {"groups", json::object()},
                   {"overall",
                    {{"runs", 1},
                     {"failed", 0},
                     {"mape_pct", 10.0},
                     {"median_abs_error_pct", 10.0},
                     {"mean_signed_error_pct", 10.0},
                     {"worst_error_pct", 10.0}}},
                   {"failed", 0},
                   {"passed", true}};
  REQUIRE(documents::read_validate(validate, "v.json").ok());
  auto bad = validate;
  bad["runs"][0]["predicted_iteration_s"] = -1.1;
  CHECK(error_of(documents::read_validate, bad, "v.json") ==
        "v.json: runs[0].predicted_iteration_s: -1.1 is negative: a time, size, count, memory or rate never "
        "is");
  bad = validate;
  bad["overall"]["mean_signed_error_pct"] = -150.0;
  CHECK(error_of(documents::read_validate, bad, "v.json") ==
        "v.json: overall.mean_signed_error_pct: -150 % is below -100 %: a quantity that is never negative "
        "cannot "
        "change by that");
  bad = validate;
  bad["overall"]["mape_pct"] = -1.0;
  CHECK(error_of(documents::read_validate, bad, "v.json").find("v.json: overall.mape_pct: -1 is negative") ==
        0);

  json check = {{"kind", "check"},
                {"version", 1},
                {"compared", "simulate"},
                {"passed", true},
                {"regressions", 0},
                {"metrics", json::array({{{"metric", "iteration_time_s"},
                                          {"better", "lower"},
                                          {"status", "ok"},
                                          {"baseline", 1.0},
                                          {"current", 1.01},
                                          {"delta_pct", 1.0},
                                          {"tolerance_pct", 5.0}}})}};
  REQUIRE(documents::read_check(check, "c.json").ok());
  check["metrics"][0]["delta_pct"] = -250.0;
  CHECK(error_of(documents::read_check, check, "c.json")
            .find("c.json: metrics[0].delta_pct: -250 % is below") == 0);
  check["metrics"][0]["delta_pct"] = nullptr;  // no delta: still read
  CHECK(documents::read_check(check, "c.json").ok());
  check["metrics"][0]["current"] = -1.0;
  CHECK(error_of(documents::read_check, check, "c.json").find("c.json: metrics[0].current: -1 is negative") ==
        0);

  auto profile = profile_doc();
  REQUIRE(documents::read_profile(profile, "p.json").ok());
  profile["fits"]["collectives"][0]["bus_bw_GBps"] = -100.0;
  CHECK(error_of(documents::read_profile, profile, "p.json")
            .find("p.json: fits.collectives[0].bus_bw_GBps: -100 is negative") == 0);
}
