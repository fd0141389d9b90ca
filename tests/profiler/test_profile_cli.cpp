// End-to-end: `lagom profile` and `lagom db` as users run them (mpirun, kill -9, netns cluster).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fcntl.h>
#include <map>
#include <set>
#include <signal.h>
#include <spawn.h>
#include <thread>
#include <tuple>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "db/database.h"
#include "lagom/build_info.h"
#include "profiler/fit.h"
#include "support/run.h"

extern char** environ;

using namespace lagom;
using test::read_file;
using test::run;
using test::run_lagom;
using test::temp_dir;

namespace {

const std::string k_lagom = std::string(LAGOM_BIN_DIR) + "/lagom";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

db::Database open_ro(const std::string& path) {
  auto database = db::Database::open(path, db::Database::Mode::read_only);
  REQUIRE(database.ok());
  return std::move(database).value();
}

// Fits each series on its even-indexed sizes and returns the relative time errors on the odd ones
// (out-of-place samples: the ones the stored fits use).
std::vector<double> held_out_errors(const std::vector<db::CommSample>& samples) {
  std::map<std::tuple<std::string, int, int>, std::vector<db::CommSample>> series;
  for (const auto& s : samples) {
    if (!s.in_place) series[{s.collective, s.ranks, s.nodes}].push_back(s);
  }
  std::vector<double> errors;
  for (const auto& [key, all] : series) {
    std::vector<std::int64_t> sizes;
    for (const auto& s : all) {
      if (std::find(sizes.begin(), sizes.end(), s.bytes) == sizes.end()) sizes.push_back(s.bytes);
    }
    std::sort(sizes.begin(), sizes.end());
    std::vector<db::CommSample> train, held;
    for (const auto& s : all) {
      const auto index = std::find(sizes.begin(), sizes.end(), s.bytes) - sizes.begin();
      (index % 2 == 0 ? train : held).push_back(s);
    }
    const auto fit = profiler::fit_collective_series(train);
    REQUIRE(fit.ok());
    for (const auto& s : held)
      errors.push_back(std::fabs(profiler::predict_time_us(fit.value(), s.bytes) - s.time_us) / s.time_us);
  }
  return errors;
}

}  // namespace

TEST_CASE(
    "mpirun -np 2 profile --backend mpi --suite comm --quick finishes fast and its fit predicts held-out "
    "sizes within 25%",
    "[profiler][mpi]") {
  const std::string db_path = temp_dir("mpi") + "/m.db";
  const auto start = std::chrono::steady_clock::now();
  const auto r = run("mpirun", {"--allow-run-as-root", "--oversubscribe", "-np", "2", k_lagom, "profile",
                                "--backend", "mpi", "--suite", "comm", "--quick", "--db", db_path});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(seconds <= 120.0);
  CHECK(r.out.find("# Collective test: allreduce  ranks 2  nodes 1") != std::string::npos);
  CHECK(r.out.find("#       size         count      type   redop    root     time   algbw   busbw  #wrong") !=
        std::string::npos);
  auto database = open_ro(db_path);
  const auto runs = database.list_runs().value();
  REQUIRE(runs.size() == 1);  // rank 1 wrote nothing
  CHECK(runs[0].status == "complete");
  CHECK(runs[0].ranks == 2);
  CHECK(runs[0].backend == "mpi");
  CHECK_FALSE(runs[0].mpi_version.empty());
  CHECK(runs[0].git_sha == build::k_git_sha);
  const auto samples = database.comm_samples(runs[0].id).value();
  CHECK(samples.size() == 7 * 11 * 2);  // seven collectives, 1K..1M, out-of-place and in-place
  for (const auto& s : samples) CHECK(s.wrong == 0);
  CHECK(database.fits(runs[0].id).value().collectives.size() == 7);
  const auto errors = held_out_errors(samples);
  INFO("median held-out relative error " << median(errors));
  // --quick times each size a few times on two ranks sharing two cores: a clean-clone CI run on this
  // project's 2-core machine, the test alone (RUN_SERIAL), measured 21.7% once where it is usually below
  // 20%; the bound leaves room for that noise and still fails a fit that misses the sizes' trend.
  CHECK(median(errors) < 0.25);
}

