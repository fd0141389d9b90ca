// `lagom validate` as a user runs it: the shipped runs files, and files that are wrong in one place.
#include <cmath>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::read_file;
using lagom::test::run_lagom;
using lagom::test::temp_dir;
using lagom::test::write_file;

namespace {

const std::string k_data = std::string(LAGOM_TEST_DATA_DIR) + "/validate";

// A runs file: a comment line, the header, one row (so the row is on line 3).
std::string runs_file(const std::string& dir, const std::string& header, const std::string& row) {
  const std::string path = dir + "/runs.csv";
  write_file(path, "# a comment line\n" + header + "\n" + row + "\n");
  return path;
}

}  // namespace

TEST_CASE("validate reproduces the vTrain error thresholds through the runs files", "[cli][validate]") {
  // Issue 14's bounds: single-node <= 8%, multi-node <= 12% (vTrain's own model: 8.37% and 14.73%).
  const auto single = run_lagom({"validate", k_data + "/vtrain-single.csv", "--json", "--max-mape", "8"});
  INFO(single.err);
  REQUIRE(single.exit_code == 0);
  const auto s = nlohmann::json::parse(single.out);
  CHECK(s["kind"] == "validate");
  CHECK(s["overall"]["runs"] == 1440);
  CHECK(s["failed"] == 0);
  CHECK(s["overall"]["mape_pct"].get<double>() <= 8.0);
  const auto multi = run_lagom({"validate", k_data + "/vtrain-multi.csv", "--json", "--max-mape", "12"});
  INFO(multi.err);
  REQUIRE(multi.exit_code == 0);
  const auto m = nlohmann::json::parse(multi.out);
  CHECK(m["overall"]["runs"] == 109);
  CHECK(m["overall"]["mape_pct"].get<double>() <= 12.0);
}

TEST_CASE("every DGX H100 recipe run simulates and fits, within issue 14's error targets per precision",
          "[cli][validate]") {
  // The default dgx-h100 preset, no calibration: MAPE <= 8% (BF16) and <= 10% (FP8), mean signed error
  // within +-3% for each; every run simulates and fits in memory under the default reserve (they ran).
  const auto v = run_lagom({"validate", k_data + "/dgxc-h100.csv", "--json"});
  INFO(v.err);
  REQUIRE(v.exit_code == 0);
  const auto doc = nlohmann::json::parse(v.out);
  CHECK(doc["overall"]["runs"] == 86);
  CHECK(doc["failed"] == 0);
  CHECK(doc["not_fitting"] == 0);
  const auto& bf16 = doc["groups"]["precision"]["bf16"];
  const auto& fp8 = doc["groups"]["precision"]["fp8"];
  CHECK(bf16["mape_pct"].get<double>() <= 8.0);
  CHECK(fp8["mape_pct"].get<double>() <= 10.0);
  CHECK(std::fabs(bf16["mean_signed_error_pct"].get<double>()) <= 3.0);
  CHECK(std::fabs(fp8["mean_signed_error_pct"].get<double>()) <= 3.0);
}

