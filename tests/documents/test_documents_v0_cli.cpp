// Documents written by the release before documents carried `kind` and `version` (version 0, recorded by
// that release's lagom into tests/data/documents/v0/, README.md there) are still read by every command
// that reads documents: check, report, adapt, check --predicted and simulate --comm-config.
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::run_lagom;

namespace {

const std::string k_v0 = std::string(LAGOM_TEST_DATA_DIR) + "/documents/v0";

// The flags record.sh wrote simulate.json, tune.json and tune-out/ with.
const std::vector<std::string> k_small{"--model",       "gpt2", "--cluster",      "a40-pcie-ib100",
                                       "--gpus",        "16",   "--zero",         "3",
                                       "--micro-batch", "2",    "--global-batch", "32"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(lagom::test::read_file(path));
}

// The version-1 twin of a version-0 document: the same content with the `kind` and `version` a document
// carries today, written to `path`. What a command reads from the two must be the same, bit for bit.
void write_v1_twin(const std::string& v0_path, const char* kind, const std::string& path) {
  nlohmann::json doc = read_json(v0_path);
  doc["kind"] = kind;
  doc["version"] = 1;
  lagom::test::write_file(path, doc.dump());
}

// A copy of the recorded tune folder (adapt may rewrite the files it follows).
std::string copy_of_tune_out(const std::string& tag) {
  const std::string dir = lagom::test::temp_dir(tag) + "/tune-out";
  std::filesystem::copy(k_v0 + "/tune-out", dir, std::filesystem::copy_options::recursive);
  return dir;
}

}  // namespace