TEST_CASE("the interference suite under mpirun stores the co-run cases and the FlashOverlap kernel cases",
          "[profiler][mpi]") {
  const std::string db_path = temp_dir("overlap") + "/o.db";
  const auto r = run("mpirun", {"--allow-run-as-root", "--oversubscribe", "-np", "2", k_lagom, "profile",
                                "--backend", "mpi", "--suite", "interference", "--quick", "--db", db_path});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto database = open_ro(db_path);
  const auto runs = database.list_runs().value();
  REQUIRE(runs.size() == 1);
  const auto samples = database.overlap_samples(runs[0].id).value();
  std::vector<std::string> names;
  for (const auto& s : samples) {
    names.push_back(s.name);
    CHECK(s.gemm_alone_us > 0);
    CHECK(s.comm_alone_us > 0);
    if (s.name.find('/') != std::string::npos)
      CHECK(s.comm_overlap_us >= s.gemm_overlap_us);  // kernel makespan
  }
  for (const char* name : {"gemm+allreduce", "gemm+allgather", "ag-gemm/vanilla", "ag-gemm/slice:4",
                           "ag-gemm/flash", "gemm-rs/vanilla", "gemm-rs/slice:4", "gemm-rs/flash"}) {
    INFO(name);
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
}

TEST_CASE("a profile killed with SIGKILL leaves a sound database: earlier runs intact, its run incomplete",
          "[profiler]") {
  const std::string db_path = temp_dir("kill") + "/k.db";
  const auto first = run_lagom({"profile", "--backend", "cpu", "--quick", "--quiet", "--db", db_path});
  REQUIRE(first.exit_code == 0);
  std::size_t first_samples = 0;
  {
    auto database = open_ro(db_path);
    first_samples = database.compute_samples(1).value().size();
    REQUIRE(first_samples > 0);
  }
  // A full (not quick) cpu profile takes many seconds; kill it once it has written some samples.
  std::vector<std::string> args{k_lagom, "profile", "--backend", "cpu", "--quiet", "--db", db_path};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, k_lagom.c_str(), &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  bool started = false;
  for (int i = 0; i < 600 && !started; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto database = db::Database::open(db_path, db::Database::Mode::read_only);
    if (database.ok()) {
      const auto runs = database.value().list_runs();
      started =
          runs.ok() && runs.value().size() == 2 && database.value().compute_samples(2).value().size() >= 2;
    }
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(started);
  REQUIRE(WIFSIGNALED(status));

  auto database = db::Database::open(db_path, db::Database::Mode::read_write);
  REQUIRE(database.ok());
  CHECK(database.value().integrity_check().value() == "ok");
  const auto runs = database.value().list_runs().value();
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].status == "complete");
  CHECK(database.value().compute_samples(runs[0].id).value().size() == first_samples);
  CHECK(runs[1].status == "incomplete");
  const auto list = run_lagom({"db", "list", "--json", "--db", db_path});
  REQUIRE(list.exit_code == 0);
  const auto doc = nlohmann::json::parse(list.out).at("runs");
  REQUIRE(doc.size() == 2);
  CHECK(doc[1]["status"] == "incomplete");
  CHECK(doc[1]["finished_at"].is_null());
  const auto fit = run_lagom({"db", "fit", "2", "--db", db_path});
  CHECK(fit.exit_code == 2);
  CHECK(fit.err ==
        "lagom: error: db fit 2: the run is incomplete (interrupted); incomplete runs are never fitted\n");
}

TEST_CASE("a foreign or corrupt --db is exit 2 with a clear error and stays byte for byte unchanged",
          "[profiler]") {
  const std::string dir = temp_dir("foreign");
  const std::string text_path = dir + "/notes.txt";
  test::write_file(text_path, "not a database at all\n");
  const std::string lut = std::string(LAGOM_TEST_DATA_DIR) + "/vtrain/AR_GPU2_1M_1024M_LUT";
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"profile", "--backend", "cpu", "--quick", "--db", text_path},
                                             {"db", "list", "--db", text_path},
                                             {"db", "import", lut, "--db", text_path},
                                             {"db", "fit", "1", "--db", text_path}}) {
    const auto r = run_lagom(args);
    INFO(args[0] << " " << args[1]);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--db " + text_path +
                     ": not a Lagom database (not an SQLite file); the file was not modified\n") !=
          std::string::npos);
    CHECK(read_file(text_path) == "not a database at all\n");
  }
}