TEST_CASE("the llm-foundry FSDP runs simulate on the presets within issue 27's targets on every cluster",
          "[cli][validate]") {
  // 216 MPT throughputs under PyTorch FSDP (tests/data/llm-foundry), FlashAttention-1 (attention flash1).
  // When the file was added (sm80's benchmark GEMM fraction 0.88, FlashAttention-1 at half FlashAttention-2):
  // H100 7.2% MAPE (bias +1.4%), A100 80GB 10.7% (-0.5%), A100 40GB 11.6% (-7.5%), all 9.8% (-2.3%). With
  // both fitted jointly on every A100 run (scripts/fit-generations.py): H100 6.8% (-2.6%), A100 80GB 6.6%
  // (+2.6%), A100 40GB 5.4% (-1.8%), all 6.2% (-0.8%). With FSDP1's gradient path priced and the
  // SHARD_GRAD_OP rows as FSDP's zero 2 (docs/model.md "The gradient path of sharded data parallelism"):
  // H100 5.4% (-2.0%), A100 80GB 6.6% (+3.0%: 2.99, at the bound), A100 40GB 5.1% (-1.7%), all 5.6%
  // (-0.5%). The bounds are issue 27's: <= 8%, bias within +-3%.
  const auto v = run_lagom({"validate", k_data + "/llm-foundry.csv", "--json"});
  INFO(v.err);
  REQUIRE(v.exit_code == 0);
  const auto doc = nlohmann::json::parse(v.out);
  CHECK(doc["overall"]["runs"] == 216);
  CHECK(doc["failed"] == 0);
  const auto& by = doc["groups"]["cluster"];
  for (const char* cluster : {"dgx-h100", "dgx-a100", "dgx-a100-40gb"}) {
    INFO(cluster);
    CHECK(by[cluster]["mape_pct"].get<double>() <= 8.0);
    CHECK(std::fabs(by[cluster]["mean_signed_error_pct"].get<double>()) <= 3.0);
  }
  CHECK(doc["overall"]["mape_pct"].get<double>() <= 7.0);
  // The 7 H100 FP8 rows: +0.0% before the joint A100 fit, -6.4% after it (docs/calibrate.md "Across
  // generations": a mechanism is missing there), -4.6% with the gradient path. Held so they get no worse
  // unseen.
  const auto& fp8 = doc["groups"]["group"]["h100-80gb fp8"];
  CHECK(fp8["runs"] == 7);
  CHECK(fp8["mean_signed_error_pct"].get<double>() >= -6.5);
}

TEST_CASE("validate's per-run error is the signed error of simulate's own prediction", "[cli][validate]") {
  const std::string dir = temp_dir("validate");
  // The last cell is empty (a trailing comma): a note not given.
  const auto path = runs_file(dir, "model,cluster,gpus,tp,global-batch,measured_iteration_s,group,note",
                              "llama3-8b,dgx-h100,64,2,512,1.0,mine,");
  const auto v = run_lagom({"validate", path, "--json"});
  INFO(v.err);
  REQUIRE(v.exit_code == 0);
  const auto doc = nlohmann::json::parse(v.out);
  const auto sim = run_lagom({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "64",
                              "--tp", "2", "--global-batch", "512", "--json"});
  REQUIRE(sim.exit_code == 0);
  const double predicted = nlohmann::json::parse(sim.out)["iteration_time_s"].get<double>();
  REQUIRE(doc["runs"].size() == 1);
  CHECK(doc["runs"][0]["predicted_iteration_s"].get<double>() == predicted);
  CHECK(doc["runs"][0]["error_pct"].get<double>() == Approx(100.0 * (predicted - 1.0)));
  CHECK(doc["runs"][0]["line"] == 3);  // the comment line counts
  CHECK(doc["groups"]["group"]["mine"]["runs"] == 1);
  CHECK_FALSE(doc["runs"][0].contains("note"));
  // tokens/s is converted with the row's global batch and sequence length (llama3-8b: seq 8192).
  const auto by_tokens = runs_file(dir, "model,cluster,gpus,tp,global-batch,measured_tokens_per_s",
                                   "llama3-8b,dgx-h100,64,2,512," + std::to_string(512.0 * 8192 / 2.0));
  const auto t = run_lagom({"validate", by_tokens, "--json"});
  REQUIRE(t.exit_code == 0);
  CHECK(nlohmann::json::parse(t.out)["runs"][0]["measured_iteration_s"].get<double>() == Approx(2.0));
}

