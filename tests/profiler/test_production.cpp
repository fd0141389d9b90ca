// Production records as fit inputs (profiler/production.h).
#include <catch2/catch.hpp>

#include "profiler/fit.h"
#include "profiler/production.h"
#include "support/run.h"

using namespace lagom;

namespace {

records::Record record(const char* collective, std::uint64_t bytes, int n_ranks, double duration_us,
                       std::uint64_t seq) {
  records::Record r;
  r.source.set("nccl");
  r.host.set("h");
  r.pid = 1;
  r.n_ranks = n_ranks;
  r.n_nodes = 1;
  r.collective.set(collective);
  r.dtype.set("float32");
  r.bytes = bytes;
  r.count = bytes / 4;
  r.algorithm.set("ring");
  r.protocol.set("simple");
  r.channels = 4;
  r.seq = seq;
  r.clock.set("gpu");
  r.start_ns = static_cast<std::int64_t>(seq) * 1'000'000;
  r.end_ns = r.start_ns + static_cast<std::int64_t>(duration_us * 1000);
  return r;
}

std::string line(const records::Record& r) {
  char buffer[records::k_max_line_bytes];
  return std::string(buffer, records::format_record(r, buffer, sizeof buffer));
}

}  // namespace

TEST_CASE("records become one comm sample per operation shape with the median time", "[profiler]") {
  std::vector<records::Record> rs;
  // Five allreduces of 1 MiB: 100, 101, 102, 500 (a hiccup), 103 us: the median is 102.
  const double times[] = {100, 101, 102, 500, 103};
  for (int i = 0; i < 5; ++i)
    rs.push_back(record("allreduce", 1 << 20, 8, times[i], static_cast<std::uint64_t>(i)));
  // An allgather record carries one rank's share: nccl-tests' size is 8 x 64 KiB.
  rs.push_back(record("allgather", 65536, 8, 40, 10));
  rs.push_back(record("send", 4096, 8, 5, 11));  // p2p is not a collective sample
  rs.back().kind = records::Kind::p2p;
  // A copy-engine all-gather's record times its enqueue, not its execution: no sample.
  rs.push_back(record("allgather", 1 << 20, 8, 3, 12));
  rs.back().algorithm.set("ce");
  rs.back().clock.set("enqueue");
  const auto samples = profiler::comm_samples_from_records(rs);
  REQUIRE(samples.size() == 2);
  const auto& ag = samples[0];
  CHECK(ag.collective == "allgather");
  CHECK(ag.bytes == 8 * 65536);
  CHECK(ag.time_us == Approx(40));
  const auto& ar = samples[1];
  CHECK(ar.collective == "allreduce");
  CHECK(ar.algo == "ring");
  CHECK(ar.proto == "simple");
  CHECK(ar.channels == 4);
  CHECK(ar.ranks == 8);
  CHECK(ar.bytes == 1 << 20);
  CHECK(ar.time_us == Approx(102));
  CHECK(ar.wrong == -1);
  // busbw = algbw x 2(n-1)/n for allreduce (nccl-tests' factor).
  CHECK(ar.busbw_GBps == Approx(static_cast<double>(1 << 20) / (102 * 1e3) * 2 * 7 / 8));
}

TEST_CASE("a production series fits like a profile: latency and bus bandwidth recovered", "[profiler]") {
  // time = 20 us + bytes / (busbw / factor), busbw 40 GB/s, 4 ranks: factor 1.5.
  std::vector<records::Record> rs;
  std::uint64_t seq = 0;
  for (std::uint64_t bytes = 1 << 16; bytes <= (1u << 26); bytes <<= 2) {
    const double t = 20 + static_cast<double>(bytes) / (40.0 / 1.5 * 1e3);
    for (int rep = 0; rep < 3; ++rep) rs.push_back(record("allreduce", bytes, 4, t, seq++));
  }
  const auto outcome = profiler::fit_run(profiler::comm_samples_from_records(rs), {}, {});
  REQUIRE(outcome.fits.collectives.size() == 1);
  CHECK(outcome.fits.collectives[0].latency_us == Approx(20).epsilon(1e-3));
  CHECK(outcome.fits.collectives[0].bus_bw_GBps == Approx(40).epsilon(1e-3));
}

TEST_CASE("record text: a malformed line is an error at file:line, a last unfinished line a warning",
          "[profiler]") {
  const std::string good = line(record("allreduce", 1024, 2, 5, 1));
  profiler::RecordFiles out;
  CHECK(profiler::parse_records_text("f.jsonl", good + "\n" + good.substr(0, 40), out).ok());
  CHECK(out.records.size() == 1);
  REQUIRE(out.warnings.size() == 1);
  CHECK(out.warnings[0] == "f.jsonl:3: the last line has no newline (still being written?); skipped");
  profiler::RecordFiles bad;
  const auto status = profiler::parse_records_text("g.jsonl", good + "{\"version\":1}\n", bad);
  REQUIRE(!status.ok());
  CHECK(status.error().message == "g.jsonl:2: not a Lagom record: missing field \"kind\"");
}

TEST_CASE(
    "record files: every line outside docs/records.md is listed with file:line and its reason, nothing read",
    "[profiler]") {
  const std::string good = line(record("allreduce", 1024, 2, 5, 1));
  std::string bad_dtype = good;
  bad_dtype.replace(bad_dtype.find("float32"), 7, "float99");
  std::string p2p_allreduce = line(record("allreduce", 1024, 2, 5, 2));
  p2p_allreduce.replace(p2p_allreduce.find("\"collective\",\"source\""), 12, "\"p2p\"");
  profiler::RecordFiles out;
  const auto status =
      profiler::parse_records_text("r.jsonl", good + bad_dtype + p2p_allreduce + "[1]\n", out);
  REQUIRE_FALSE(status.ok());
  const std::string& message = status.error().message;
  CHECK(message.rfind("3 lines are not Lagom records (docs/records.md), nothing was read:\n", 0) == 0);
  CHECK(message.find("\n  r.jsonl:2: \"dtype\" is \"float99\": allowed int8,") != std::string::npos);
  CHECK(message.find("\n  r.jsonl:3: \"collective\" is \"allreduce\": allowed send, recv or unknown") !=
        std::string::npos);
  CHECK(message.find("\n  r.jsonl:4: not a JSON object") != std::string::npos);
  CHECK(out.rejected_lines == 3);

  // Across the files of a folder, and past the listed number: the first ones, then a count.
  const std::string dir = lagom::test::temp_dir("records-rejected");
  std::string many;
  for (int i = 0; i < 25; ++i) many += bad_dtype;
  lagom::test::write_file(dir + "/a.jsonl", good);
  lagom::test::write_file(dir + "/b.jsonl", many);
  const auto read = profiler::read_record_files(dir);
  REQUIRE_FALSE(read.ok());
  CHECK(read.error().message.rfind("25 lines are not Lagom records", 0) == 0);
  CHECK(read.error().message.find(dir + "/b.jsonl:20: ") != std::string::npos);
  CHECK(read.error().message.find(dir + "/b.jsonl:21: ") == std::string::npos);
  CHECK(read.error().message.find("\n  ... and 5 more") != std::string::npos);
}