TEST_CASE("db import of the vTrain tables, then list, show, fit and export", "[profiler]") {
  const std::string db_path = temp_dir("import") + "/i.db";
  const std::string lut = std::string(LAGOM_TEST_DATA_DIR) + "/vtrain/AR_GPU8_1M_1024M_LUT";
  const auto imported = run_lagom({"db", "import", lut, "--db", db_path, "--json"});
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  const auto doc = nlohmann::json::parse(imported.out);
  CHECK(doc["run_id"] == 1);
  CHECK(doc["collective"] == "allreduce");
  CHECK(doc["ranks"] == 8);
  CHECK(doc["samples"] == 2048);
  const auto list =
      nlohmann::json::parse(run_lagom({"db", "list", "--json", "--db", db_path}).out).at("runs");
  REQUIRE(list.size() == 1);
  for (const char* field : {"id", "status", "backend", "host", "started_at", "finished_at"})
    CHECK(list[0].contains(field));
  CHECK(list[0]["status"] == "complete");
  CHECK(list[0]["backend"] == "import");
  const auto fit = run_lagom({"db", "fit", "1", "--json", "--db", db_path});
  REQUIRE(fit.exit_code == 0);
  const auto fits = nlohmann::json::parse(fit.out);
  REQUIRE(fits["collectives"].size() == 1);
  CHECK(fits["collectives"][0]["bus_bw_GBps"].get<double>() > 225.0);
  const auto exported = run_lagom({"db", "export", "1", "--format", "nccl-tests", "--db", db_path});
  REQUIRE(exported.exit_code == 0);
  CHECK(exported.out.find("# Collective test: allreduce  ranks 8  nodes 1") != std::string::npos);
  CHECK(exported.out.find("\n  1073741824     268435456     float     sum      -1") != std::string::npos);
  const auto csv = run_lagom({"db", "export", "1", "--format", "csv", "--db", db_path});
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("kind,collective,algo,proto,channels,ranks,nodes,bytes,count,", 0) == 0);
  const auto bad = run_lagom({"db", "export", "1", "--format", "xml", "--db", db_path});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "lagom: error: db export 1: --format xml: expected json, csv or nccl-tests\n");
  const auto missing = run_lagom({"db", "show", "9", "--db", db_path});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "lagom: error: db show 9: run 9: no such run in " + db_path + "\n");
}

TEST_CASE("the nccl backend without a GPU is a clear error, exit 2", "[profiler]") {
  const std::string db_path = temp_dir("nccl") + "/n.db";
  const auto r = run_lagom({"profile", "--backend", "nccl", "--quick", "--db", db_path});
  CHECK(r.exit_code == 2);
  if (std::string(build::k_cuda_version).empty()) {
    CHECK(r.err.rfind("lagom: error: profile: backend nccl: this lagom was built without CUDA", 0) == 0);
  } else if (r.exit_code == 0) {
    SUCCEED("a GPU is present");
  } else {
    CHECK(r.err.rfind("lagom: error: profile: backend nccl: no GPU found (", 0) == 0);
  }
  CHECK(read_file(db_path).empty());  // nothing was written
}

TEST_CASE("lagom itself links no CUDA, cuBLAS or NCCL library", "[profiler]") {
  const auto r = run("ldd", {k_lagom});
  REQUIRE(r.exit_code == 0);
  for (const char* library : {"libcudart", "libcublas", "libnccl", "libcuda."}) {
    INFO(library);
    CHECK(r.out.find(library) == std::string::npos);
  }
}

