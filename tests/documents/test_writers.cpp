// The writers of documents/: each kind's struct written to its exact JSON (field names, integers against
// doubles, null against absent) and stamped with its kind and version. The command-level tests
// (tests/cli/, tests/golden/) check the same documents as the commands fill them.
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "documents/adapt.h"
#include "documents/calibrate.h"
#include "documents/check.h"
#include "documents/check_predicted.h"
#include "documents/cost.h"
#include "documents/db.h"
#include "documents/kind.h"
#include "documents/metrics.h"
#include "documents/model.h"
#include "documents/presets.h"
#include "documents/profile.h"
#include "documents/report.h"
#include "documents/validate.h"
#include "model/presets.h"

using namespace lagom::documents;
using json = nlohmann::json;

namespace {

// `written` is `expected` byte for byte once both are dumped: json::parse keeps 2 an integer and 2.0 a
// double, so a writer that turns one into the other fails here.
void check_written(const json& written, const char* expected) {
  CHECK(written.dump() == json::parse(expected).dump());
}

}  // namespace

TEST_CASE("the check document writes each metric's sides, null where one is absent", "[documents]") {
  CheckDocument doc;
  doc.compared = Kind::tune;
  doc.regressions = 1;
  doc.metrics.push_back({"speedup", "speedup", Better::higher, 2.0, 1.5, -25.0, 5.0, CheckStatus::regressed});
  doc.metrics.push_back({"predicted_time_us dp.x", "predicted_time_us", Better::lower, 10.0, std::nullopt,
                         std::nullopt, 5.0, CheckStatus::missing});
  check_written(to_json(doc), R"({"kind": "check", "version": 1, "compared": "tune", "passed": false,
    "regressions": 1, "metrics": [
      {"metric": "speedup", "field": "speedup", "better": "higher", "baseline": 2.0, "current": 1.5,
       "delta_pct": -25.0, "tolerance_pct": 5.0, "status": "regressed"},
      {"metric": "predicted_time_us dp.x", "field": "predicted_time_us", "better": "lower", "baseline": 10.0,
       "current": null, "delta_pct": null, "tolerance_pct": 5.0, "status": "missing"}]})");
  CheckDocument passed;
  CHECK(to_json(passed).at("passed") == true);
  CHECK(detect(to_json(passed))->kind == Kind::check);
}

TEST_CASE("the check-predicted document writes each op class's rule and verdict", "[documents]") {
  CheckPredictedDocument doc;
  doc.config = "out/lagom-config.json";
  doc.run_id = 3;
  doc.tolerance_pct = 10.0;
  doc.records = 7;
  doc.unmatched = 1;
  doc.passed = false;
  PredictedOpClassRow judged;
  judged.name = "dp.allreduce.1024";
  judged.collective = "allreduce";
  judged.group = "dp";
  judged.bytes = 1024;
  judged.ranks = 8;
  judged.nodes = 1;
  judged.rule = {4, 0, 2048, "ring", "ll", 2};
  judged.ran = "ring/ll";
  judged.records = 6;
  judged.predicted_time_us = 10.0;
  judged.measured_time_us = 12.5;
  judged.delta_pct = 25.0;
  judged.status = "drift";
  PredictedOpClassRow unjudged = judged;
  unjudged.name = "dp.allreduce.4096";
  unjudged.bytes = 4096;
  unjudged.rule = {std::nullopt, 2049, std::nullopt, "ring", "simple", 4};
  unjudged.ran = "";
  unjudged.records = 0;
  unjudged.measured_time_us = std::nullopt;
  unjudged.delta_pct = std::nullopt;
  unjudged.status = "no records";
  doc.op_classes = {judged, unjudged};
  check_written(to_json(doc), R"({"kind": "check-predicted", "version": 1, "config": "out/lagom-config.json",
    "run_id": 3, "tolerance_pct": 10.0, "records": 7, "unmatched": 1, "passed": false, "op_classes": [
      {"name": "dp.allreduce.1024", "collective": "allreduce", "group": "dp", "bytes": 1024, "ranks": 8,
       "nodes": 1, "rule": {"line": 4, "min_bytes": 0, "max_bytes": 2048, "algo": "ring", "proto": "ll",
       "channels": 2}, "ran": "ring/ll", "records": 6, "predicted_time_us": 10.0, "measured_time_us": 12.5,
       "delta_pct": 25.0, "status": "drift"},
      {"name": "dp.allreduce.4096", "collective": "allreduce", "group": "dp", "bytes": 4096, "ranks": 8,
       "nodes": 1, "rule": {"line": null, "min_bytes": 2049, "max_bytes": null, "algo": "ring",
       "proto": "simple", "channels": 4}, "ran": "", "records": 0, "predicted_time_us": 10.0,
       "measured_time_us": null, "delta_pct": null, "status": "no records"}]})");
}