TEST_CASE("a runs file that is wrong in one place is refused naming the file, the line and the column",
          "[cli][validate]") {
  const std::string dir = temp_dir("validate-bad");
  struct Case {
    std::string header, row, expected;
  };
  const std::vector<Case> cases = {
      {"model,cluster,gpus,tpp,measured_iteration_s", "gpt2,dgx-a100,8,2,1.0", "column 'tpp' (column 4)"},
      {"model,cluster,gpus,tp,measured_iteration_s", "gpt2,dgx-a100,8,two,1.0", "column 'tp' (column 4)"},
      {"model,cluster,gpus,measured_iteration_s", "gpt2,dgx-a100,8,-1", "column 'measured_iteration_s'"},
      {"model,cluster,gpus,measured_iteration_s", "gpt2,dgx-a100,8", "runs.csv:3: 3 cells, the header has 4"},
      {"model,cluster,gpus", "gpt2,dgx-a100,8", "exactly one of the columns measured_iteration_s"},
      {"model,cluster,gpus,sp,measured_iteration_s", "gpt2,dgx-a100,8,maybe,1.0", "column 'sp' (column 4)"},
      {"model,model,gpus,measured_iteration_s", "gpt2,gpt2,8,1.0", "column 'model' appears twice"},
      {"model,cluster,gpus,measured_iteration_s", "\"gpt2,dgx-a100,8,1.0", "runs.csv:3: malformed CSV"},
      {"model,cluster,gpus,measured_iteration_s", "gpt9,dgx-a100,8,1.0", "runs.csv:3: "},  // no such preset
      {"model,cluster,gpus,measured_iteration_s", "gpt2,dgx-a9,8,1.0", "runs.csv:3: "},
  };
  for (const auto& c : cases) {
    const auto path = runs_file(dir, c.header, c.row);
    const auto r = run_lagom({"validate", path});
    INFO(c.header << " / " << c.row << " -> " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("lagom: error: ", 0) == 0);
    CHECK(r.err.find(c.expected) != std::string::npos);
    CHECK(r.out.empty());
  }
  CHECK(run_lagom({"validate", dir + "/missing.csv"}).exit_code == 2);
}

TEST_CASE("a run the model cannot build is reported as failed and fails validate", "[cli][validate]") {
  const std::string dir = temp_dir("validate-failed");
  // pp 5 does not divide gpt2's 12 layers: the model cannot answer this row; the other row still runs.
  const std::string path = dir + "/runs.csv";
  write_file(path,
             "model,cluster,gpus,pp,global-batch,measured_iteration_s\n"
             "gpt2,dgx-a100,5,5,20,1.0\n"
             "gpt2,dgx-a100,8,1,64,1.0\n");
  const auto r = run_lagom({"validate", path, "--json"});
  CHECK(r.exit_code == 1);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["failed"] == 1);
  CHECK(doc["runs"][0].contains("failure"));
  CHECK(doc["runs"][0]["measured_iteration_s"] == 1.0);  // what was measured, whatever the model did
  CHECK(doc["runs"][1].contains("predicted_iteration_s"));
  CHECK(doc["passed"] == false);
}

TEST_CASE("validate exits 1 above --max-mape and 0 within it", "[cli][validate]") {
  const std::string dir = temp_dir("validate-mape");
  const auto path =
      runs_file(dir, "model,cluster,gpus,global-batch,measured_iteration_s", "gpt2,dgx-a100,8,64,100.0");
  CHECK(run_lagom({"validate", path, "--max-mape", "5"}).exit_code == 1);
  CHECK(run_lagom({"validate", path, "--max-mape", "100"}).exit_code == 0);
  CHECK(run_lagom({"validate", path, "--max-mape", "-1"}).exit_code == 2);
}

TEST_CASE("seq given with a model overrides its sequence length and says so", "[cli][validate]") {
  const std::vector<std::string> base = {"simulate", "--model", "llama3-8b",      "--cluster", "dgx-h100",
                                         "--gpus",   "8",       "--global-batch", "64",        "--json"};
  auto with = [&](const std::string& seq) {
    auto args = base;
    args.insert(args.end(), {"--seq", seq});
    return run_lagom(args);
  };
  const auto short_seq = with("2048"), long_seq = with("16384");
  REQUIRE(short_seq.exit_code == 0);
  REQUIRE(long_seq.exit_code == 0);
  CHECK(short_seq.err.find("--seq 2048 overrides llama3-8b's seq") != std::string::npos);
  const double a = nlohmann::json::parse(short_seq.out)["iteration_time_s"].get<double>();
  const double b = nlohmann::json::parse(long_seq.out)["iteration_time_s"].get<double>();
  CHECK(b > 4 * a);  // 8× the tokens and longer attention
}