TEST_CASE(
    "on a netns cluster with a 1 Gbit/s link the fitted inter-node bandwidth is within 10% of the shaped "
    "rate",
    "[profiler][netns]") {
  const std::string script = std::string(LAGOM_SOURCE_DIR) + "/scripts/netns-cluster.sh";
  const auto check = run("bash", {script, "check"});
  if (check.exit_code == 77) {
    WARN("skipped: " << check.err);
    return;
  }
  REQUIRE(check.exit_code == 0);
  const std::string prefix = "lgt" + std::to_string(getpid() % 10000);
  const std::string subnet = "10.213." + std::to_string(100 + getpid() % 100);
  const auto up = run("bash", {script, "up", "--prefix", prefix, "--subnet", subnet, "--rate", "1gbit"});
  INFO(up.err);
  REQUIRE(up.exit_code == 0);
  struct Down {  // the namespaces go down however the test ends (a failed REQUIRE included)
    std::string script, prefix;
    ~Down() { run("bash", {script, "down", "--prefix", prefix}); }
  } down{script, prefix};
  // Broadcast over 2 ranks moves each byte once over the link in one direction: busbw = link goodput.
  // 4M..32M: sizes where the link's rate, not the per-call cost of TCP under a loaded scheduler (~20 ms
  // seen at 1M with two busy processes beside the test), decides the time. A run too noisy for its fit to
  // mean anything (3σ > 10%: seen once with two test suites and a build sharing 2 cores) is measured again,
  // once, on a fresh database; the assertions hold the last run.
  double sigma = 1.0, deviation = 1.0, fitted = 0.0;
  for (int attempt = 0; attempt < 2 && 3 * sigma > 0.10; ++attempt) {
    const std::string db_path = temp_dir("netns") + "/n" + std::to_string(attempt) + ".db";
    const std::vector<std::string> profile = {
        k_lagom,     "profile",     "--backend", "mpi",  "--suite", "comm",        "--quiet", "--collectives",
        "broadcast", "--min-bytes", "4M",        "--db", db_path,   "--max-bytes", "32M"};
    std::vector<std::string> args = {script, "run", "--prefix", prefix, "--"};
    args.insert(args.end(), profile.begin(), profile.end());
    const auto r = run("bash", args);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    auto database = open_ro(db_path);
    const auto runs = database.list_runs().value();
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].nodes == 2);
    const auto fits = database.fits(runs[0].id).value();
    REQUIRE(fits.collectives.size() == 1);
    CHECK(fits.collectives[0].nodes == 2);
    // 1 Gbit/s = 0.125 GB/s (core/units.h gbit_to_GBps). The assertion is stated with the fit's own
    // uncertainty: the rate lies within three standard errors of the fitted bandwidth (and within 5% when
    // the fit is that precise), and the fit must be precise enough for that to mean something (3σ ≤ 10%).
    std::vector<double> x, y;
    const auto samples = database.comm_samples(runs[0].id).value();
    for (const auto& s : samples) {
      if (s.in_place) continue;
      x.push_back(static_cast<double>(s.bytes));
      y.push_back(s.time_us);
    }
    const auto line = profiler::fit_relative_line(x, y);
    REQUIRE(line.ok());
    sigma = line.value().slope_rel_stderr;
    fitted = fits.collectives[0].bus_bw_GBps;
    deviation = fitted / 0.125 - 1.0;
  }
  INFO("fitted " << fitted << " GB/s, " << 100 * deviation << "% off the shaped rate, slope σ " << 100 * sigma
                 << "%");
  CHECK(3 * sigma <= 0.10);
  CHECK(std::fabs(deviation) <= std::max(0.05, 3 * sigma));
}

namespace {

// Runs `script` (bash) in a private mount namespace where `<dir>/ro` is `<dir>/src` bound read-only, as a
// shared calibration on a read-only mount is. 77: the machine does not allow it (no mount namespace).
test::RunResult in_read_only_mount(const std::string& dir, const std::string& script) {
  return run("unshare", {"-m", "bash", "-c",
                         "mount --bind " + dir + "/src " + dir + "/ro && mount -o remount,ro,bind " + dir +
                             "/ro || exit 77; " + script});
}

}  // namespace