TEST_CASE("adapt's events carry the numbers of their kind, and --once's document holds them", "[documents]") {
  check_written(to_json(AdaptStartData{3, 16, 10.0}),
                R"({"op_classes": 3, "window": 16, "tolerance_pct": 10.0})");
  check_written(to_json(AdaptWindowData{12.0, 10.0, 20.0, 16, 40}),
                R"({"measured_us": 12.0, "predicted_us": 10.0, "delta_pct": 20.0, "window": 16,
                    "records_seen": 40})");
  AdaptRefitData refit;
  refit.fit.collective = "allreduce", refit.fit.algo = "ring", refit.fit.proto = "ll";
  refit.fit.ranks = 8, refit.fit.nodes = 1, refit.fit.channels = 2;
  refit.fit.latency_us = 5.0, refit.fit.bus_bw_GBps = 20.0, refit.fit.rel_error = 0.01;
  refit.fit.min_bytes = 1024, refit.fit.max_bytes = 1 << 20;  // not written: the event names its range
  check_written(to_json(refit), R"({"collective": "allreduce", "algo": "ring", "proto": "ll", "ranks": 8,
    "nodes": 1, "channels": 2, "latency_us": 5.0, "bus_bw_GBps": 20.0, "rel_error": 0.01})");
  refit.previous_latency_us = 4.0;
  refit.previous_bus_bw_GBps = 25.0;
  refit.bandwidth_only = true;
  const json refitted = to_json(refit);
  CHECK(refitted.at("previous_latency_us") == 4.0);
  CHECK(refitted.at("previous_bus_bw_GBps") == 25.0);
  CHECK(refitted.at("bandwidth_only") == true);
  AdaptRuleData rule{"ring/ll/2", "tree/simple/4", 10.0, 8.0, std::nullopt};
  check_written(to_json(rule), R"({"previous_rule": "ring/ll/2", "rule": "tree/simple/4",
    "previous_predicted_us": 10.0, "predicted_us": 8.0})");
  rule.measured_us = 8.5;
  CHECK(to_json(rule).at("measured_us") == 8.5);
  check_written(to_json(AdaptReplacedData{2, 1, 40}), R"({"refits": 2, "retunes": 1, "records_seen": 40})");
  check_written(to_json(AdaptStopData{40, 3, 1}), R"({"records": 40, "unmatched": 3, "retunes": 1})");

  AdaptDocument doc{"out", 40, 3, 1, {}};
  doc.events.push_back({"start", "", "3 op classes", to_json(AdaptStartData{3, 16, 10.0})});
  doc.events.push_back({"skip", "", "not re-fitted: one size", json::object()});
  check_written(to_json(doc.events[1]),
                R"({"event": "skip", "op_class": "", "message": "not re-fitted: one size", "data": {}})");
  check_written(to_json(doc), R"({"kind": "adapt", "version": 1, "config": "out", "records": 40,
    "unmatched": 3, "retunes": 1, "events": [
      {"event": "start", "op_class": "", "message": "3 op classes",
       "data": {"op_classes": 3, "window": 16, "tolerance_pct": 10.0}},
      {"event": "skip", "op_class": "", "message": "not re-fitted: one size", "data": {}}]})");
}

