#include <cmath>

#include <catch2/catch.hpp>

#include "profiler/nccl_tests_format.h"
#include "support/run.h"

using namespace lagom;

namespace {

// The shape of nccl-tests' all_reduce_perf stdout (2.13-era layout, typed from memory: unverified
// against every version): header comments, rank lines, the table, the average.
const char* k_nccl_tests_log =
    "# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
    "validation: 1 graph: 0\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid  41234 on    node17 device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
    "#  Rank  1 Group  0 Pid  41235 on    node17 device  1 [0x0b] NVIDIA A100-SXM4-80GB\n"
    "#  Rank  2 Group  0 Pid  41236 on    node18 device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
    "#  Rank  3 Group  0 Pid  41237 on    node18 device  1 [0x0b] NVIDIA A100-SXM4-80GB\n"
    "#\n"
    "#                                                              out-of-place                       "
    "in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
    "busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
    "(GB/s)       \n"
    "        1024           256     float     sum      -1    20.00    0.05    0.08      0    19.50    0.05   "
    " 0.08      0\n"
    "        2048           512     float     sum      -1    21.00    0.10    0.15      0    20.50    0.10   "
    " 0.15      0\n"
    "        4096          1024     float     sum      -1    22.00    0.19    0.28      0    21.50    0.19   "
    " 0.29      0\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 0.17\n";

}  // namespace

TEST_CASE("nccl-tests stdout imports with ranks and nodes from its rank lines", "[profiler]") {
  const auto log = profiler::parse_log("all_reduce_perf.log", k_nccl_tests_log, {});
  REQUIRE(log.ok());
  CHECK(log.value().format == "nccl-tests");
  CHECK(log.value().collective == "allreduce");
  CHECK(log.value().ranks == 4);
  CHECK(log.value().nodes == 2);
  CHECK(log.value().host == "node17");
  REQUIRE(log.value().samples.size() == 6);
  CHECK(log.value().samples[1].in_place);
  CHECK(log.value().samples[1].time_us == 19.5);
  CHECK(log.value().samples[4].bytes == 4096);
  CHECK(log.value().samples[4].busbw_GBps == 0.28);
  CHECK(log.value().samples[4].wrong == 0);
}

TEST_CASE("an nccl-tests log without a collective in its name needs --collective", "[profiler]") {
  const auto log = profiler::parse_log("run3.txt", k_nccl_tests_log, {});
  REQUIRE_FALSE(log.ok());
  CHECK(log.error().message == "nccl-tests output does not name its collective; pass --collective");
  profiler::ImportOptions options;
  options.collective = "allreduce";
  const auto forced = profiler::parse_log("run3.txt", k_nccl_tests_log, options);
  REQUIRE(forced.ok());
  CHECK(forced.value().collective == "allreduce");
  CHECK(forced.value().ranks == 4);
  CHECK(forced.value().skipped.empty());
}

TEST_CASE("a log forced to another collective or rank count than its busbw says is refused, row by row",
          "[profiler]") {
  profiler::ImportOptions options;
  options.collective = "reducescatter";
  options.ranks = 8;
  const auto forced = profiler::parse_log("run3.txt", k_nccl_tests_log, options);
  REQUIRE_FALSE(forced.ok());
  CHECK(forced.error().message.find("busbw 0.08 GB/s is not algbw × 0.875 (reducescatter over 8 ranks)") !=
        std::string::npos);
}

