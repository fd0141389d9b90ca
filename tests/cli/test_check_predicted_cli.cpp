// `lagom check --predicted`: production records (imported with `lagom db import`) against a tune's
// op-class predictions. The config is written by hand here so that every expected number follows from it.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "records/record.h"
#include "support/run.h"

using lagom::test::run_lagom;

namespace {

// Two allreduce classes (1 MiB, 16 MiB) and one allgather class (8 MiB) on 2 ranks of 1 node, as
// `lagom tune` writes them (search/outputs.cpp); the allreduce bins split at 1 MiB + (16 − 1) MiB / 2.
const char* k_config = R"json({"search": "exhaustive", "model": "m", "cluster": "c", "ops": [
  {"name": "dp.allreduce.1M", "collective": "allreduce", "group": "dp", "bytes": 1048576, "ranks": 2,
   "nodes": 1, "count": 10, "algo": "ring", "proto": "simple", "channels": 4, "threads": 512,
   "chunk_bytes": 0, "scope": "per call (tuner)", "predicted_time_us": 100.0},
  {"name": "dp.allreduce.16M", "collective": "allreduce", "group": "dp", "bytes": 16777216, "ranks": 2,
   "nodes": 1, "count": 2, "algo": "ring", "proto": "ll128", "channels": 8, "threads": 512,
   "chunk_bytes": 0, "scope": "per call (tuner)", "predicted_time_us": 1000.0},
  {"name": "tp.allgather.8M", "collective": "allgather", "group": "tp", "bytes": 8388608, "ranks": 2,
   "nodes": 1, "count": 4, "algo": "ring", "proto": "simple", "channels": 2, "threads": 512,
   "chunk_bytes": 0, "scope": "per call (tuner)", "predicted_time_us": 500.0}]})json";
const char* k_tuner_conf =
    "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff\n"
    "allgather,0,-1,ring,simple,2,1,2,-1,-1\n"
    "allreduce,0,8912896,ring,simple,4,1,2,-1,-1\n"
    "allreduce,8912897,-1,ring,ll128,8,1,2,-1,-1\n";

struct Writer {
  std::string text;
  std::uint64_t seq = 0;
  void add(const char* collective, std::uint64_t bytes, double duration_us, const char* algo = "ring",
           lagom::records::Kind kind = lagom::records::Kind::collective) {
    lagom::records::Record r;
    r.kind = kind;
    if (kind == lagom::records::Kind::p2p) r.peer = 1;  // a send's peer rank (docs/records.md)
    r.source.set("nccl");
    r.host.set("node-1");
    r.pid = 10;
    r.comm_hash = 0xfeed;
    r.n_ranks = 2;
    r.n_nodes = 1;
    r.collective.set(collective);
    r.dtype.set("float32");
    r.count = bytes / 4;
    r.bytes = bytes;
    r.algorithm.set(algo);
    r.protocol.set("simple");
    r.channels = 4;
    r.seq = seq++;
    r.clock.set("gpu");
    r.start_ns = static_cast<std::int64_t>(r.seq) * 10'000'000;
    r.end_ns = r.start_ns + static_cast<std::int64_t>(duration_us * 1000);
    char line[lagom::records::k_max_line_bytes];
    text.append(line, lagom::records::format_record(r, line, sizeof line));
  }
};

struct Setup {
  std::string dir = lagom::test::temp_dir("check-predicted");
  std::string config = dir + "/out/lagom-config.json";
  std::string db = dir + "/prod.db";
  Setup() {
    lagom::test::run("/bin/mkdir", {"-p", dir + "/out", dir + "/records"});
    lagom::test::write_file(config, k_config);
    lagom::test::write_file(dir + "/out/nccl_tuner.conf", k_tuner_conf);
  }
  // Imports `records` as a new production run; returns its id.
  std::int64_t import(const Writer& records, const std::string& name) {
    const std::string file = dir + "/records/" + name + ".jsonl";
    lagom::test::write_file(file, records.text);
    const auto r = run_lagom({"db", "--db", db, "import", file, "--json"});
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out).at("run_id").get<std::int64_t>();
  }
};

}  // namespace