TEST_CASE("the validate document writes a simulated run, a failed one and the groups", "[documents]") {
  ValidateDocument doc;
  ValidateRunRow ran;
  ran.file = "runs.csv";
  ran.line = 2;
  ran.model = "gpt2";
  ran.cluster = "dgx-a100";
  ran.gpus = 8;
  ran.precision = "bf16";
  ran.parallel = "tp1 pp1 cp1 ep1 vpp1";
  ran.measured_iteration_s = 2.0;
  ran.predicted_iteration_s = 2.5;
  ran.error_pct = 25.0;
  ran.fits_in_memory = true;
  ran.regime = "sm80 megatron-core dense";
  ran.group = "a";
  ran.planned_ignored = {"offload=1"};
  ValidateRunRow failed = ran;
  failed.line = 3;
  failed.measured_iteration_s = std::nullopt;
  failed.predicted_iteration_s = std::nullopt;
  failed.error_pct = std::nullopt;
  failed.fits_in_memory = std::nullopt;
  failed.regime = std::nullopt;
  failed.failure = "tp 3 does not divide heads";
  failed.group = std::nullopt;
  failed.planned_ignored = {};
  failed.note = "from a paper";
  doc.runs = {ran, failed};
  doc.overall = {1, 1, 25.0, 25.0, 25.0, 25.0};
  doc.groups["model"]["gpt2"] = doc.overall;
  doc.failed = 1;
  doc.passed = false;
  doc.max_mape_pct = 20.0;
  doc.held_out_coverage = 0.5;
  doc.held_out_runs = 2;
  check_written(to_json(doc), R"({"kind": "validate", "version": 1, "runs": [
      {"file": "runs.csv", "line": 2, "model": "gpt2", "cluster": "dgx-a100", "gpus": 8, "precision": "bf16",
       "parallel": "tp1 pp1 cp1 ep1 vpp1", "measured_iteration_s": 2.0, "predicted_iteration_s": 2.5,
       "error_pct": 25.0, "fits_in_memory": true, "regime": "sm80 megatron-core dense", "group": "a", "planned_ignored": ["offload=1"]},
      {"file": "runs.csv", "line": 3, "model": "gpt2", "cluster": "dgx-a100", "gpus": 8, "precision": "bf16",
       "parallel": "tp1 pp1 cp1 ep1 vpp1", "failure": "tp 3 does not divide heads", "note": "from a paper"}],
    "overall": {"runs": 1, "failed": 1, "median_abs_error_pct": 25.0, "mape_pct": 25.0,
                "mean_signed_error_pct": 25.0, "worst_error_pct": 25.0},
    "groups": {"model": {"gpt2": {"runs": 1, "failed": 1, "median_abs_error_pct": 25.0, "mape_pct": 25.0,
                                  "mean_signed_error_pct": 25.0, "worst_error_pct": 25.0}}},
    "failed": 1, "not_fitting": 0, "passed": false, "max_mape_pct": 20.0, "accuracy": {"level": 0.9, "regimes": []},
    "held_out_coverage": 0.5, "held_out_runs": 2})");
  // No run counted: the coverage is null, not absent.
  const json empty = to_json(ValidateDocument{});
  CHECK(empty.at("groups") == json::object());
  CHECK(empty.at("held_out_coverage").is_null());
}

TEST_CASE("the calibrate document writes the fit, its refusal, the folds and the file written",
          "[documents]") {
  CalibrateDocument doc;
  doc.cluster = "dgx-a100";
  doc.runs = 4;
  doc.other_clusters_left_out = 1;
  const CalibrateConstantRow constant{
      "kernel_launch_us", "launch time", 1.0, 20.0, 5.0, 25.0, 0.1, true, false};
  doc.constants = {constant};
  doc.before = {4, 0, 30.0, -30.0, -40.0};
  doc.after = {4, 0, 10.0, 1.0, 15.0};
  doc.evaluations = 7;
  doc.accepted = false;
  doc.refusal = "kernel_launch_us 25 is out of range";
  doc.cross_validation =
      CalibrateCrossValidation{{{"gpt2", doc.after, doc.after, {constant}, false}}, 12.0, -2.0, 2};
  doc.out = "fitted.json";
  const std::string stats = R"({"runs": 4, "failed": 0, "mape_pct": 10.0, "mean_signed_error_pct": 1.0,
                                "worst_error_pct": 15.0})";
  const std::string constants = R"([{"key": "kernel_launch_us", "meaning": "launch time", "min": 1.0,
    "max": 20.0, "before": 5.0, "after": 25.0, "relative_stderr": 0.1, "constrained": true,
    "in_range": false}])";
  const std::string expected = R"({"kind": "calibrate", "version": 1, "cluster": "dgx-a100", "runs": 4,
    "other_clusters_left_out": 1, "constants": )" +
                               constants + R"(,
    "before": {"runs": 4, "failed": 0, "mape_pct": 30.0, "mean_signed_error_pct": -30.0,
               "worst_error_pct": -40.0},
    "after": )" + stats + R"(, "evaluations": 7, "accepted": false,
    "refusal": "kernel_launch_us 25 is out of range",
    "cross_validation": {"by": "model", "folds": [{"left_out": "gpt2", "held_out": )" +
                               stats + R"(, "fit_after": )" + stats + R"(, "constants": )" + constants +
                               R"(, "accepted": false}], "mape_pct": 12.0, "mean_signed_error_pct": -2.0,
                         "runs": 2},
    "out": "fitted.json"})";
  check_written(to_json(doc), expected.c_str());
  const json accepted = to_json(CalibrateDocument{});
  CHECK_FALSE(accepted.contains("refusal"));
  CHECK_FALSE(accepted.contains("cross_validation"));
  CHECK_FALSE(accepted.contains("out"));
}