TEST_CASE("nccl-tests rows that are no measurement are skipped with the line and the reason", "[profiler]") {
  std::string log = k_nccl_tests_log;
  // Planted after the three good rows: a size of 10^26, a negative size, #wrong > 0, a short row, a nan
  // time, an algbw that contradicts size and time.
  const std::string bad =
      "  1e26   256  float  sum  -1  20.00  0.05  0.08  0  19.50  0.05  0.08  0\n"
      "  -4096  1024 float  sum  -1  22.00  0.19  0.28  0  21.50  0.19  0.29  0\n"
      "  8192   2048 float  sum  -1  23.00  0.36  0.53  5  23.00  0.36  0.53  0\n"
      "  16384  4096 float  sum  -1  24.00  0.68\n"
      "  32768  8192 float  sum  -1  nan    1.00  1.50  0  nan    1.00  1.50  0\n"
      "  65536 16384 float  sum  -1  30.00  9.99  14.9  0  30.00  2.18  3.28  0\n";
  log.insert(log.find("# Out of bounds"), bad);
  const auto parsed = profiler::parse_log("all_reduce_perf.log", log, {});
  REQUIRE(parsed.ok());
  const auto& skipped = parsed.value().skipped;
  std::string all;
  for (const auto& s : skipped) all += s + "\n";
  INFO(all);
  CHECK(all.find("size 1e+26 is not a whole number of bytes from 1 to 2^50") != std::string::npos);
  CHECK(all.find("size -4096 is not") != std::string::npos);
  CHECK(all.find("out-of-place #wrong 5") != std::string::npos);
  CHECK(all.find("line 18: 7 fields, an nccl-tests row has 12 or 13") != std::string::npos);
  CHECK(all.find("time nan µs is not a positive finite duration") != std::string::npos);
  CHECK(all.find("out-of-place algbw 9.99 GB/s is not size / time = 2.18 GB/s") != std::string::npos);
  // What stays: the three good rows (both placements), the in-place half of the #wrong row and of the
  // contradicting row.
  CHECK(parsed.value().samples.size() == 6 + 2);
  for (const auto& s : parsed.value().samples) {
    CHECK(s.bytes > 0);
    CHECK(std::isfinite(s.time_us));
  }
}

TEST_CASE("a vTrain LUT with a byte order mark and CRLF lines imports both repetitions", "[profiler]") {
  const std::string text =
      "\xEF\xBB\xBFsize(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)\r\n"
      "1048576,262144,float,92790,19.78,92150,19.91\r\n"
      "2097152,524288,float,93250,39.36,92970,39.47\r\n";
  const auto log = profiler::parse_log("/some/dir/AR_GPU8_1M_1024M_LUT", text, {});
  REQUIRE(log.ok());
  CHECK(log.value().format == "vtrain-lut");
  CHECK(log.value().ranks == 8);
  REQUIRE(log.value().samples.size() == 4);
  CHECK(log.value().samples[0].time_us == Approx(92.79));
  // busbw recomputed from the time with the 8-rank allreduce factor 1.75 matches the file's 19.78.
  CHECK(log.value().samples[0].busbw_GBps == Approx(19.78).epsilon(0.002));
  CHECK(log.value().samples[3].time_us == Approx(92.97));
}

TEST_CASE("a vTrain LUT whose name has no GPU count needs --ranks", "[profiler]") {
  const auto log = profiler::parse_log(
      "AR_table.csv", "size(B),count,type,time(ns),busbw(GB/s)\n1024,256,float,1000,1.0\n", {});
  REQUIRE_FALSE(log.ok());
  CHECK(log.error().message == "cannot tell the rank count from the file name; pass --ranks");
}