TEST_CASE("a model or cluster cell naming a file beside the runs file is read from there",
          "[cli][validate]") {
  const std::string dir = temp_dir("validate-paths");
  const auto spec = run_lagom({"presets", "--show", "gpt2", "--json"});
  REQUIRE(spec.exit_code == 0);
  write_file(dir + "/mymodel", spec.out);  // no '/' and no '.json': a file because it exists there
  const auto path =
      runs_file(dir, "model,cluster,gpus,global-batch,measured_iteration_s", "mymodel,dgx-a100,8,64,1.0");
  const auto v = run_lagom({"validate", path, "--json"});
  INFO(v.err);
  REQUIRE(v.exit_code == 0);
  const auto sim = run_lagom({"simulate", "--model", "gpt2", "--cluster", "dgx-a100", "--gpus", "8",
                              "--global-batch", "64", "--json"});
  REQUIRE(sim.exit_code == 0);
  CHECK(nlohmann::json::parse(v.out)["runs"][0]["predicted_iteration_s"].get<double>() ==
        nlohmann::json::parse(sim.out)["iteration_time_s"].get<double>());
}

TEST_CASE("the CP, TP-overlap and MoE columns are simulate's flags, not ignored planned columns",
          "[cli][validate]") {
  const std::string dir = temp_dir("validate-flags");
  const auto path = runs_file(dir,
                              "model,cluster,gpus,tp,cp,ep,sp,global-batch,tp-overlap,cp-comm-type,moe-"
                              "dispatcher,moe-capacity-factor,"
                              "moe-pad-to-capacity,moe-grouped-gemm,expert-tp,measured_iteration_s",
                              "mixtral-8x7b,dgx-h100,32,2,2,8,true,64,te,p2p,alltoall,1.0,true,false,2,1.0");
  const auto v = run_lagom({"validate", path, "--json"});
  INFO(v.err);
  REQUIRE(v.exit_code == 0);
  const auto doc = nlohmann::json::parse(v.out);
  REQUIRE(doc["runs"].size() == 1);
  CHECK_FALSE(doc["runs"][0].contains("planned_ignored"));
  const auto sim = run_lagom({"simulate",
                              "--model",
                              "mixtral-8x7b",
                              "--cluster",
                              "dgx-h100",
                              "--gpus",
                              "32",
                              "--tp",
                              "2",
                              "--cp",
                              "2",
                              "--ep",
                              "8",
                              "--sp",
                              "--global-batch",
                              "64",
                              "--tp-overlap",
                              "te",
                              "--cp-comm-type",
                              "p2p",
                              "--moe-dispatcher",
                              "alltoall",
                              "--moe-capacity-factor",
                              "1.0",
                              "--moe-pad-to-capacity",
                              "on",
                              "--moe-grouped-gemm",
                              "off",
                              "--expert-tp",
                              "2",
                              "--json"});
  INFO(sim.err);
  REQUIRE(sim.exit_code == 0);
  const auto s = nlohmann::json::parse(sim.out);
  CHECK(doc["runs"][0]["predicted_iteration_s"].get<double>() == s["iteration_time_s"].get<double>());
  CHECK(s["strategy"]["cp_comm_type"] == "p2p");
  CHECK(s["strategy"]["tp_overlap"] == "te");
  CHECK(s["strategy"]["moe_grouped_gemm"] == false);
  // Without the columns the prediction differs (a2a CP, flash-less TP, dropless grouped MoE).
  const auto plain =
      run_lagom({"simulate", "--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--gpus", "32", "--tp", "2",
                 "--cp", "2", "--ep", "8", "--sp", "--global-batch", "64", "--json"});
  REQUIRE(plain.exit_code == 0);
  CHECK(nlohmann::json::parse(plain.out)["iteration_time_s"].get<double>() !=
        s["iteration_time_s"].get<double>());
  // Bad values exit 2 with the flag's name.
  const auto bad = run_lagom({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8",
                              "--cp", "2", "--cp-comm-type", "ring"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("cp-comm-type: 'ring'") != std::string::npos);
  const auto te_bench = run_lagom({"bench-overlap", "--kernel", "ag-gemm", "--method", "te", "--m", "1024",
                                   "--n", "1024", "--k", "1024"});
  CHECK(te_bench.exit_code == 2);
  CHECK(te_bench.err.find("--method te") != std::string::npos);
}

TEST_CASE(
    "the 90% intervals hold 85-95% of the shipped runs left out by model, and the shipped table is current",
    "[cli][validate][accuracy]") {
  // Issue 26: "over the leave-one-out predictions, the stated 90% interval covers 85-95% of the runs". Each
  // run is judged against its regime's bounds computed without its own model's runs (model/accuracy.h).
  const auto v = run_lagom({"validate", k_data + "/dgxc-h100.csv", k_data + "/llm-foundry.csv",
                            k_data + "/vtrain-multi.csv", k_data + "/vtrain-single.csv", "--json"});
  INFO(v.err);
  REQUIRE(v.exit_code == 0);
  const auto doc = nlohmann::json::parse(v.out);
  CHECK(doc["held_out_runs"].get<int>() >= 1800);
  const double coverage = doc["held_out_coverage"].get<double>();
  CHECK(coverage >= 0.85);
  CHECK(coverage <= 0.95);
  // Every run is in a regime, and each regime with bounds says how it did without each model.
  for (const auto& run : doc["runs"]) CHECK(run.contains("regime"));
  // model/accuracy.json is what validate computes from these files now (scripts/update-accuracy.sh writes
  // it): a change that moves predictions must move the intervals with them.
  const auto shipped =
      nlohmann::json::parse(read_file(std::string(LAGOM_SOURCE_DIR) + "/model/accuracy.json"));
  const auto& now = doc["accuracy"]["regimes"];
  REQUIRE(shipped["regimes"].size() == now.size());
  for (std::size_t i = 0; i < now.size(); ++i) {
    const auto& a = shipped["regimes"][i];
    const auto& b = now[i];
    INFO(b["name"]);
    CHECK(a["name"] == b["name"]);
    CHECK(a["runs"] == b["runs"]);
    CHECK(a["data"] == b["data"]);
    for (const char* field : {"low_ratio", "high_ratio", "bias_pct", "mape_pct", "held_out_coverage"}) {
      INFO(field);
      REQUIRE(a[field].is_null() == b[field].is_null());
      if (!a[field].is_null()) CHECK(a[field].get<double>() == Approx(b[field].get<double>()).epsilon(1e-9));
    }
  }
}

TEST_CASE("a runs file's unknown column is refused even when every cell of it is empty", "[cli][validate]") {
  const std::string dir = temp_dir("validate-unknown-empty");
  const auto path =
      runs_file(dir, "model,cluster,gpus,global-batch,tpp,measured_iteration_s", "gpt2,dgx-a100,8,64,,1.0");
  const auto r = run_lagom({"validate", path});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("lagom: error: " + path + ":2: column 'tpp' (column 5): unknown") == 0);
  CHECK(r.out.empty());
  // calibrate reads runs files through the same reader.
  const auto c = run_lagom({"calibrate", path, "--cluster", "dgx-a100", "--out", dir + "/constants.json"});
  CHECK(c.exit_code == 2);
  CHECK(c.err.find("column 'tpp' (column 5): unknown") != std::string::npos);
}