TEST_CASE(
    "a profile database on a read-only mount can be listed, shown, exported and used, and a write says why",
    "[profiler][db]") {
  const std::string dir = temp_dir("readonly");
  REQUIRE(run("mkdir", {"-p", dir + "/src", dir + "/ro"}).exit_code == 0);
  const auto made = run_lagom(
      {"profile", "--backend", "cpu", "--suite", "compute", "--quick", "--quiet", "--db", dir + "/src/p.db"});
  REQUIRE(made.exit_code == 0);
  const std::string before = read_file(dir + "/src/p.db");
  const std::string db = dir + "/ro/p.db";
  const auto r = in_read_only_mount(
      dir, k_lagom + " db list --db " + db + " && " + k_lagom + " db show 1 --db " + db + " >/dev/null && " +
               k_lagom + " db export 1 --format json --db " + db + " >/dev/null && " + k_lagom +
               " cost --gemm 1024,1024,1024 --precision fp32 --cluster localhost --db " + db +
               " >/dev/null; echo read=$?; " + k_lagom +
               " profile --backend cpu --suite compute --quick --quiet --db " + db + "; echo write=$?");
  if (r.exit_code == 77) {
    WARN("skipped: no mount namespace here: " << r.err);
    return;
  }
  INFO(r.out << r.err);
  CHECK(r.out.find("read=0") != std::string::npos);
  CHECK(r.out.find("write=2") != std::string::npos);
  CHECK(r.err.find("lagom: error: profile: --db " + db + ": cannot be written: its directory") !=
        std::string::npos);
  CHECK(r.err.find("Read-only file system") != std::string::npos);
  CHECK(read_file(dir + "/src/p.db") == before);  // untouched
}

TEST_CASE("reading a profile database leaves no -wal or -shm file beside it", "[profiler][db]") {
  const std::string dir = temp_dir("nowal");
  const std::string db = dir + "/p.db";
  REQUIRE(run_lagom({"profile", "--backend", "cpu", "--suite", "compute", "--quick", "--quiet", "--db", db})
              .exit_code == 0);
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"db", "list", "--db", db}, {"db", "show", "1", "--db", db}}) {
    CHECK(run_lagom(args).exit_code == 0);
    CHECK(run("test", {"-e", db + "-wal"}).exit_code != 0);
    CHECK(run("test", {"-e", db + "-shm"}).exit_code != 0);
  }
}

TEST_CASE("the suite name overlap is the interference suite's earlier name and still accepted",
          "[profiler]") {
  const std::string db_path = temp_dir("alias") + "/a.db";
  const auto r = run_lagom({"profile", "--backend", "cpu", "--suite", "overlap", "--quick", "--db", db_path});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--suite overlap: backend cpu has no interference suite") != std::string::npos);
  const auto unknown =
      run_lagom({"profile", "--backend", "cpu", "--suite", "overlaps", "--quick", "--db", db_path});
  CHECK(unknown.err.find("unknown suite (all, compute, comm, interference)") != std::string::npos);
}