TEST_CASE("check --predicted names the op class that drifted and the tuner rule that applied to it",
          "[cli]") {
  Setup s;
  Writer w;
  for (int i = 0; i < 5; ++i) w.add("allreduce", 1048576, 100 + i);  // median 102: +2%
  w.add("allreduce", 2097152, 101);  // 2 MiB: in the 1 MiB class's bin, twice its size: never judged
  for (int i = 0; i < 5; ++i) w.add("allreduce", 16777216, 1500);  // +50%
  w.add("allgather", 4194304, 510);  // one rank's 4 MiB: nccl-tests' 8 MiB; 2 records are too few
  w.add("allgather", 4194304, 520);
  w.add("send", 4096, 3, "", lagom::records::Kind::p2p);  // no op class
  w.add("alltoall", 4096, 3);                             // no op class
  const std::int64_t run = s.import(w, "drift");

  const auto r = run_lagom({"check", "--predicted", s.config, "--db", s.db, "--run", std::to_string(run)});
  CHECK(r.exit_code == 1);
  CHECK(r.err ==
        "lagom: error: check: 1 op class(es) drifted beyond 5%: dp.allreduce.16M (+50.0%, rule "
        "nccl_tuner.conf:4 "
        "ring/ll128/8 [8912897..])\n");
  CHECK(r.out.find("15 records, 3 matched no op class; tolerance 5%") != std::string::npos);

  const auto j =
      run_lagom({"check", "--predicted", s.config, "--db", s.db, "--run", std::to_string(run), "--json"});
  CHECK(j.exit_code == 1);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["passed"] == false);
  CHECK(doc["records"] == 15);
  CHECK(doc["unmatched"] == 3);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& op : doc["op_classes"]) by_name[op["name"].get<std::string>()] = op;
  CHECK(by_name["dp.allreduce.1M"]["status"] == "ok");
  CHECK(by_name["dp.allreduce.1M"]["records"] == 5);
  CHECK(by_name["dp.allreduce.1M"]["measured_time_us"].get<double>() == Approx(102));
  CHECK(by_name["dp.allreduce.1M"]["rule"]["line"] == 3);
  CHECK(by_name["dp.allreduce.1M"]["rule"]["max_bytes"] == 8912896);
  CHECK(by_name["dp.allreduce.1M"]["ran"] == "ring/simple");
  CHECK(by_name["dp.allreduce.16M"]["status"] == "drift");
  CHECK(by_name["dp.allreduce.16M"]["delta_pct"].get<double>() == Approx(50));
  CHECK(by_name["dp.allreduce.16M"]["rule"]["max_bytes"].is_null());
  CHECK(by_name["tp.allgather.8M"]["status"] == "few records");
  CHECK(by_name["tp.allgather.8M"]["rule"]["line"] == 2);

  // A wider tolerance passes: exit 0.
  const auto wide = run_lagom(
      {"check", "--predicted", s.config, "--db", s.db, "--run", std::to_string(run), "--tolerance", "60%"});
  CHECK(wide.exit_code == 0);
}

TEST_CASE("check --predicted refuses --junit, which it would not write", "[cli]") {
  Setup s;
  Writer w;
  w.add("allreduce", 1048576, 100);
  const std::int64_t run = s.import(w, "junit");
  const std::string junit = s.dir + "/p.xml";
  const auto r = run_lagom(
      {"check", "--predicted", s.config, "--db", s.db, "--run", std::to_string(run), "--junit", junit});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "lagom: error: check: --predicted excludes --junit\n");
  CHECK_FALSE(std::filesystem::exists(junit));
}

TEST_CASE("check --predicted refuses a run that is not a production run and a metric tolerance", "[cli]") {
  Setup s;
  Writer w;
  w.add("allreduce", 1048576, 100);
  const std::int64_t run = s.import(w, "one");
  const auto metric = run_lagom({"check", "--predicted", s.config, "--db", s.db, "--run", std::to_string(run),
                                 "--tolerance", "busbw_GBps=3"});
  CHECK(metric.exit_code == 2);
  CHECK(metric.err ==
        "lagom: error: check: --tolerance busbw_GBps=3: with --predicted, one percentage from 0 to 1000 "
        "(e.g. 10 or "
        "10%)\n");
  const auto missing = run_lagom({"check", "--predicted", s.config, "--db", s.db, "--run", "99"});
  CHECK(missing.exit_code == 2);
  const auto no_run = run_lagom({"check", "--predicted", s.config, "--db", s.db});
  CHECK(no_run.exit_code == 2);
  const auto both = run_lagom({"check", "--predicted", s.config, "--baseline", "a.json", "--run", "1"});
  CHECK(both.exit_code == 2);
  const auto bad_config =
      run_lagom({"check", "--predicted", s.db, "--db", s.db, "--run", std::to_string(run)});
  CHECK(bad_config.exit_code == 2);
}