TEST_CASE("planned columns are checked like any column, and only their non-default values are listed",
          "[cli][validate]") {
  const std::string dir = temp_dir("validate-planned");
  const std::string header =
      "model,cluster,gpus,global-batch,fp8-recipe,cuda-max-connections,nccl-nvls,"
      "fp8-amax-history,measured_iteration_s";
  struct Case {
    std::string row, expected;
  };
  for (const Case& c : std::vector<Case>{
           {"gpt2,dgx-a100,8,64,sometimes,,,,1.0",
            "column 'fp8-recipe' (column 5): 'sometimes' is not one of "
            "delayed | current | mxfp8 | blockwise"},
           {"gpt2,dgx-a100,8,64,,64,,,1.0",
            "column 'cuda-max-connections' (column 6): '64' is not an integer "
            "from 1 to 32"},
           {"gpt2,dgx-a100,8,64,,,maybe,,1.0",
            "column 'nccl-nvls' (column 7): 'maybe' is not one of on | off"},
           {"gpt2,dgx-a100,8,64,,,,-3,1.0", "column 'fp8-amax-history' (column 8): '-3' is not an integer"},
           {"gpt2,dgx-a100,8,64,,,,1e3,1.0",
            "column 'fp8-amax-history' (column 8): '1e3' is not an integer"}}) {
    const auto path = runs_file(dir, header, c.row);
    const auto r = run_lagom({"validate", path});
    INFO(c.row << " -> " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(path + ":3: " + c.expected) != std::string::npos);
  }
  const auto path = runs_file(dir, header, "gpt2,dgx-a100,8,64,delayed,8,off,2048,1.0");
  const auto v = run_lagom({"validate", path, "--json"});
  INFO(v.err);
  REQUIRE(v.exit_code == 0);
  const auto planned = nlohmann::json::parse(v.out)["runs"][0]["planned_ignored"];
  CHECK(planned == nlohmann::json::array({"nccl-nvls=off", "fp8-amax-history=2048"}));
}