TEST_CASE("rendered nccl-tests tables parse back to the same samples", "[profiler]") {
  std::vector<db::CommSample> samples;
  for (std::int64_t bytes = 1024; bytes <= 8192; bytes *= 2) {
    for (const bool in_place : {false, true}) {
      db::CommSample s;
      s.collective = "allgather";
      s.ranks = 2;
      s.nodes = 2;
      s.bytes = bytes;
      s.count = bytes / 8;
      s.redop = "none";
      s.in_place = in_place;
      s.time_us = 10.25 + static_cast<double>(bytes) / 1000.0 + (in_place ? 1 : 0);
      s.algbw_GBps = static_cast<double>(bytes) / (s.time_us * 1e3);
      s.busbw_GBps = s.algbw_GBps * 0.5;
      samples.push_back(s);
    }
  }
  const std::string text = profiler::render_nccl_tests(samples);
  CHECK(text.rfind("# Collective test: allgather  ranks 2  nodes 2", 0) == 0);
  const auto log = profiler::parse_log("export.txt", text, {});
  REQUIRE(log.ok());
  CHECK(log.value().collective == "allgather");
  CHECK(log.value().ranks == 2);
  CHECK(log.value().nodes == 2);
  REQUIRE(log.value().samples.size() == samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    CHECK(log.value().samples[i].bytes == samples[i].bytes);
    CHECK(log.value().samples[i].in_place == samples[i].in_place);
    CHECK(log.value().samples[i].time_us == Approx(samples[i].time_us).margin(0.005));
  }
}

TEST_CASE("a vTrain LUT whose name says 0 or an absurd number of GPUs is refused naming the file",
          "[profiler]") {
  const std::string text = "size(B),count,type,time(ns),busbw(GB/s)\n1048576,262144,float,92790,19.78\n";
  for (const char* name :
       {"/data/AR_GPU0", "AR_GPU0_1M_1024M_LUT", "AR_GPU99999999999_LUT", "AR_GPU2097152"}) {
    const auto log = profiler::parse_log(name, text, {});
    INFO(name);
    REQUIRE_FALSE(log.ok());
    const std::string base = std::string(name).substr(std::string(name).rfind('/') + 1);
    CHECK(log.error().message.find("the file name " + base + " says ") == 0);
    CHECK(log.error().message.find("a run has from 1 to 1048576 ranks; pass --ranks") != std::string::npos);
  }
  profiler::ImportOptions options;
  options.ranks = 8;  // --ranks overrides the name
  CHECK(profiler::parse_log("AR_GPU0", text, options).ok());
  options.ranks = 0;
  REQUIRE_FALSE(profiler::parse_log("AR_GPU8", text, options).ok());
  CHECK(profiler::parse_log("AR_GPU8", text, options).error().message.find("--ranks says 0 ranks") == 0);
}

TEST_CASE("db import's --nodes must divide the ranks, and overrides what an nccl-tests log says",
          "[profiler]") {
  const std::string lut = "size(B),count,type,time(ns),busbw(GB/s)\n1048576,262144,float,92790,19.78\n";
  profiler::ImportOptions options;
  for (const int nodes : {100, 3, 17}) {
    options.nodes = nodes;
    const auto log = profiler::parse_log("AR_GPU16", lut, options);
    INFO(nodes);
    REQUIRE_FALSE(log.ok());
    CHECK(log.error().message ==
          "--nodes " + std::to_string(nodes) +
              " with 16 ranks: the nodes must divide the ranks (each node runs the same "
              "number of them)");
  }
  options.nodes = 0;
  CHECK_FALSE(profiler::parse_log("AR_GPU16", lut, options).ok());
  options.nodes = 2;
  REQUIRE(profiler::parse_log("AR_GPU16", lut, options).ok());
  CHECK(profiler::parse_log("AR_GPU16", lut, options).value().nodes == 2);
  // The log's rank lines say 2 hosts; --nodes 1 is what the user says instead (it was ignored).
  options.nodes = 1;
  const auto log = profiler::parse_log("all_reduce_perf.log", k_nccl_tests_log, options);
  REQUIRE(log.ok());
  CHECK(log.value().nodes == 1);
  // A log whose own series line says more nodes than ranks is refused too.
  const std::string series =
      "# Collective test: allreduce  ranks 2  nodes 4\n"
      "        1024           256     float     sum      -1    20.00    0.05    0.05      0"
      "    19.50    0.05    0.05      0\n";
  const auto own = profiler::parse_log("x.txt", series, {});
  REQUIRE_FALSE(own.ok());
  CHECK(own.error().message.find("the log's 4 nodes with 2 ranks") == 0);
}