TEST_CASE("mpirun profile --records: every rank writes one record per timed call, imported once, fitted",
          "[profiler][mpi]") {
  const std::string dir = temp_dir("mpi-records");
  const std::string records_dir = dir + "/records";
  REQUIRE(run("/bin/mkdir", {"-p", records_dir}).exit_code == 0);
  const std::string db_path = dir + "/m.db";
  const auto r = run("mpirun", {"--allow-run-as-root", "--oversubscribe", "-np", "2", k_lagom, "profile",
                                "--backend", "mpi", "--suite", "comm", "--quick", "--collectives",
                                "allreduce,allgather", "--db", db_path, "--records", records_dir});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto imported = run_lagom({"db", "--db", db_path, "import", records_dir, "--json"});
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  const auto doc = nlohmann::json::parse(imported.out);
  CHECK(doc["files"] == 2);  // one per rank
  const std::int64_t records = doc["records"].get<std::int64_t>();
  CHECK(doc["added"] == records);
  const std::int64_t run_id = doc["run_id"].get<std::int64_t>();
  auto database = open_ro(db_path);
  const auto stored = database.production_records(run_id).value();
  REQUIRE(static_cast<std::int64_t>(stored.size()) == records);
  std::map<int, int> per_rank;
  for (const auto& rec : stored) {
    ++per_rank[rec.rank];
    CHECK(rec.source.view() == "mpi");
    CHECK(rec.clock.view() == "host");
    CHECK(rec.n_ranks == 2);
    CHECK(rec.comm_hash == stored[0].comm_hash);  // one communicator
    CHECK(rec.end_ns > rec.start_ns);
    CHECK(rec.bytes == rec.count * 4);
    // The sweep's sizes are powers of two from 1 KiB (nccl-tests' meaning); an allgather record carries one
    // rank's share of it, half of that on two ranks.
    const std::uint64_t sweep_size = rec.collective.view() == "allgather" ? rec.bytes * 2 : rec.bytes;
    CHECK(sweep_size >= 1024);
    CHECK((sweep_size & (sweep_size - 1)) == 0);
  }
  CHECK(per_rank.size() == 2);
  CHECK(per_rank[0] == per_rank[1]);  // every rank times the same calls
  // The profile's timed calls, all of them: sum over samples of the batches' calls is at least 11 sizes x
  // 2 placements x 2 collectives x 7 rounds per rank.
  CHECK(per_rank[0] >= 11 * 2 * 2 * 7);
  // Importing again adds nothing.
  const auto again = run_lagom({"db", "--db", db_path, "import", records_dir, "--json"});
  REQUIRE(again.exit_code == 0);
  CHECK(nlohmann::json::parse(again.out)["added"] == 0);
  CHECK(nlohmann::json::parse(again.out)["run_id"].is_null());
  // A production run fits like a profile run.
  const auto fitted = run_lagom({"db", "--db", db_path, "fit", std::to_string(run_id), "--json"});
  INFO(fitted.err);
  REQUIRE(fitted.exit_code == 0);
  const auto fits = nlohmann::json::parse(fitted.out);
  std::set<std::string> collectives;
  for (const auto& f : fits["collectives"]) {
    collectives.insert(f["collective"].get<std::string>());
    CHECK(f["bus_bw_GBps"].get<double>() > 0);
  }
  CHECK(collectives == std::set<std::string>{"allgather", "allreduce"});
}

TEST_CASE("profile --records needs the mpi backend's comm suite and an existing folder", "[profiler]") {
  const std::string dir = temp_dir("records-flags");
  const auto cpu =
      run_lagom({"profile", "--backend", "cpu", "--quick", "--db", dir + "/x.db", "--records", dir});
  CHECK(cpu.exit_code == 2);
  CHECK(cpu.err ==
        "lagom: error: profile: --records " + dir +
            ": records are written by the mpi backend's comm suite (--backend mpi --suite comm or all)\n");
}

TEST_CASE("mpirun profile --replay measures the collectives and sizes of a tune's op classes, and no others",
          "[profiler][mpi]") {
  const std::string dir = temp_dir("mpi-replay");
  const auto tuned =
      run_lagom({"tune", "--model", "gpt2", "--cluster", "dgx-h100", "--gpus", "2", "--global-batch", "8",
                 "--bucket-mb", "25", "--out", dir + "/tuned", "--quiet"});
  INFO(tuned.err);
  REQUIRE(tuned.exit_code == 0);
  const std::string config = dir + "/tuned/lagom-config.json";
  std::set<std::pair<std::string, std::int64_t>> classes;
  const auto tuned_config = nlohmann::json::parse(read_file(config));
  for (const auto& op : tuned_config["ops"]) {
    classes.insert({op["collective"].get<std::string>(), op["bytes"].get<std::int64_t>()});
  }
  REQUIRE(classes.size() >= 2);
  const auto r = run("mpirun", {"--allow-run-as-root", "--oversubscribe", "-np", "2", k_lagom, "profile",
                                "--backend", "mpi", "--suite", "comm", "--quick", "--quiet", "--replay",
                                config, "--db", dir + "/r.db", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::set<std::pair<std::string, std::int64_t>> measured;
  const auto profile = nlohmann::json::parse(r.out);
  for (const auto& s : profile["comm"]) {
    measured.insert({s["collective"].get<std::string>(), s["bytes"].get<std::int64_t>()});
  }
  CHECK(measured == classes);

  // The config decides the sweep: a size range or collectives beside it is an error that says so.
  const auto both = run_lagom({"profile", "--backend", "cpu", "--replay", config, "--min-bytes", "1K"});
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("--replay measures the config's op classes: not with --min-bytes") !=
        std::string::npos);
  const auto missing = run_lagom({"profile", "--backend", "cpu", "--replay", dir + "/none.json"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("--replay") != std::string::npos);
}