TEST_CASE("the db documents: the runs, one run's counts, an import and a fit", "[documents]") {
  lagom::db::Run complete;
  complete.id = 1;
  complete.status = "complete";
  complete.backend = "cpu";
  complete.suite = "comm";
  complete.host = "h";
  complete.ranks = 2;
  complete.started_at = "2024-01-01T00:00:00Z";
  complete.finished_at = "2024-01-01T00:01:00Z";
  lagom::db::Run running = complete;
  running.id = 2;
  running.status = "incomplete";
  running.finished_at = "";
  check_written(to_json(DbListDocument{{complete, running}}), R"({"kind": "db-list", "version": 1, "runs": [
      {"id": 1, "status": "complete", "backend": "cpu", "suite": "comm", "host": "h", "ranks": 2, "nodes": 1,
       "started_at": "2024-01-01T00:00:00Z", "finished_at": "2024-01-01T00:01:00Z"},
      {"id": 2, "status": "incomplete", "backend": "cpu", "suite": "comm", "host": "h", "ranks": 2,
       "nodes": 1, "started_at": "2024-01-01T00:00:00Z", "finished_at": null}]})");

  const char* no_fits = R"({"collectives": [], "gemms": [], "scalars": {}})";
  json show = json::parse(R"({"kind": "db-show", "version": 1,
    "samples": {"comm": 3, "compute": 2, "overlap": 1, "production_records": 0}})");
  show["run"] = to_json(complete);
  show["fits"] = json::parse(no_fits);
  check_written(to_json(DbShowDocument{complete, 3, 2, 1, 0, {}}), show.dump().c_str());

  DbImportRecordsDocument records;
  records.files = 2;
  records.records = 10;
  records.already = 10;
  records.warnings = {"a.jsonl: last line skipped"};
  check_written(to_json(records), R"({"kind": "db-import", "version": 1, "run_id": null, "format": "records",
    "files": 2, "records": 10, "added": 0, "already": 10, "dropped_by_writer": 0,
    "warnings": ["a.jsonl: last line skipped"]})");
  records.run_id = 5;
  CHECK(to_json(records).at("run_id") == 5);

  const DbImportLogDocument log{4, "nccl-tests", "allreduce", 8, 1, 12, {"line 9: #wrong 3"}, {}, {}};
  check_written(to_json(log), (R"({"kind": "db-import", "version": 1, "run_id": 4, "format": "nccl-tests",
    "collective": "allreduce", "ranks": 8, "nodes": 1, "samples": 12, "skipped": ["line 9: #wrong 3"],
    "fits_skipped": [], "fits": )" +
                               std::string(no_fits) + "}")
                                  .c_str());

  check_written(to_json(DbFitDocument{6, {"gemm bf16: one size"}, {}}),
                R"({"kind": "db-fit", "version": 1, "run_id": 6, "skipped": ["gemm bf16: one size"],
                    "collectives": [], "gemms": [], "scalars": {}})");

  check_written(json::parse(records_import_options("recs", {"recs/a.jsonl"})),
                R"({"path": "recs", "files": ["recs/a.jsonl"], "format": "records"})");
  check_written(json::parse(log_import_options("ar.log", "nccl-tests", "allreduce")),
                R"({"file": "ar.log", "format": "nccl-tests", "collective": "allreduce"})");
}

