// Drives libnccl-profiler-lagom.so through its ABI the way NCCL 2.28 does (src/plugin/profiler.cc): dlopen,
// the exported ncclProfiler_v6 (NCCL 2.29-2.30, with copy-engine events) / _v5 / _v4 structs, init per
// communicator, a Group event around each batch, a Coll (or P2p) event started when the plan is built and
// stopped once enqueued, one KernelCh event per channel started with the GPU timer's start, a KernelChStop
// state with its end, then the KernelCh stop (profiler.cc:590-614), finalize. The records read back must
// describe each operation exactly.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "records/record.h"
#include "shim/nccl_profiler_abi.h"

namespace {

namespace fs = std::filesystem;

struct Plugin {
  void* handle = nullptr;
  lagom_nccl_profiler_v6_t* v6 = nullptr;
  lagom_nccl_profiler_v5_t* v5 = nullptr;
  lagom_nccl_profiler_v4_t* v4 = nullptr;
};

const Plugin& plugin() {
  static Plugin loaded = [] {
    Plugin p;
    const std::string path = std::string(LAGOM_LIB_DIR) + "/libnccl-profiler-lagom.so";
    p.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (p.handle == nullptr) FAIL("dlopen " << path << ": " << dlerror());
    p.v6 = static_cast<lagom_nccl_profiler_v6_t*>(dlsym(p.handle, "ncclProfiler_v6"));
    p.v5 = static_cast<lagom_nccl_profiler_v5_t*>(dlsym(p.handle, "ncclProfiler_v5"));
    p.v4 = static_cast<lagom_nccl_profiler_v4_t*>(dlsym(p.handle, "ncclProfiler_v4"));
    return p;
  }();
  return loaded;
}

class EnvGuard {
 public:
  EnvGuard(const char* name, const std::string& value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~EnvGuard() {
    if (m_old) {
      ::setenv(m_name, m_old->c_str(), 1);
    } else {
      ::unsetenv(m_name);
    }
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

// A fresh directory under the build's temp area, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("lagom-profiler-" + std::to_string(::getpid()) + "-" +
            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

struct Lines {
  std::vector<lagom::records::Record> records;
  std::vector<lagom::records::Summary> summaries;
  std::vector<std::string> errors;
};

Lines read_file(const fs::path& path) {
  Lines out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto parsed = lagom::records::parse_record_line(line);
    switch (parsed.type) {
      case lagom::records::ParsedLine::Type::record:
        out.records.push_back(parsed.record);
        break;
      case lagom::records::ParsedLine::Type::summary:
        out.summaries.push_back(parsed.summary);
        break;
      case lagom::records::ParsedLine::Type::error:
        out.errors.push_back(parsed.error + ": " + line);
        break;
      case lagom::records::ParsedLine::Type::blank:
        break;
    }
  }
  return out;
}

constexpr int k_mask_wanted = LAGOM_NCCL_PROFILE_COLL | LAGOM_NCCL_PROFILE_P2P | LAGOM_NCCL_PROFILE_KERNEL_CH;

// One collective as NCCL reports it: the GPU timer of channel c runs from start + c to start + duration + c.
struct Collective {
  const char* func = "AllReduce";
  std::size_t count = 1024;
  const char* datatype = "ncclFloat32";
  const char* algo = "RING";
  const char* proto = "SIMPLE";
  int channels = 2;
  std::uint64_t seq = 0;
  std::uint64_t start_ns = 1000;
  std::uint64_t duration_ns = 500;
  bool enqueue_stop_first = true;  // NCCL stops the Coll event before or after the kernel ends
};

void run_collective_v5(void* context, const Collective& c) {
  const auto* p = plugin().v5;
  lagom_nccl_profiler_descr_v5_t group{};
  group.type = LAGOM_NCCL_PROFILE_GROUP;
  void* group_handle = reinterpret_cast<void*>(0x1);  // must be overwritten
  p->startEvent(context, &group_handle, &group);
  lagom_nccl_profiler_descr_v5_t d{};
  d.type = LAGOM_NCCL_PROFILE_COLL;
  d.parentObj = nullptr;
  d.coll.func = c.func;
  d.coll.count = c.count;
  d.coll.datatype = c.datatype;
  d.coll.algo = c.algo;
  d.coll.proto = c.proto;
  d.coll.nChannels = static_cast<std::uint8_t>(c.channels);
  d.coll.seqNumber = c.seq;
  d.coll.parentGroup = group_handle;
  void* coll = nullptr;
  p->startEvent(context, &coll, &d);
  if (c.enqueue_stop_first) p->stopEvent(coll);
  std::vector<void*> channels(static_cast<std::size_t>(c.channels), nullptr);
  for (int ch = 0; ch < c.channels; ++ch) {
    lagom_nccl_profiler_descr_v5_t k{};
    k.type = LAGOM_NCCL_PROFILE_KERNEL_CH;
    k.parentObj = coll;
    k.kernelCh.channelId = static_cast<std::uint8_t>(ch);
    k.kernelCh.pTimer = c.start_ns + static_cast<std::uint64_t>(ch);
    p->startEvent(context, &channels[static_cast<std::size_t>(ch)], &k);
  }
  for (int ch = 0; ch < c.channels; ++ch) {
    lagom_nccl_profiler_state_args_t args{};
    args.kernelCh.pTimer = c.start_ns + c.duration_ns + static_cast<std::uint64_t>(ch);
    p->recordEventState(channels[static_cast<std::size_t>(ch)], LAGOM_NCCL_PROFILER_KERNEL_CH_STOP, &args);
    p->stopEvent(channels[static_cast<std::size_t>(ch)]);
  }
  if (!c.enqueue_stop_first) p->stopEvent(coll);
  p->stopEvent(group_handle);
}

fs::path record_file(const TempDir& dir) {
  return dir.path / (host_name() + "-" + std::to_string(::getpid()) + ".jsonl");
}

}  // namespace

TEST_CASE(
    "profiler plugin: collectives from several threads are recorded once each, timed by their kernel "
    "channels",
    "[shim]") {
  TempDir dir;
  EnvGuard env_dir("LAGOM_PROFILE_DIR", dir.path.string());
  EnvGuard flush("LAGOM_PROFILE_FLUSH_MS", "5");
  const auto* p = plugin().v5;
  REQUIRE(p != nullptr);
  CHECK(std::string(p->name) == "lagom");
  int mask = 0;
  void* comm_a = nullptr;
  void* comm_b = nullptr;
  REQUIRE(p->init(&comm_a, 0xabcdef0123456789ull, &mask, "a", 2, 16, 3, nullptr) == LAGOM_NCCL_SUCCESS);
  CHECK(mask == k_mask_wanted);
  REQUIRE(p->init(&comm_b, 0x42ull, &mask, "b", 1, 8, 7, nullptr) == LAGOM_NCCL_SUCCESS);
  REQUIRE(comm_a != nullptr);
  REQUIRE(comm_b != nullptr);

  constexpr int k_threads = 4;
  constexpr int k_per_thread = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < k_per_thread; ++i) {
        Collective c;
        c.seq = static_cast<std::uint64_t>(t * k_per_thread + i);
        c.start_ns = 1'000'000 * c.seq + 17;
        c.duration_ns = 1000 + c.seq;
        c.channels = 1 + i % 4;
        c.enqueue_stop_first = i % 2 == 0;
        if (t % 2 == 1) {
          c.func = "AllGather";
          c.datatype = "ncclBfloat16";
          c.algo = "TREE";
          c.proto = "LL128";
        }
        run_collective_v5(t % 2 == 0 ? comm_a : comm_b, c);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  REQUIRE(p->finalize(comm_a) == LAGOM_NCCL_SUCCESS);
  REQUIRE(p->finalize(comm_b) == LAGOM_NCCL_SUCCESS);

  const Lines lines = read_file(record_file(dir));
  CHECK(lines.errors.empty());
  REQUIRE(lines.records.size() == static_cast<std::size_t>(k_threads * k_per_thread));
  REQUIRE(lines.summaries.size() == 1);
  CHECK(lines.summaries[0].recorded == static_cast<std::uint64_t>(k_threads * k_per_thread));
  CHECK(lines.summaries[0].dropped_full == 0);
  CHECK(lines.summaries[0].dropped_slots == 0);
  CHECK(lines.summaries[0].untimed == 0);
  std::set<std::uint64_t> seen;
  for (const auto& r : lines.records) {
    INFO(r.seq);
    CHECK(seen.insert(r.seq).second);
    const bool even = (r.seq / k_per_thread) % 2 == 0;
    CHECK(r.kind == lagom::records::Kind::collective);
    CHECK(r.source.view() == "nccl");
    CHECK(r.host.view() == host_name());
    CHECK(r.pid == ::getpid());
    CHECK(r.comm_hash == (even ? 0xabcdef0123456789ull : 0x42ull));
    CHECK(r.rank == (even ? 3 : 7));
    CHECK(r.n_ranks == (even ? 16 : 8));
    CHECK(r.n_nodes == (even ? 2 : 1));
    CHECK(r.collective.view() == (even ? "allreduce" : "allgather"));
    CHECK(r.dtype.view() == (even ? "float32" : "bfloat16"));
    CHECK(r.count == 1024);
    CHECK(r.bytes == (even ? 4096u : 2048u));
    CHECK(r.algorithm.view() == (even ? "ring" : "tree"));
    CHECK(r.protocol.view() == (even ? "simple" : "ll128"));
    const int channels = 1 + static_cast<int>(r.seq % k_per_thread) % 4;
    CHECK(r.channels == channels);
    CHECK(r.clock.view() == "gpu");
    // Earliest channel start to latest channel stop.
    CHECK(r.start_ns == static_cast<std::int64_t>(1'000'000 * r.seq + 17));
    CHECK(r.end_ns == static_cast<std::int64_t>(1'000'000 * r.seq + 17 + 1000 + r.seq + (channels - 1)));
  }
}

TEST_CASE("profiler plugin: the v4 ABI (NCCL 2.25-2.27) records collectives and point-to-point operations",
          "[shim]") {
  TempDir dir;
  EnvGuard env_dir("LAGOM_PROFILE_DIR", dir.path.string());
  const auto* p = plugin().v4;
  REQUIRE(p != nullptr);
  int mask = 0;
  void* comm = nullptr;
  // v4 init: (context, mask, name, commHash, nNodes, nRanks, rank, logger).
  REQUIRE(p->init(&comm, &mask, "v4", 0x77ull, 2, 4, 1, nullptr) == LAGOM_NCCL_SUCCESS);
  CHECK(mask == k_mask_wanted);
  lagom_nccl_profiler_descr_v4_t d{};
  d.type = LAGOM_NCCL_PROFILE_COLL;
  d.coll.func = "ReduceScatter";
  d.coll.count = 256;
  d.coll.datatype = "ncclFloat16";
  d.coll.algo = "RING";
  d.coll.proto = "LL";
  d.coll.nChannels = 1;
  d.coll.seqNumber = 9;
  void* coll = nullptr;
  p->startEvent(comm, &coll, &d);
  REQUIRE(coll != nullptr);
  lagom_nccl_profiler_descr_v4_t k{};
  k.type = LAGOM_NCCL_PROFILE_KERNEL_CH;
  k.parentObj = coll;
  k.kernelCh.channelId = 5;
  k.kernelCh.pTimer = 100;
  void* channel = nullptr;
  p->startEvent(comm, &channel, &k);
  REQUIRE(channel != nullptr);
  lagom_nccl_profiler_state_args_t args{};
  args.kernelCh.pTimer = 350;
  p->recordEventState(channel, LAGOM_NCCL_PROFILER_KERNEL_CH_STOP, &args);
  p->stopEvent(channel);
  p->stopEvent(coll);

  lagom_nccl_profiler_descr_v4_t send{};
  send.type = LAGOM_NCCL_PROFILE_P2P;
  send.p2p.func = "Send";
  send.p2p.count = 10;
  send.p2p.datatype = "ncclInt64";
  send.p2p.peer = 2;
  send.p2p.nChannels = 1;
  void* op = nullptr;
  p->startEvent(comm, &op, &send);
  REQUIRE(op != nullptr);
  p->stopEvent(op);
  k.parentObj = op;
  k.kernelCh.channelId = 0;
  k.kernelCh.pTimer = 1000;
  p->startEvent(comm, &channel, &k);
  args.kernelCh.pTimer = 1100;
  p->recordEventState(channel, LAGOM_NCCL_PROFILER_KERNEL_CH_STOP, &args);
  p->stopEvent(channel);
  REQUIRE(p->finalize(comm) == LAGOM_NCCL_SUCCESS);

  const Lines lines = read_file(record_file(dir));
  CHECK(lines.errors.empty());
  REQUIRE(lines.records.size() == 2);
  const auto& rs = lines.records[0];
  CHECK(rs.collective.view() == "reducescatter");
  CHECK(rs.bytes == 512);
  CHECK(rs.protocol.view() == "ll");
  CHECK(rs.seq == 9);
  CHECK(rs.comm_hash == 0x77ull);
  CHECK(rs.start_ns == 100);
  CHECK(rs.end_ns == 350);
  const auto& s = lines.records[1];
  CHECK(s.kind == lagom::records::Kind::p2p);
  CHECK(s.collective.view() == "send");
  CHECK(s.peer == 2);
  CHECK(s.bytes == 80);
  CHECK(s.algorithm.view().empty());
  CHECK(s.duration_us() == Approx(0.1));
}

TEST_CASE("profiler plugin: garbage arguments are ignored and never crash or fail a call", "[shim]") {
  TempDir dir;
  EnvGuard env_dir("LAGOM_PROFILE_DIR", dir.path.string());
  const auto* p = plugin().v5;
  // init without a context pointer or a mask, and negative sizes.
  CHECK(p->init(nullptr, 0, nullptr, nullptr, -1, -1, -1, nullptr) == LAGOM_NCCL_SUCCESS);
  void* comm = nullptr;
  int mask = 0;
  REQUIRE(p->init(&comm, 1, &mask, nullptr, 5, 2, 9, nullptr) == LAGOM_NCCL_SUCCESS);
  REQUIRE(comm != nullptr);
  lagom_nccl_profiler_descr_v5_t d{};
  d.type = LAGOM_NCCL_PROFILE_COLL;
  void* handle = reinterpret_cast<void*>(0x10);
  CHECK(p->startEvent(nullptr, &handle, &d) == LAGOM_NCCL_SUCCESS);
  CHECK(handle == nullptr);
  CHECK(p->startEvent(comm, nullptr, &d) == LAGOM_NCCL_SUCCESS);
  CHECK(p->startEvent(comm, &handle, nullptr) == LAGOM_NCCL_SUCCESS);
  std::uint64_t not_a_context[8] = {};
  CHECK(p->startEvent(not_a_context, &handle, &d) == LAGOM_NCCL_SUCCESS);
  CHECK(handle == nullptr);
  d.type = 1ull << 40;  // no such event type
  CHECK(p->startEvent(comm, &handle, &d) == LAGOM_NCCL_SUCCESS);
  CHECK(handle == nullptr);
  // Kernel channels with a parent the plugin never handed out, or a channel id past MAXCHANNELS.
  lagom_nccl_profiler_descr_v5_t k{};
  k.type = LAGOM_NCCL_PROFILE_KERNEL_CH;
  k.parentObj = not_a_context;
  CHECK(p->startEvent(comm, &handle, &k) == LAGOM_NCCL_SUCCESS);
  CHECK(handle == nullptr);
  // Handles the plugin never handed out, and stray states.
  int local = 0;
  lagom_nccl_profiler_state_args_t args{};
  for (void* bogus : {static_cast<void*>(&local), static_cast<void*>(not_a_context + 1),
                      reinterpret_cast<void*>(0x1), reinterpret_cast<void*>(0x3f)}) {
    CHECK(p->stopEvent(bogus) == LAGOM_NCCL_SUCCESS);
    CHECK(p->recordEventState(bogus, LAGOM_NCCL_PROFILER_KERNEL_CH_STOP, &args) == LAGOM_NCCL_SUCCESS);
  }
  CHECK(p->recordEventState(nullptr, LAGOM_NCCL_PROFILER_KERNEL_CH_STOP, nullptr) == LAGOM_NCCL_SUCCESS);

  // A collective with null names, an absurd count and channel count: recorded with unknown names,
  // saturated bytes and the channels clamped to NCCL's 64.
  d = {};
  d.type = LAGOM_NCCL_PROFILE_COLL;
  d.coll.count = SIZE_MAX;
  d.coll.datatype = "ncclFloat64";
  d.coll.nChannels = 255;
  void* coll = nullptr;
  p->startEvent(comm, &coll, &d);
  REQUIRE(coll != nullptr);
  CHECK(p->recordEventState(coll, LAGOM_NCCL_PROFILER_KERNEL_CH_STOP, nullptr) == LAGOM_NCCL_SUCCESS);
  std::vector<void*> channels;
  for (int ch = 0; ch < 70; ++ch) {
    k = {};
    k.type = LAGOM_NCCL_PROFILE_KERNEL_CH;
    k.parentObj = coll;
    k.kernelCh.channelId = static_cast<std::uint8_t>(ch);
    k.kernelCh.pTimer = 5000;
    void* channel = nullptr;
    p->startEvent(comm, &channel, &k);
    CHECK((channel != nullptr) == (ch < 64));
    if (channel != nullptr) channels.push_back(channel);
  }
  p->stopEvent(coll);
  p->stopEvent(coll);  // a repeated stop counts once
  for (void* channel : channels) {
    args.kernelCh.pTimer = 9000;
    p->recordEventState(channel, LAGOM_NCCL_PROFILER_KERNEL_CH_STOP, &args);
    p->stopEvent(channel);
    p->stopEvent(channel);  // counts once as well
  }
  // A collective whose kernel channels never report a stop time is counted as untimed, not recorded.
  d = {};
  d.type = LAGOM_NCCL_PROFILE_COLL;
  d.coll.func = "Broadcast";
  d.coll.datatype = "bogus";
  d.coll.nChannels = 1;
  p->startEvent(comm, &coll, &d);
  k = {};
  k.type = LAGOM_NCCL_PROFILE_KERNEL_CH;
  k.parentObj = coll;
  void* channel = nullptr;
  p->startEvent(comm, &channel, &k);
  p->stopEvent(channel);
  p->stopEvent(coll);
  CHECK(p->finalize(nullptr) == LAGOM_NCCL_SUCCESS);
  CHECK(p->finalize(not_a_context) == LAGOM_NCCL_SUCCESS);
  REQUIRE(p->finalize(comm) == LAGOM_NCCL_SUCCESS);

  const Lines lines = read_file(record_file(dir));
  CHECK(lines.errors.empty());
  REQUIRE(lines.records.size() == 1);
  const auto& r = lines.records[0];
  CHECK(r.collective.view() == "unknown");
  CHECK(r.dtype.view() == "float64");
  CHECK(r.bytes == UINT64_MAX);
  CHECK(r.channels == 64);
  CHECK(r.algorithm.view().empty());
  CHECK(r.start_ns == 5000);
  CHECK(r.end_ns == 9000);
  CHECK(r.n_nodes == 2);  // nNodes 5 over 2 ranks is clamped
  CHECK(r.rank == 0);     // rank 9 of 2 is not a rank
  REQUIRE(lines.summaries.size() == 1);
  CHECK(lines.summaries[0].untimed == 1);
}

TEST_CASE("profiler plugin: a full ring buffer drops and counts instead of blocking", "[shim]") {
  TempDir dir;
  EnvGuard env_dir("LAGOM_PROFILE_DIR", dir.path.string());
  EnvGuard ring("LAGOM_PROFILE_RING", "16");
  EnvGuard flush("LAGOM_PROFILE_FLUSH_MS", "60000");  // the writer drains only at finalize
  const auto* p = plugin().v5;
  void* comm = nullptr;
  int mask = 0;
  REQUIRE(p->init(&comm, 5, &mask, "full", 1, 2, 0, nullptr) == LAGOM_NCCL_SUCCESS);
  // A thread of its own, so that this test's ring is new and has the small capacity.
  std::thread producer([&] {
    for (int i = 0; i < 1000; ++i) {
      Collective c;
      c.seq = static_cast<std::uint64_t>(i);
      c.channels = 1;
      run_collective_v5(comm, c);
    }
  });
  producer.join();
  REQUIRE(p->finalize(comm) == LAGOM_NCCL_SUCCESS);
  const Lines lines = read_file(record_file(dir));
  REQUIRE(lines.summaries.size() == 1);
  CHECK(lines.records.size() == 16);
  CHECK(lines.summaries[0].recorded == 16);
  CHECK(lines.summaries[0].dropped_full == 984);
}

TEST_CASE("profiler plugin: operations beyond the in-flight table are dropped and counted", "[shim]") {
  TempDir dir;
  EnvGuard env_dir("LAGOM_PROFILE_DIR", dir.path.string());
  EnvGuard inflight("LAGOM_PROFILE_INFLIGHT", "16");
  const auto* p = plugin().v5;
  void* comm = nullptr;
  int mask = 0;
  REQUIRE(p->init(&comm, 6, &mask, "slots", 1, 2, 0, nullptr) == LAGOM_NCCL_SUCCESS);
  std::vector<void*> open;
  for (int i = 0; i < 20; ++i) {
    lagom_nccl_profiler_descr_v5_t d{};
    d.type = LAGOM_NCCL_PROFILE_COLL;
    d.coll.func = "AllReduce";
    d.coll.datatype = "ncclFloat32";
    d.coll.count = 1;
    d.coll.nChannels = 1;
    void* handle = nullptr;
    p->startEvent(comm, &handle, &d);
    if (handle != nullptr) open.push_back(handle);
  }
  CHECK(open.size() == 16);
  for (void* coll : open) {
    lagom_nccl_profiler_descr_v5_t k{};
    k.type = LAGOM_NCCL_PROFILE_KERNEL_CH;
    k.parentObj = coll;
    k.kernelCh.pTimer = 10;
    void* channel = nullptr;
    p->startEvent(comm, &channel, &k);
    lagom_nccl_profiler_state_args_t args{};
    args.kernelCh.pTimer = 20;
    p->recordEventState(channel, LAGOM_NCCL_PROFILER_KERNEL_CH_STOP, &args);
    p->stopEvent(channel);
    p->stopEvent(coll);
  }
  REQUIRE(p->finalize(comm) == LAGOM_NCCL_SUCCESS);
  const Lines lines = read_file(record_file(dir));
  CHECK(lines.records.size() == 16);
  REQUIRE(lines.summaries.size() == 1);
  CHECK(lines.summaries[0].dropped_slots == 4);
}

TEST_CASE("profiler plugin: a full disk or an unwritable directory never fails a collective", "[shim]") {
  const auto* p = plugin().v5;
  for (const char* path : {"/dev/full", "/nonexistent-lagom-dir/records.jsonl"}) {
    INFO(path);
    EnvGuard file("LAGOM_PROFILE_FILE", path);
    EnvGuard flush("LAGOM_PROFILE_FLUSH_MS", "1");
    void* comm = nullptr;
    int mask = 0;
    REQUIRE(p->init(&comm, 8, &mask, "full", 1, 2, 0, nullptr) == LAGOM_NCCL_SUCCESS);
    CHECK(mask == k_mask_wanted);
    for (int i = 0; i < 200; ++i) {
      Collective c;
      c.seq = static_cast<std::uint64_t>(i);
      run_collective_v5(comm, c);
      if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(3));  // let the writer fail
    }
    CHECK(p->finalize(comm) == LAGOM_NCCL_SUCCESS);
  }
  CHECK(!std::filesystem::exists("/nonexistent-lagom-dir"));
}

TEST_CASE("profiler plugin: the file rotates at its size limit and keeps the newest files", "[shim]") {
  TempDir dir;
  EnvGuard env_dir("LAGOM_PROFILE_DIR", dir.path.string());
  EnvGuard max_bytes("LAGOM_PROFILE_MAX_BYTES", "4096");
  EnvGuard keep("LAGOM_PROFILE_KEEP", "2");
  EnvGuard flush("LAGOM_PROFILE_FLUSH_MS", "1");
  const auto* p = plugin().v5;
  void* comm = nullptr;
  int mask = 0;
  REQUIRE(p->init(&comm, 9, &mask, "rotate", 1, 2, 0, nullptr) == LAGOM_NCCL_SUCCESS);
  const fs::path active = record_file(dir);
  const std::string stem = active.string().substr(0, active.string().size() - 6);
  std::uint64_t seq = 0;
  for (int batch = 0; batch < 6; ++batch) {
    for (int i = 0; i < 20; ++i) {  // ~8 KB of records: every batch fills a file
      Collective c;
      c.seq = seq++;
      run_collective_v5(comm, c);
    }
    // Wait (bounded) until the writer has rotated this batch away.
    const fs::path rotated = stem + "." + std::to_string(batch + 1) + ".jsonl";
    for (int wait = 0; wait < 5000 && !fs::exists(rotated); ++wait) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  REQUIRE(p->finalize(comm) == LAGOM_NCCL_SUCCESS);
  // What is left: the active file (it holds the summary) and the newest `keep` rotations, each of them at
  // least the size limit; together they hold the newest records, with no gap.
  const std::string base = active.filename().string();
  const std::string prefix = base.substr(0, base.size() - 6);
  std::vector<int> rotations;
  std::set<std::uint64_t> seqs;
  bool active_seen = false;
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    const std::string name = entry.path().filename().string();
    const Lines lines = read_file(entry.path());
    CHECK(lines.errors.empty());
    for (const auto& r : lines.records) seqs.insert(r.seq);
    if (name == base) {
      active_seen = true;
      CHECK(lines.summaries.size() == 1);
      continue;
    }
    REQUIRE(name.rfind(prefix + ".", 0) == 0);
    rotations.push_back(std::stoi(name.substr(prefix.size() + 1)));
    CHECK(fs::file_size(entry.path()) >= 4096);
  }
  CHECK(active_seen);
  std::sort(rotations.begin(), rotations.end());
  REQUIRE(rotations.size() == 2);
  CHECK(rotations[0] + 1 == rotations[1]);
  CHECK(rotations[1] >= 6);  // each batch rotated the file at least once
  REQUIRE(!seqs.empty());
  CHECK(*seqs.rbegin() == seq - 1);
  CHECK(seqs.size() == *seqs.rbegin() - *seqs.begin() + 1);
  CHECK(seqs.size() < seq);  // the oldest files were removed
}

TEST_CASE("profiler plugin: without LAGOM_PROFILE_DIR it asks NCCL for no events", "[shim]") {
  ::unsetenv("LAGOM_PROFILE_DIR");
  ::unsetenv("LAGOM_PROFILE_FILE");
  const auto* p = plugin().v5;
  void* comm = nullptr;
  int mask = -1;
  REQUIRE(p->init(&comm, 1, &mask, "off", 1, 2, 0, nullptr) == LAGOM_NCCL_SUCCESS);
  CHECK(mask == 0);
  CHECK(p->finalize(comm) == LAGOM_NCCL_SUCCESS);
}

TEST_CASE(
    "profiler plugin: v6 (NCCL 2.29-2.30) records copy-engine collectives by their enqueue, and kernel "
    "collectives as v5 does",
    "[shim]") {
  TempDir dir;
  EnvGuard env_dir("LAGOM_PROFILE_DIR", dir.path.string());
  EnvGuard flush("LAGOM_PROFILE_FLUSH_MS", "5");
  const auto* p = plugin().v6;
  REQUIRE(p != nullptr);
  CHECK(std::string(p->name) == "lagom");
  int mask = 0;
  void* comm = nullptr;
  REQUIRE(p->init(&comm, 0x77ull, &mask, "ce", 1, 8, 2, nullptr) == LAGOM_NCCL_SUCCESS);
  CHECK(mask == (k_mask_wanted | LAGOM_NCCL_PROFILE_CE_COLL));

  // A kernel collective through the v6 descriptor: the v5 members sit where v5 has them.
  lagom_nccl_profiler_descr_v6_t d{};
  d.type = LAGOM_NCCL_PROFILE_COLL;
  d.coll.func = "AllReduce";
  d.coll.count = 256;
  d.coll.datatype = "ncclFloat32";
  d.coll.algo = "RING";
  d.coll.proto = "LL";
  d.coll.nChannels = 1;
  d.coll.seqNumber = 5;
  void* coll = nullptr;
  p->startEvent(comm, &coll, &d);
  p->stopEvent(coll);
  lagom_nccl_profiler_descr_v6_t k{};
  k.type = LAGOM_NCCL_PROFILE_KERNEL_CH;
  k.parentObj = coll;
  k.kernelCh.pTimer = 1000;
  void* channel = nullptr;
  p->startEvent(comm, &channel, &k);
  lagom_nccl_profiler_state_args_t args{};
  args.kernelCh.pTimer = 1900;
  p->recordEventState(channel, LAGOM_NCCL_PROFILER_KERNEL_CH_STOP, &args);
  p->stopEvent(channel);

  // A copy-engine all-gather: one CeColl event around the enqueue, as src/ce_coll.cc:1361-1408 sends it;
  // its CeSync/CeBatch children (not asked for) would get no handle.
  const std::int64_t before =
      static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now().time_since_epoch())
                                    .count());
  lagom_nccl_profiler_descr_v6_t ce{};
  ce.type = LAGOM_NCCL_PROFILE_CE_COLL;
  ce.ceColl.func = "AllGather";
  ce.ceColl.count = 1 << 20;
  ce.ceColl.datatype = "ncclBfloat16";
  ce.ceColl.seqNumber = 9;
  ce.ceColl.syncStrategy = "MC";
  void* ce_handle = nullptr;
  p->startEvent(comm, &ce_handle, &ce);
  REQUIRE(ce_handle != nullptr);
  lagom_nccl_profiler_descr_v6_t batch{};
  batch.type = LAGOM_NCCL_PROFILE_CE_BATCH;
  batch.parentObj = ce_handle;
  void* batch_handle = reinterpret_cast<void*>(0x1);
  p->startEvent(comm, &batch_handle, &batch);
  CHECK(batch_handle == nullptr);
  p->stopEvent(ce_handle);
  const std::int64_t after =
      static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now().time_since_epoch())
                                    .count());
  REQUIRE(p->finalize(comm) == LAGOM_NCCL_SUCCESS);

  const Lines lines = read_file(record_file(dir));
  CHECK(lines.errors.empty());
  REQUIRE(lines.records.size() == 2);
  REQUIRE(lines.summaries.size() == 1);
  CHECK(lines.summaries[0].recorded == 2);
  CHECK(lines.summaries[0].untimed == 0);
  const auto& kernel = lines.records[0].seq == 5 ? lines.records[0] : lines.records[1];
  const auto& copy = lines.records[0].seq == 5 ? lines.records[1] : lines.records[0];
  CHECK(kernel.collective.view() == "allreduce");
  CHECK(kernel.algorithm.view() == "ring");
  CHECK(kernel.protocol.view() == "ll");
  CHECK(kernel.clock.view() == "gpu");
  CHECK(kernel.start_ns == 1000);
  CHECK(kernel.end_ns == 1900);
  CHECK(kernel.times_execution());
  CHECK(copy.collective.view() == "allgather");
  CHECK(copy.dtype.view() == "bfloat16");
  CHECK(copy.count == (1u << 20));
  CHECK(copy.bytes == (2u << 20));
  CHECK(copy.algorithm.view() == "ce");
  CHECK(copy.protocol.view().empty());
  CHECK(copy.channels == 0);
  CHECK(copy.seq == 9);
  CHECK(copy.clock.view() == "enqueue");
  CHECK(!copy.times_execution());
  // steady_clock is CLOCK_MONOTONIC on Linux: the enqueue lies inside the test's two reads.
  CHECK(copy.start_ns >= before);
  CHECK(copy.end_ns >= copy.start_ns);
  CHECK(copy.end_ns <= after);
}
