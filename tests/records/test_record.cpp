// The record format of docs/records.md: what the one writer writes, the one reader reads back, and what
// the reader refuses.
#include <string>

#include <catch2/catch.hpp>

#include "records/record.h"

using lagom::records::format_record;
using lagom::records::format_summary;
using lagom::records::k_max_line_bytes;
using lagom::records::Kind;
using lagom::records::parse_record_line;
using lagom::records::ParsedLine;
using lagom::records::Record;

namespace {

Record sample() {
  Record r;
  r.kind = Kind::collective;
  r.source.set("nccl");
  r.host.set("node-1");
  r.pid = 4242;
  r.comm_hash = 0xabcdef0123456789ull;
  r.rank = 3;
  r.n_ranks = 16;
  r.n_nodes = 2;
  r.collective.set("allreduce");
  r.count = 1048576;
  r.dtype.set("bfloat16");
  r.bytes = 2097152;
  r.algorithm.set("ring");
  r.protocol.set("simple");
  r.channels = 8;
  r.seq = 17;
  r.clock.set("gpu");
  r.start_ns = 1733057000123456789;
  r.end_ns = 1733057000123789012;
  return r;
}

std::string line_of(const Record& r) {
  char buffer[k_max_line_bytes];
  const std::size_t n = format_record(r, buffer, sizeof buffer);
  return std::string(buffer, n);
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// The sample record's line without its newline: the base every malformed-line case edits.
std::string good_line() {
  std::string line = line_of(sample());
  line.pop_back();
  return line;
}

// The error the reader gives for `line`, which must be one.
std::string error_of(const std::string& line) {
  const ParsedLine parsed = parse_record_line(line);
  REQUIRE(parsed.type == ParsedLine::Type::error);
  return parsed.error;
}

}  // namespace

TEST_CASE("a record is written as the documented JSON line", "[records]") {
  // The example of docs/records.md, byte for byte.
  CHECK(line_of(sample()) ==
        "{\"version\":1,\"kind\":\"collective\",\"source\":\"nccl\",\"host\":\"node-1\",\"pid\":4242,"
        "\"comm_hash\":\"0xabcdef0123456789\",\"rank\":3,\"n_ranks\":16,\"n_nodes\":2,\"collective\":"
        "\"allreduce\","
        "\"count\":1048576,\"dtype\":\"bfloat16\",\"bytes\":2097152,\"algorithm\":\"ring\",\"protocol\":"
        "\"simple\","
        "\"channels\":8,\"seq\":17,\"peer\":-1,\"clock\":\"gpu\",\"start_ns\":1733057000123456789,"
        "\"end_ns\":1733057000123789012}\n");
}

TEST_CASE("the reader gives back every field the writer wrote, escapes included", "[records]") {
  Record r = sample();
  r.kind = Kind::p2p;
  r.host.set("we\"ird\\host\t1");
  r.collective.set("send");
  r.peer = 5;
  r.count = UINT64_MAX;  // count x 2 bytes saturates
  r.bytes = UINT64_MAX;
  std::string line = line_of(r);
  line.pop_back();  // the newline
  const ParsedLine parsed = parse_record_line(line);
  REQUIRE(parsed.type == ParsedLine::Type::record);
  const Record& back = parsed.record;
  CHECK(back.kind == Kind::p2p);
  CHECK(back.host.view() == "we\"ird\\host\t1");
  CHECK(back.comm_hash == r.comm_hash);
  CHECK(back.bytes == UINT64_MAX);
  CHECK(back.peer == 5);
  CHECK(back.start_ns == r.start_ns);
  CHECK(back.end_ns == r.end_ns);
  CHECK(back.duration_us() == Approx(332.223));  // 332 223 ns
  CHECK(lagom::records::record_key(back) == lagom::records::record_key(r));
}

TEST_CASE("a summary line round-trips", "[records]") {
  lagom::records::Summary s;
  s.host.set("h");
  s.pid = 7;
  s.recorded = 10;
  s.dropped_full = 2;
  s.write_failed = 1;
  char buffer[k_max_line_bytes];
  std::string line(buffer, format_summary(s, buffer, sizeof buffer));
  line.pop_back();
  const ParsedLine parsed = parse_record_line(line);
  REQUIRE(parsed.type == ParsedLine::Type::summary);
  CHECK(parsed.summary.recorded == 10);
  CHECK(parsed.summary.dropped_full == 2);
  CHECK(parsed.summary.write_failed == 1);
}

TEST_CASE("the reader names what is wrong with a line that is not a record", "[records]") {
  const std::string good = good_line();
  CHECK(error_of(replace(good, "\"version\":1", "\"version\":2")) ==
        "version 2 (this build reads version 1)");
  CHECK(error_of(replace(good, "\"rank\":3,", "")) == "missing field \"rank\"");
  CHECK(error_of(replace(good, "\"rank\":3", "\"rank\":16")) == "\"rank\" must be below \"n_ranks\"");
  CHECK(error_of(replace(good, "\"n_nodes\":2", "\"n_nodes\":17")) ==
        "\"n_nodes\" must not exceed \"n_ranks\"");
  CHECK(error_of(replace(good, "\"bytes\":2097152", "\"bytes\":-1")) == "\"bytes\" must not be negative");
  CHECK(error_of(replace(good, "\"bytes\":2097152", "\"bytes\":\"2\"")) == "\"bytes\" must be an integer");
  CHECK(error_of(replace(good, "\"end_ns\":1733057000123789012", "\"end_ns\":5")) ==
        "\"end_ns\" is before \"start_ns\"");
  CHECK(error_of(replace(good, "0xabcdef0123456789", "abc")) ==
        "\"comm_hash\" must be 0x and up to 16 hex digits");
  CHECK(error_of(replace(good, "\"clock\":\"gpu\"", "\"clock\":\"tsc\"")) ==
        "\"clock\" is \"tsc\": allowed gpu, host or enqueue");
  // A copy-engine collective's record (docs/records.md): read, and marked as not timing the execution.
  const ParsedLine enqueue =
      parse_record_line(replace(replace(good, "\"clock\":\"gpu\"", "\"clock\":\"enqueue\""),
                                "\"algorithm\":\"ring\"", "\"algorithm\":\"ce\""));
  REQUIRE(enqueue.type == ParsedLine::Type::record);
  CHECK(!enqueue.record.times_execution());
  CHECK(parse_record_line(good).record.times_execution());
  CHECK(error_of(replace(good, "\"kind\":\"collective\"", "\"kind\":\"group\"")) ==
        "\"kind\" must be collective, p2p or summary, not \"group\"");
  CHECK(error_of(replace(good, "node-1", std::string(64, 'x'))) == "\"host\" is longer than 63 bytes");
  CHECK(error_of(good.substr(0, good.size() / 2)) == "not JSON");
  CHECK(error_of("[1,2]") == "not a JSON object");
  CHECK(parse_record_line("   \r").type == ParsedLine::Type::blank);
}

TEST_CASE("NCCL's names map to Lagom's, unknown names to unknown or empty", "[records]") {
  using namespace lagom::records;
  CHECK(std::string(collective_from_nccl("AllReduce")) == "allreduce");
  CHECK(std::string(collective_from_nccl("ReduceScatter")) == "reducescatter");
  CHECK(std::string(collective_from_nccl("Send")) == "send");
  CHECK(std::string(collective_from_nccl("Invalid")) == "unknown");
  CHECK(std::string(collective_from_nccl(nullptr)) == "unknown");
  CHECK(std::string(dtype_from_nccl("ncclBfloat16")) == "bfloat16");
  CHECK(std::string(dtype_from_nccl("Unknown")) == "unknown");
  CHECK(std::string(algorithm_from_nccl("NVLS_TREE")) == "nvls_tree");
  CHECK(std::string(algorithm_from_nccl("Unknown")).empty());
  CHECK(std::string(protocol_from_nccl("LL128")) == "ll128");
  CHECK(dtype_bytes("bfloat16") == 2);
  CHECK(dtype_bytes("fp8_e4m3") == 1);
  CHECK(dtype_bytes("float64") == 8);
  CHECK(dtype_bytes("unknown") == 0);
}

TEST_CASE("the writer never overruns a short buffer", "[records]") {
  char buffer[64];
  CHECK(format_record(sample(), buffer, sizeof buffer) == 0);
  CHECK(format_record(sample(), nullptr, 0) == 0);
}

TEST_CASE(
    "the reader refuses every field value docs/records.md does not have, naming field, value and what is "
    "allowed",
    "[records]") {
  const std::string good = good_line();
  CHECK(error_of(replace(good, "\"source\":\"nccl\"", "\"source\":\"rccl\"")) ==
        "\"source\" is \"rccl\": allowed nccl or mpi");
  CHECK(error_of(replace(good, "\"collective\":\"allreduce\"", "\"collective\":\"allreducex\"")) ==
        "\"collective\" is \"allreducex\": allowed allreduce, allgather, reducescatter, broadcast, reduce, "
        "alltoall, "
        "gather, scatter, sendrecv or unknown (of a collective record)");
  CHECK(error_of(replace(good, "\"dtype\":\"bfloat16\"", "\"dtype\":\"float99\"")) ==
        "\"dtype\" is \"float99\": allowed int8, uint8, int32, uint32, int64, uint64, float16, bfloat16, "
        "float32, "
        "float64, fp8_e4m3, fp8_e5m2 or unknown");
  CHECK(error_of(replace(good, "\"algorithm\":\"ring\"", "\"algorithm\":\"star\"")) ==
        "\"algorithm\" is \"star\": allowed \"\" (unknown), tree, ring, collnet_direct, collnet_chain, nvls, "
        "nvls_tree, pat or ce");
  CHECK(error_of(replace(good, "\"protocol\":\"simple\"", "\"protocol\":\"ll64\"")) ==
        "\"protocol\" is \"ll64\": allowed \"\" (unknown), ll, ll128 or simple");
  // bytes is count x the dtype's size (saturating), 0 for an unknown dtype.
  CHECK(error_of(replace(good, "\"bytes\":2097152", "\"bytes\":4096")) ==
        "\"bytes\" is 4096, not \"count\" 1048576 x the size of bfloat16 = 2097152 (0 for an unknown dtype)");
  CHECK(error_of(replace(good, "\"dtype\":\"bfloat16\"", "\"dtype\":\"unknown\""))
            .find("\"bytes\" is 2097152, not \"count\" 1048576 x the size of unknown = 0") == 0);
  CHECK(parse_record_line(replace(replace(good, "\"dtype\":\"bfloat16\"", "\"dtype\":\"unknown\""),
                                  "\"bytes\":2097152", "\"bytes\":0"))
            .type == ParsedLine::Type::record);
  // The kind and the collective agree: a p2p record is a send or a receive, with a peer rank.
  const std::string p2p =
      replace(replace(good, "\"kind\":\"collective\"", "\"kind\":\"p2p\""), "\"peer\":-1", "\"peer\":2");
  CHECK(
      error_of(p2p) ==
      "\"collective\" is \"allreduce\": allowed send, recv or unknown (a p2p record is one send or receive)");
  CHECK(parse_record_line(replace(p2p, "\"collective\":\"allreduce\"", "\"collective\":\"send\"")).type ==
        ParsedLine::Type::record);
  CHECK(error_of(replace(replace(p2p, "\"collective\":\"allreduce\"", "\"collective\":\"recv\""),
                         "\"peer\":2", "\"peer\":16")) ==
        "\"peer\" is 16: a p2p record's is a rank from 0 to \"n_ranks\" - 1 = 15");
  CHECK(error_of(replace(good, "\"collective\":\"allreduce\"", "\"collective\":\"send\""))
            .find("\"collective\" is \"send\": allowed allreduce, ") == 0);
  CHECK(error_of(replace(good, "\"peer\":-1", "\"peer\":3")) == "\"peer\" is 3: a collective record's is -1");
  // The clock agrees with the algorithm and the source.
  CHECK(error_of(replace(good, "\"clock\":\"gpu\"", "\"clock\":\"enqueue\"")) ==
        "\"clock\" is \"enqueue\" with \"algorithm\" \"ring\": a copy-engine collective (algorithm ce) and "
        "only it "
        "has the clock enqueue");
  CHECK(
      error_of(replace(good, "\"clock\":\"gpu\"", "\"clock\":\"host\"")) ==
      "\"clock\" is \"host\" with \"source\" \"nccl\": the MPI backend's clock is host, the plugin's gpu or "
      "enqueue");
  CHECK(error_of(replace(good, "\"source\":\"nccl\"", "\"source\":\"mpi\""))
            .find("\"clock\" is \"gpu\" with") == 0);
}