TEST_CASE("the cost documents: one GEMM, one collective", "[documents]") {
  check_written(to_json(CostGemmDocument{8192, 4096, 1024, "bf16", "dgx-h100", 100.5, 700.0, 0.75}),
                R"({"kind": "cost", "version": 1, "m": 8192, "n": 4096, "k": 1024, "precision": "bf16",
                    "cluster": "dgx-h100", "time_us": 100.5, "tflops": 700.0, "efficiency": 0.75})");
  const CostCollectiveDocument collective{"allreduce", 1073741824, 8,        1,  "dgx-a100", 5000.0,  214.7,
                                          375.8,       "ring",     "simple", 24, 512,        1048576, 12.5};
  check_written(to_json(collective), R"({"kind": "cost", "version": 1, "collective": "allreduce",
    "bytes": 1073741824, "ranks": 8, "nodes": 1, "cluster": "dgx-a100", "time_us": 5000.0, "algbw_GBps": 214.7,
    "busbw_GBps": 375.8, "algo": "ring", "proto": "simple", "channels": 24, "threads": 512,
    "chunk_bytes": 1048576, "latency_us": 12.5, "cta_policy": "default", "copy_engine": false, "nccl": null,
    "fabric": null})");
  // On the copy engines: algo ce, no CTA.
  CostCollectiveDocument ce = collective;
  ce.collective = "allgather";
  ce.algo = "ce";
  ce.proto = "none";
  ce.channels = ce.threads = 0;
  ce.chunk_bytes = 0;
  ce.cta_policy = "zero";
  ce.copy_engine = true;
  check_written(to_json(ce), R"({"kind": "cost", "version": 1, "collective": "allgather",
    "bytes": 1073741824, "ranks": 8, "nodes": 1, "cluster": "dgx-a100", "time_us": 5000.0, "algbw_GBps": 214.7,
    "busbw_GBps": 375.8, "algo": "ce", "proto": "none", "channels": 0, "threads": 0,
    "chunk_bytes": 0, "latency_us": 12.5, "cta_policy": "zero", "copy_engine": true, "nccl": null,
    "fabric": null})");
  // Across nodes: the fabric's view of the call; null on one node.
  lagom::model::ClusterSpec roce = lagom::model::cluster_preset("dgx-a100").value();
  roce.nic.kind = lagom::model::NicKind::roce;
  lagom::model::CollConfig ring;
  ring.algo = lagom::model::Algo::ring;
  ring.channels = 16;
  CHECK(fabric_json(roce, {8, 1}, lagom::model::Collective::allreduce, ring).is_null());
  CHECK(fabric_text(roce, {8, 1}, lagom::model::Collective::allreduce, ring).empty());
  const json across = fabric_json(roce, {1024, 128}, lagom::model::Collective::allreduce, ring);
  CHECK(across["routing"] == "ecmp");
  CHECK(across["placement"] == "scattered");
  CHECK(across["leaves"] == 4);
  CHECK(across["uplinks"] == 32);
  CHECK(across["slowdown"].get<double>() > 1.5);
  CHECK(across["qps_relief"]["qps_per_connection"] == 2);
  CHECK(across["qps_relief"]["slowdown"].get<double>() < across["slowdown"].get<double>());
  const std::string line = fabric_text(roce, {1024, 128}, lagom::model::Collective::allreduce, ring);
  CHECK(line.find("over 4 leaves of 32") != std::string::npos);
  // ECMP's collisions: the fewest queue pairs per connection that take 5% off.
  CHECK(line.find("; with NCCL_IB_QPS_PER_CONNECTION=2 ") != std::string::npos);
}

TEST_CASE("the presets document lists clusters (localhost without a GPU) and models", "[documents]") {
  PresetsDocument doc;
  doc.clusters.push_back({"dgx-a100", "8 A100", 8, std::string("A100-SXM4-80GB")});
  doc.clusters.push_back({"localhost", "this machine", std::nullopt, std::nullopt});
  doc.models.push_back({"gpt2", 12, 768, 12, 12, 123568896.0, false});
  check_written(to_json(doc), R"({"kind": "presets", "version": 1,
    "clusters": [{"name": "dgx-a100", "description": "8 A100", "gpus_per_node": 8, "gpu": "A100-SXM4-80GB"},
                 {"name": "localhost", "description": "this machine"}],
    "models": [{"name": "gpt2", "layers": 12, "hidden": 768, "heads": 12, "kv_heads": 12,
                "parameters": 123568896.0, "moe": false}]})");
}