TEST_CASE("check compares version-0 documents with themselves and with the documents written today",
          "[documents]") {
  for (const char* name : {"simulate.json", "tune.json", "tune-out/lagom-config.json", "profile.json"}) {
    INFO(name);
    const auto r =
        run_lagom({"check", "--baseline", k_v0 + "/" + name, "--current", k_v0 + "/" + name, "--json"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc.at("kind") == "check");
    CHECK(doc.at("version") == 1);
  }
  // A version-0 baseline against its version-1 twin: every metric read alike, so no tolerance is needed.
  const std::string dir = lagom::test::temp_dir("documents-v0-check");
  write_v1_twin(k_v0 + "/simulate.json", "simulate", dir + "/twin.json");
  const auto twin = run_lagom({"check", "--baseline", k_v0 + "/simulate.json", "--current",
                               dir + "/twin.json", "--tolerance", "0", "--json"});
  INFO(twin.out + twin.err);
  REQUIRE(twin.exit_code == 0);
  CHECK(nlohmann::json::parse(twin.out).at("metrics").size() == 15);  // every metric, none skipped
  // The same prediction today: a version-0 baseline against a version-1 current passes. The model has
  // moved since the baseline was recorded (issue 26, by session 22: +6.1% on this iteration, +7.8% on its
  // compute, +5.0% on its exposed communication), so within a tolerance that holds that move and no more.
  const auto now = run_lagom(with(with({"simulate"}, k_small), {"--json", "--quiet"}));
  REQUIRE(now.exit_code == 0);
  lagom::test::write_file(dir + "/now.json", now.out);
  const auto r = run_lagom(
      {"check", "--baseline", k_v0 + "/simulate.json", "--current", dir + "/now.json", "--tolerance", "8"});
  INFO(r.out + r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("report draws a page of every version-0 document kind it reads", "[documents]") {
  const std::string out = lagom::test::temp_dir("documents-v0-report") + "/page.html";
  const auto r = run_lagom({"report", k_v0 + "/simulate.json", k_v0 + "/explore.json", k_v0 + "/tune.json",
                            k_v0 + "/tune-out/lagom-config.json", k_v0 + "/profile.json",
                            k_v0 + "/validate.json", k_v0 + "/check.json", "--out", out, "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> kinds;
  const auto listing = nlohmann::json::parse(r.out);
  for (const auto& s : listing.at("sections")) kinds.push_back(s.at("kind"));
  CHECK(kinds ==
        std::vector<std::string>{"simulate", "explore", "tune", "tune", "profile", "validate", "check"});
}

TEST_CASE("simulate --comm-config, check --predicted and adapt --once read a version-0 lagom-config.json",
          "[documents]") {
  const std::string config = k_v0 + "/tune-out/lagom-config.json";
  const auto tuned = read_json(k_v0 + "/tune.json");
  const auto sim =
      run_lagom(with(with({"simulate"}, k_small), {"--comm-config", config, "--json", "--quiet"}));
  INFO(sim.err);
  REQUIRE(sim.exit_code == 0);
  // The tune's prediction, reproduced from its file up to what the model has moved since it was recorded
  // (issue 26: the ring's pipeline fill +4.3%, then +5.4% by session 21, and +6.1% once a collective slows
  // the layer's whole mix of kernels, session 22; exact before that, scripts/predictions.sh).
  const double from_v0 = nlohmann::json::parse(sim.out).at("iteration_time_s").get<double>();
  CHECK(from_v0 == Approx(tuned.at("predicted_iteration_time_s").get<double>()).epsilon(0.07));

  const std::string dir = lagom::test::temp_dir("documents-v0-predicted");
  // Exactly what its version-1 twin gives: the version-0 file is read as today's is.
  write_v1_twin(config, "lagom-config", dir + "/twin.json");
  const auto sim_twin = run_lagom(
      with(with({"simulate"}, k_small), {"--comm-config", dir + "/twin.json", "--json", "--quiet"}));
  INFO(sim_twin.err);
  REQUIRE(sim_twin.exit_code == 0);
  CHECK(nlohmann::json::parse(sim_twin.out).at("iteration_time_s").get<double>() == from_v0);
  // One record of no op class (3 ranks): every op class has "no records", and the check passes.
  lagom::test::write_file(dir + "/one.jsonl",
                          R"({"version":1,"kind":"collective","source":"nccl","host":"node1",)"
                          R"("pid":4242,"comm_hash":"0xabcdef0123456789","rank":0,"n_ranks":3,)"
                          R"("n_nodes":1,"collective":"allreduce","count":1048576,)"
                          R"("dtype":"bfloat16","bytes":2097152,"algorithm":"ring",)"
                          R"("protocol":"simple","channels":8,"seq":17,"peer":-1,"clock":"gpu",)"
                          R"("start_ns":1733057000123456789,"end_ns":1733057000123789012})"
                          "\n");
  REQUIRE(run_lagom({"db", "import", dir + "/one.jsonl", "--db", dir + "/prod.db", "--quiet"}).exit_code ==
          0);
  const auto predicted =
      run_lagom({"check", "--predicted", config, "--db", dir + "/prod.db", "--run", "1", "--json"});
  INFO(predicted.err);
  REQUIRE(predicted.exit_code == 0);
  const auto doc = nlohmann::json::parse(predicted.out);
  CHECK(doc.at("kind") == "check-predicted");
  CHECK(doc.at("op_classes").size() == read_json(config).at("ops").size());

  const std::string out = copy_of_tune_out("documents-v0-adapt");
  const std::string records = lagom::test::temp_dir("documents-v0-records");
  const auto adapt = run_lagom({"adapt", "--watch", records, "--config", out, "--once", "--json"});
  INFO(adapt.err);
  REQUIRE(adapt.exit_code == 0);
  CHECK(nlohmann::json::parse(adapt.out).at("kind") == "adapt");
}

TEST_CASE("the version-0 check and check --predicted documents are told by their fields", "[documents]") {
  // check's `kind` named the kind it compared; check --predicted's was "predicted". Both are still read
  // as what they are (report draws the first; nothing reads the second but the detector must not misread
  // it as a tune).
  const std::string out = lagom::test::temp_dir("documents-v0-check-doc") + "/page.html";
  const auto r = run_lagom({"report", k_v0 + "/check-predicted.json", "--out", out});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("not a document lagom report reads") != std::string::npos);
}
