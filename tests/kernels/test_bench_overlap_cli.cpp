#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::run;
using lagom::test::run_lagom;

TEST_CASE("bench-overlap --json reports the contract's fields and a correct result", "[kernels]") {
  const auto r =
      run_lagom({"bench-overlap", "--kernel", "gemm-rs", "--method", "flash", "--m", "70", "--n", "33", "--k",
                 "50", "--ranks", "3", "--reps", "2", "--executor", "threads", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  for (const char* field :
       {"compute_us", "comm_us", "overlapped_us", "exposed_comm_us", "overlap_efficiency", "max_abs_error",
        "correct", "predicted_overlapped_us", "shape", "method", "ranks", "executor"}) {
    INFO(field);
    CHECK(doc.contains(field));
  }
  CHECK(doc["correct"] == true);
  CHECK(doc["executor"] == "threads");
  CHECK(doc["ranks"] == 3);
  CHECK(doc["method"] == "flash");
  CHECK(doc["shape"]["k_pad"] == 51);  // k split over 3 ranks: padded from 50
  CHECK(doc["max_rel_error"].get<double>() <= 1e-5);
}

TEST_CASE("bench-overlap prints a table whose non-data lines start with #", "[kernels]") {
  const auto r = run_lagom({"bench-overlap", "--kernel", "ag-gemm", "--method", "slice:2", "--m", "32", "--n",
                            "32", "--k", "32", "--reps", "1", "--executor", "threads", "--quiet"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("# bench-overlap: ag-gemm slice:2, ", 0) == 0);
  CHECK(r.out.find("\ncorrect ") != std::string::npos);
  CHECK(r.out.find("\noverlapped_us ") != std::string::npos);
}

TEST_CASE("bench-overlap rejects bad input with exit 2", "[kernels]") {
  auto r = run_lagom(
      {"bench-overlap", "--kernel", "ag-gemm", "--method", "ring", "--m", "8", "--n", "8", "--k", "8"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "lagom: error: --method: 'ring' is not none, slice:K (K from 2 to 4096), flash or te\n");
  r = run_lagom(
      {"bench-overlap", "--kernel", "ag-gemm", "--method", "flash", "--m", "0", "--n", "8", "--k", "8"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "lagom: error: bench-overlap: --m must be at least 1\n");
  r = run_lagom({"bench-overlap", "--kernel", "ag-gemm", "--method", "flash", "--m", "8", "--n", "8", "--k",
                 "8", "--executor", "tpu"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "lagom: error: bench-overlap: --executor: 'tpu' is not one of auto, threads, mpi, cuda\n");
}

TEST_CASE("bench-overlap --executor cuda without a GPU is a clear error with exit 2", "[kernels]") {
  // CI machines have no GPU; LAGOM_TEST_HAS_GPU=1 marks one that does (the run must then succeed).
  const char* has_gpu = std::getenv("LAGOM_TEST_HAS_GPU");
  const auto r = run_lagom({"bench-overlap", "--kernel", "ag-gemm", "--method", "flash", "--m", "64", "--n",
                            "64", "--k", "64", "--reps", "1", "--executor", "cuda", "--json"});
  if (has_gpu != nullptr && std::string(has_gpu) == "1") {
    CHECK(r.exit_code == 0);
  } else {
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("lagom: error: bench-overlap: --executor cuda: ", 0) == 0);
  }
}

TEST_CASE("bench-overlap runs on two MPI ranks and only rank 0 prints", "[kernels][mpi]") {
  for (const char* kernel : {"ag-gemm", "gemm-rs", "a2a"}) {
    INFO(kernel);
    const auto r = run(LAGOM_MPIEXEC, {"--allow-run-as-root",
                                       "--oversubscribe",
                                       "-np",
                                       "2",
                                       std::string(LAGOM_BIN_DIR) + "/lagom",
                                       "bench-overlap",
                                       "--kernel",
                                       kernel,
                                       "--method",
                                       "flash",
                                       "--m",
                                       "96",
                                       "--n",
                                       "40",
                                       "--k",
                                       "72",
                                       "--reps",
                                       "2",
                                       "--quiet",
                                       "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find('\n') == r.out.size() - 1);  // exactly one line: one JSON document
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["executor"] == "mpi");
    CHECK(doc["ranks"] == 2);
    CHECK(doc["correct"] == true);
  }
}

TEST_CASE("bench-overlap under mpirun refuses a --ranks that differs from the processes", "[kernels][mpi]") {
  const auto r =
      run(LAGOM_MPIEXEC, {"--allow-run-as-root", "--oversubscribe", "-np", "2",
                          std::string(LAGOM_BIN_DIR) + "/lagom", "bench-overlap", "--kernel", "ag-gemm",
                          "--method", "vanilla", "--m", "8", "--n", "8", "--k", "8", "--ranks", "3"});
  CHECK(r.exit_code != 0);
  CHECK(
      r.err.find("lagom: error: bench-overlap: --ranks 3 differs from the 2 MPI processes (leave --ranks out "
                 "under mpirun)\n") != std::string::npos);
}

// A login node's memory limit refuses threads (each a stack mapping), their malloc arenas and buffers
// somewhere; wherever that is (a rank's thread, a rank's communication thread, the buffers), bench-overlap
// says why with an error, never a signal, std::terminate or "another rank failed" alone. The sweep starts
// at the smallest address-space limit under which lagom starts at all (the dynamic loader's own failure is
// not lagom's to report) and rises geometrically to 16 GiB, past the point where the whole run fits.
TEST_CASE(
    "bench-overlap under any address-space limit ends with a result or an error naming why, never a crash",
    "[kernels]") {
  const std::string lagom = std::string(LAGOM_BIN_DIR) + "/lagom";
  auto limited = [&](long mib, const std::vector<std::string>& args) {
    std::vector<std::string> argv{"--as=" + std::to_string(mib << 20), lagom};
    argv.insert(argv.end(), args.begin(), args.end());
    return run("/usr/bin/prlimit", argv);
  };
  long low = 4, high = 4096;  // MiB: lagom cannot start under `low`, starts under `high`
  REQUIRE(limited(high, {"--version"}).exit_code == 0);
  while (high - low > 2) {
    const long mid = (low + high) / 2;
    (limited(mid, {"--version"}).exit_code == 0 ? high : low) = mid;
  }
  int ran = 0, refused = 0;
  for (long mib = high; mib <= 16384; mib = mib * 6 / 5 + 1) {
    const auto r =
        limited(mib, {"bench-overlap", "--kernel", "ag-gemm", "--method", "flash", "--m", "64", "--n", "64",
                      "--k", "64", "--ranks", "16", "--reps", "1", "--executor", "threads", "--quiet"});
    INFO("limit " << mib << " MiB: exit " << r.exit_code << ": " << r.err);
    CHECK(r.exit_code < 128);  // 128 + N: killed by signal N (SIGABRT from std::terminate)
    if (r.exit_code == 0) {
      ++ran;
    } else {
      CHECK(r.err.find("lagom: error: ") != std::string::npos);
      CHECK(r.err.find("another rank failed") == std::string::npos);
      ++refused;
    }
  }
  CHECK(refused > 0);  // the sweep reached limits that refuse the run
  CHECK(ran > 0);      // and limits under which it runs
}