TEST_CASE("the model document: the shape, the workload file and what a HuggingFace config said",
          "[documents]") {
  const lagom::model::WorkloadSpec gpt2 = lagom::model::workload_preset("gpt2").value();
  ModelDocument doc{gpt2, "gpt2", "preset", std::nullopt};
  json expected = {{"kind", "model"},
                   {"version", 1},
                   {"model", "gpt2"},
                   {"source", "gpt2"},
                   {"format", "preset"},
                   {"model_shape", model_shape_json(gpt2)},
                   {"workload", lagom::model::to_json(gpt2)}};
  check_written(to_json(doc), expected.dump().c_str());
  doc.huggingface = ModelHfFields{"gpt2",       "GPT2Config",     1024,      0, {"n_layer"}, {},
                                  {"head_dim"}, {"n_inner null"}, {"a note"}};
  const json hf = to_json(doc);
  CHECK(hf.at("family") == "gpt2");
  CHECK(hf.at("config_class") == "GPT2Config");
  CHECK(hf.at("unread") == json::array({"head_dim"}));
  CHECK(hf.at("defaulted") == json::array({"n_inner null"}));
  CHECK(hf.at("context_length") == 1024);
  CHECK(hf.at("sliding_window") == 0);
  CHECK(hf.at("read") == json::array({"n_layer"}));
  CHECK(hf.at("ignored") == json::array());
  CHECK(hf.at("notes") == json::array({"a note"}));
  // A config read without --seq prices no sequence: its FLOPs per token are null, not 0, and under their
  // own name (docs/cli.md#lagom-model).
  lagom::model::WorkloadSpec no_seq = gpt2;
  no_seq.seq = 0;
  const json shape =
      to_json(ModelDocument{no_seq, "config.json", "huggingface", std::nullopt}).at("model_shape");
  CHECK(shape.at("flops_per_token").is_null());
  CHECK(shape.size() == model_shape_json(no_seq).size());
}

TEST_CASE("the profile document: the run measured, its samples and fits", "[documents]") {
  ProfileDocument doc;
  doc.run_id = 9;
  doc.backend = "cpu";
  doc.suite = "compute";
  doc.db = "lagom.db";
  doc.warnings = {"no GPU"};
  lagom::db::ComputeSample memory;
  memory.kind = "memory";
  memory.time_us = 2.0;
  memory.bytes = 64;
  memory.bw_GBps = 32.0;
  doc.compute = {memory};
  check_written(to_json(doc), R"({"kind": "profile", "version": 1, "run_id": 9, "status": "complete",
    "backend": "cpu", "suite": "compute", "ranks": 1, "nodes": 1, "db": "lagom.db", "warnings": ["no GPU"],
    "comm": [], "compute": [{"kind": "memory", "time_us": 2.0, "bytes": 64, "bw_GBps": 32.0}], "overlap": [],
    "fits": {"collectives": [], "gemms": [], "scalars": {}}})");
}

TEST_CASE("the report document lists the page's sections", "[documents]") {
  check_written(
      to_json(ReportDocument{"page.html", 2048, {{"simulate", "sim.json"}, {"profile", "lagom.db run 3"}}}),
      R"({"kind": "report", "version": 1, "out": "page.html", "bytes": 2048, "sections": [
                    {"kind": "simulate", "source": "sim.json"}, {"kind": "profile", "source": "lagom.db run 3"}]})");
}

TEST_CASE("what a document describes: its model, cluster and profile run, each where its writer puts it",
          "[documents]") {
  using Described = std::vector<std::pair<std::string, std::string>>;
  CHECK(
      described_run(json::parse(R"({"model": "gpt2", "cluster": {"name": "dgx-a100"}})")) ==
      Described{{"model", "gpt2"}, {"cluster", "dgx-a100"}, {"backend", ""}, {"backend", ""}, {"host", ""}});
  CHECK(described_run(json::parse(R"({"run": {"backend": "mpi", "host": "n1"}, "backend": "cpu"})")) ==
        Described{{"model", ""}, {"cluster", ""}, {"backend", "mpi"}, {"backend", "cpu"}, {"host", "n1"}});
  CHECK(described_run(json::parse(R"({"model": 3})")).front().second.empty());
}