TEST_CASE("a model or cluster name in a runs file is never read from the working directory",
          "[cli][validate]") {
  const std::string dir = temp_dir("validate-cwd");
  const std::string elsewhere = dir + "/runs";
  lagom::test::run("/bin/mkdir", {"-p", elsewhere});
  const auto spec = run_lagom({"presets", "--show", "gpt2", "--json"});
  REQUIRE(spec.exit_code == 0);
  // "mymodel" is in the working directory, not beside the runs file: it names no preset and no file there.
  write_file(dir + "/mymodel", spec.out);
  const auto path = runs_file(elsewhere, "model,cluster,gpus,global-batch,db,measured_iteration_s",
                              "mymodel,dgx-a100,8,64,,1.0");
  const std::string lagom = std::string(LAGOM_BIN_DIR) + "/lagom";
  const auto r =
      lagom::test::run("/bin/sh", {"-c", "cd '" + dir + "' && exec '" + lagom + "' validate runs/runs.csv"});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("runs/runs.csv:3: ") != std::string::npos);
  CHECK(r.err.find("mymodel") != std::string::npos);
  // The database column is a path of the runs file's folder too: lagom.db here is not read, the one there
  // is missing.
  lagom::test::run("/bin/cp", {"/dev/null", dir + "/lagom.db"});
  const auto with_db = runs_file(elsewhere, "model,cluster,gpus,global-batch,db,measured_iteration_s",
                                 "gpt2,dgx-a100,8,64,lagom.db,1.0");
  const auto d =
      lagom::test::run("/bin/sh", {"-c", "cd '" + dir + "' && exec '" + lagom + "' validate runs/runs.csv"});
  INFO(d.err);
  CHECK(d.exit_code == 2);
  CHECK(d.err.find("runs/lagom.db") != std::string::npos);
}

TEST_CASE("a runs file's column that cannot act on its row is priced and said, not silently ignored",
          "[cli][validate]") {
  // simulate refuses --schedule at pp 1 (inputs/flag_context.h); a measured row keeps what its job set,
  // so validate prices it as simulate would without it and names the column.
  const std::string dir = temp_dir("validate-no-effect");
  const auto path = runs_file(dir, "model,cluster,gpus,tp,global-batch,schedule,measured_iteration_s",
                              "llama3-8b,dgx-h100,64,2,512,gpipe,1.0");
  const auto v = run_lagom({"validate", path, "--json"});
  INFO(v.err);
  REQUIRE(v.exit_code == 0);
  const auto row = nlohmann::json::parse(v.out)["runs"][0];
  REQUIRE(row.contains("no_effect"));
  CHECK(row["no_effect"].get<std::string>().find("schedule") != std::string::npos);
  const auto sim = run_lagom({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "64",
                              "--tp", "2", "--global-batch", "512", "--json"});
  REQUIRE(sim.exit_code == 0);
  // As simulate prices it without the schedule (gpipe and 1f1b differ only in summation order at pp 1).
  CHECK(row["predicted_iteration_s"].get<double>() ==
        Approx(nlohmann::json::parse(sim.out)["iteration_time_s"].get<double>()).epsilon(1e-12));
  const auto human = run_lagom({"validate", path});
  CHECK(human.out.find(":3: no effect on this row:") != std::string::npos);
  // A row whose columns all act carries no such field.
  const auto plain = runs_file(dir, "model,cluster,gpus,tp,global-batch,measured_iteration_s",
                               "llama3-8b,dgx-h100,64,2,512,1.0");
  const auto p = run_lagom({"validate", plain, "--json"});
  REQUIRE(p.exit_code == 0);
  CHECK_FALSE(nlohmann::json::parse(p.out)["runs"][0].contains("no_effect"));
}
