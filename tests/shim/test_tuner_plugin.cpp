// Drives libnccl-tuner-lagom.so the way NCCL does: dlopen, the exported ncclTunerPlugin_v6 / _v5 /
// _v4 structs, init per communicator, getCollInfo with the contiguous cost table cast to float**
// (src/enqueue.cc), getChunkSize (v6), finalize / destroy. The expected picks follow from the fixture
// tests/data/shim/tune-out/nccl_tuner.conf and NCCL's rule "smallest non-negative entry wins". The same
// calls through NCCL's own headers of each tag: tests/shim/test_nccl_abi_*.cpp.
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "shim/nccl_tuner_abi.h"
#include "support/run.h"

namespace {

const std::string k_fixture_dir = std::string(LAGOM_TEST_DATA_DIR) + "/shim/tune-out";
const std::string k_fixture_conf = k_fixture_dir + "/nccl_tuner.conf";
constexpr int k_algos = LAGOM_NCCL_NUM_ALGORITHMS;
constexpr int k_protos = LAGOM_NCCL_NUM_PROTOCOLS;

struct Plugin {
  void* handle = nullptr;
  lagom_nccl_tuner_v6_t* v6 = nullptr;
  lagom_nccl_tuner_v5_t* v5 = nullptr;
  lagom_nccl_tuner_v4_t* v4 = nullptr;
};

// Loaded once per test process, as NCCL does (it never unloads a tuner in 2.28.9).
const Plugin& plugin() {
  static Plugin loaded = [] {
    Plugin p;
    std::string path = std::string(LAGOM_LIB_DIR) + "/libnccl-tuner-lagom.so";
    p.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (p.handle == nullptr) FAIL("dlopen " << path << ": " << dlerror());
    p.v6 = static_cast<lagom_nccl_tuner_v6_t*>(dlsym(p.handle, "ncclTunerPlugin_v6"));
    p.v5 = static_cast<lagom_nccl_tuner_v5_t*>(dlsym(p.handle, "ncclTunerPlugin_v5"));
    p.v4 = static_cast<lagom_nccl_tuner_v4_t*>(dlsym(p.handle, "ncclTunerPlugin_v4"));
    return p;
  }();
  return loaded;
}

// NCCL's logger, recording what the plugin says.
struct LogLine {
  int level;
  unsigned long flags;
  std::string text;
};
std::vector<LogLine> g_log;
std::mutex g_log_mutex;  // NCCL's logger is thread-safe; so is this one

void capture_log(int level, unsigned long flags, const char* /*file*/, int /*line*/, const char* fmt, ...) {
  char buffer[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_log.push_back({level, flags, buffer});
}

std::vector<std::string> log_at(int level) {
  std::vector<std::string> out;
  for (const LogLine& l : g_log) {
    if (l.level == level) out.push_back(l.text);
  }
  return out;
}

// Sets (or unsets, for nullptr) an environment variable for one scope.
class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : m_name(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) m_old = old;
    m_had = old != nullptr;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~EnvGuard() {
    if (m_had) {
      setenv(m_name.c_str(), m_old.c_str(), 1);
    } else {
      unsetenv(m_name.c_str());
    }
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::string m_name;
  std::string m_old;
  bool m_had = false;
};

// The per-test environment: the config path and NCCL_DEBUG=WARN, so the plugin does not echo warnings to
// stderr (that path has its own test).
struct ConfigEnv {
  explicit ConfigEnv(const char* path) : lagom("LAGOM_TUNER_CONFIG", path) {}
  EnvGuard lagom;
  EnvGuard nccl{"NCCL_TUNER_CONFIG_FILE", nullptr};
  EnvGuard debug{"NCCL_DEBUG", "WARN"};
};

// NCCL's cost table: float[7][3], distinct positive times, some pairs ruled out (-1).
struct CostTable {
  float t[k_algos][k_protos];
  CostTable() {
    for (int a = 0; a < k_algos; ++a) {
      for (int p = 0; p < k_protos; ++p) t[a][p] = 100.0f + static_cast<float>(a * k_protos + p);
    }
    t[LAGOM_NCCL_ALGO_COLLNET_DIRECT][LAGOM_NCCL_PROTO_LL] = LAGOM_NCCL_ALGO_PROTO_IGNORE;
    t[LAGOM_NCCL_ALGO_NVLS][LAGOM_NCCL_PROTO_SIMPLE] = LAGOM_NCCL_ALGO_PROTO_IGNORE;  // no NVLS here
    t[LAGOM_NCCL_ALGO_RING][LAGOM_NCCL_PROTO_SIMPLE] = 50.0f;                         // NCCL's own choice
  }
  // What NCCL passes (src/enqueue.cc: `(float **)collCostTable`).
  float** as_nccl() { return reinterpret_cast<float**>(t); }
  // NCCL's pick: the smallest non-negative entry, first in (algo, proto) order on ties.
  std::pair<int, int> pick() const {
    std::pair<int, int> best{-1, -1};
    float best_time = 3.4e38f;
    for (int a = 0; a < k_algos; ++a) {
      for (int p = 0; p < k_protos; ++p) {
        if (t[a][p] >= 0.0f && t[a][p] < best_time) {
          best_time = t[a][p];
          best = {a, p};
        }
      }
    }
    return best;
  }
  bool same_as(const CostTable& other) const { return std::memcmp(t, other.t, sizeof t) == 0; }
};

struct Call {
  int coll;
  size_t bytes;
  int num_pipe_ops = 1;
  int reg_buff = 0;
};

struct Outcome {
  CostTable table;
  int channels;
};

// One getCollInfo as NCCL issues it; nChannels starts at NCCL's value (0 = "not set by the tuner").
Outcome collinfo(const lagom_nccl_tuner_v5_t* t, void* ctx, Call c) {
  Outcome o{CostTable{}, 0};
  REQUIRE(t->getCollInfo(ctx, c.coll, c.bytes, c.num_pipe_ops, o.table.as_nccl(), k_algos, k_protos,
                         c.reg_buff, &o.channels) == LAGOM_NCCL_SUCCESS);
  return o;
}

void* init_v5(size_t n_ranks, size_t n_nodes) {
  g_log.clear();
  void* ctx = nullptr;
  lagom_nccl_nvl_domain_info_v5_t nvl{1, 8, 8};
  static lagom_nccl_tuner_constants_v5_t constants{};
  REQUIRE(plugin().v5->init(&ctx, 0xabcdefULL, n_ranks, n_nodes, capture_log, &nvl, &constants) ==
          LAGOM_NCCL_SUCCESS);
  return ctx;
}

// Asserts that NCCL's own decision is untouched: table bit-identical, nChannels still 0.
void require_untouched(const Outcome& o) {
  CHECK(o.table.same_as(CostTable{}));
  CHECK(o.table.pick() == std::make_pair(LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_SIMPLE));
  CHECK(o.channels == 0);
}

// Every entry except (algo, proto) is as NCCL gave it.
void require_only_entry_changed(const Outcome& o, int algo, int proto) {
  CostTable original;
  for (int a = 0; a < k_algos; ++a) {
    for (int p = 0; p < k_protos; ++p) {
      if (a == algo && p == proto) {
        CHECK(o.table.t[a][p] == 0.0f);
      } else {
        CHECK(o.table.t[a][p] == original.t[a][p]);
      }
    }
  }
}

}  // namespace

TEST_CASE("the plugin exports ncclTunerPlugin_v6, v5 and v4 named lagom", "[shim]") {
  const Plugin& p = plugin();
  REQUIRE(p.v6 != nullptr);
  CHECK(std::string(p.v6->name) == "lagom");
  CHECK(p.v6->init != nullptr);
  CHECK(p.v6->getCollInfo != nullptr);
  CHECK(p.v6->finalize != nullptr);
  CHECK(p.v6->getChunkSize != nullptr);
  REQUIRE(p.v5 != nullptr);
  REQUIRE(p.v4 != nullptr);
  CHECK(std::string(p.v5->name) == "lagom");
  CHECK(std::string(p.v4->name) == "lagom");
  CHECK(p.v5->init != nullptr);
  CHECK(p.v5->getCollInfo != nullptr);
  CHECK(p.v5->finalize != nullptr);
  CHECK(p.v4->init != nullptr);
  CHECK(p.v4->getCollInfo != nullptr);
  CHECK(p.v4->destroy != nullptr);
}

TEST_CASE("v5 applies the tuned config: chosen entries win, the rest stay as NCCL gave them", "[shim]") {
  ConfigEnv env(k_fixture_conf.c_str());
  const auto* t = plugin().v5;
  void* ctx = init_v5(16, 2);
  REQUIRE(ctx != nullptr);
  REQUIRE(log_at(LAGOM_NCCL_LOG_WARN).empty());
  REQUIRE(log_at(LAGOM_NCCL_LOG_INFO).size() == 1);
  CHECK(log_at(LAGOM_NCCL_LOG_INFO)[0] == "lagom tuner: loaded 7 rules from " + k_fixture_conf +
                                              " (LAGOM_TUNER_CONFIG) for comm 0xabcdef, nRanks 16, nNodes 2");

  SECTION("line 2: small allreduce -> tree/ll on 4 channels") {
    Outcome o = collinfo(t, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1024});
    require_only_entry_changed(o, LAGOM_NCCL_ALGO_TREE, LAGOM_NCCL_PROTO_LL);
    CHECK(o.table.pick() == std::make_pair(LAGOM_NCCL_ALGO_TREE, LAGOM_NCCL_PROTO_LL));
    CHECK(o.channels == 4);
  }
  SECTION("byte ranges are inclusive at both ends") {
    Outcome last_small = collinfo(t, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 65535});
    CHECK(last_small.table.pick() == std::make_pair(LAGOM_NCCL_ALGO_TREE, LAGOM_NCCL_PROTO_LL));
    Outcome first_mid = collinfo(t, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 65536});
    require_only_entry_changed(first_mid, LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_LL128);
    CHECK(first_mid.channels == 16);
    Outcome last_mid = collinfo(t, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 67108864});
    CHECK(last_mid.table.pick() == std::make_pair(LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_LL128));
  }
  SECTION("max_bytes -1 is unbounded and channels -1 keeps NCCL's count") {
    Outcome o = collinfo(t, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, size_t{1} << 40});
    require_only_entry_changed(o, LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_SIMPLE);
    CHECK(o.channels == 0);
  }
  SECTION("numPipeOps must match where the rule names it") {
    Outcome matching = collinfo(t, ctx, {LAGOM_NCCL_FUNC_ALLGATHER, 4096, 1});
    CHECK(matching.table.pick() == std::make_pair(LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_LL));
    CHECK(matching.channels == 2);
    require_untouched(collinfo(t, ctx, {LAGOM_NCCL_FUNC_ALLGATHER, 4096, 2}));
  }
  SECTION("regBuff must match where the rule names it") {
    Outcome registered = collinfo(t, ctx, {LAGOM_NCCL_FUNC_REDUCESCATTER, 4096, 1, 1});
    require_only_entry_changed(registered, LAGOM_NCCL_ALGO_PAT, LAGOM_NCCL_PROTO_SIMPLE);
    CHECK(registered.channels == 8);
    require_untouched(collinfo(t, ctx, {LAGOM_NCCL_FUNC_REDUCESCATTER, 4096, 1, 0}));
  }
  SECTION("a pair NCCL ruled out stays ruled out and NCCL's choice and channels stand") {
    Outcome o = collinfo(t, ctx, {LAGOM_NCCL_FUNC_BROADCAST, 4096});
    require_untouched(o);
    CHECK(o.table.t[LAGOM_NCCL_ALGO_NVLS][LAGOM_NCCL_PROTO_SIMPLE] == LAGOM_NCCL_ALGO_PROTO_IGNORE);
  }
  SECTION("a channels-only rule sets channels and leaves the table alone") {
    Outcome o = collinfo(t, ctx, {LAGOM_NCCL_FUNC_REDUCE, 4096});
    CHECK(o.table.same_as(CostTable{}));
    CHECK(o.channels == 12);
  }
  SECTION("a call no rule matches leaves NCCL's choice alone") {
    require_untouched(collinfo(t, ctx, {LAGOM_NCCL_FUNC_ALLGATHER, 1048577, 1}));
    require_untouched(collinfo(t, ctx, {5 /* ncclFuncSendRecv */, 4096}));
  }
  SECTION("each decision is logged at TRACE with the rule's line") {
    collinfo(t, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1024});
    collinfo(t, ctx, {LAGOM_NCCL_FUNC_BROADCAST, 4096});
    collinfo(t, ctx, {LAGOM_NCCL_FUNC_ALLGATHER, 4096, 3});
    std::vector<std::string> traces = log_at(LAGOM_NCCL_LOG_TRACE);
    REQUIRE(traces.size() == 3);
    CHECK(traces[0] ==
          "lagom tuner: allreduce 1024 bytes numPipeOps 1 regBuff 0: rule at line 2 -> tree/ll channels 4");
    CHECK(traces[1] ==
          "lagom tuner: broadcast 4096 bytes: rule at line 7 wants nvls/simple, which NCCL ruled out; "
          "NCCL decides");
    CHECK(traces[2] == "lagom tuner: allgather 4096 bytes numPipeOps 3 regBuff 0: no rule, NCCL decides");
    for (const LogLine& l : g_log) {
      if (l.level == LAGOM_NCCL_LOG_TRACE) CHECK(l.flags == LAGOM_NCCL_TUNING);
    }
  }
  REQUIRE(t->finalize(ctx) == LAGOM_NCCL_SUCCESS);
}

TEST_CASE("nNodes and nRanks given at init select the rules of that communicator", "[shim]") {
  ConfigEnv env(k_fixture_conf.c_str());
  const auto* t = plugin().v5;
  // 8 ranks on 1 node: lines 2 and 3 (nNodes 2, nRanks 16) do not apply, line 4 (any) does.
  void* ctx = init_v5(8, 1);
  require_untouched(collinfo(t, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1024}));
  require_untouched(collinfo(t, ctx, {LAGOM_NCCL_FUNC_REDUCE, 1024}));
  Outcome big = collinfo(t, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, size_t{1} << 30});
  require_only_entry_changed(big, LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_SIMPLE);
  t->finalize(ctx);
}

TEST_CASE("v4 init, getCollInfo and destroy apply the same config", "[shim]") {
  ConfigEnv env(k_fixture_conf.c_str());
  const auto* t = plugin().v4;
  g_log.clear();
  void* ctx = nullptr;
  REQUIRE(t->init(16, 2, capture_log, &ctx) == LAGOM_NCCL_SUCCESS);
  REQUIRE(ctx != nullptr);
  CHECK(log_at(LAGOM_NCCL_LOG_INFO).size() == 1);
  CostTable table;
  int channels = 0;
  REQUIRE(t->getCollInfo(ctx, LAGOM_NCCL_FUNC_ALLREDUCE, 100000, 1, table.as_nccl(), k_algos, k_protos, 0,
                         &channels) == LAGOM_NCCL_SUCCESS);
  CHECK(table.pick() == std::make_pair(LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_LL128));
  CHECK(channels == 16);
  REQUIRE(t->destroy(ctx) == LAGOM_NCCL_SUCCESS);
}

TEST_CASE("the first matching line wins", "[shim]") {
  std::string dir = lagom::test::temp_dir("shim-first");
  std::string path = dir + "/nccl_tuner.conf";
  lagom::test::write_file(
      path,
      "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,"
      "regBuff\n"
      "allreduce,0,1000,tree,simple,3,-1,-1,-1,-1\n"
      "allreduce,0,-1,ring,ll,5,-1,-1,-1,-1\n");
  ConfigEnv env(path.c_str());
  void* ctx = init_v5(4, 1);
  Outcome small = collinfo(plugin().v5, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1000});
  CHECK(small.table.pick() == std::make_pair(LAGOM_NCCL_ALGO_TREE, LAGOM_NCCL_PROTO_SIMPLE));
  CHECK(small.channels == 3);
  Outcome large = collinfo(plugin().v5, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1001});
  CHECK(large.table.pick() == std::make_pair(LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_LL));
  CHECK(large.channels == 5);
  plugin().v5->finalize(ctx);
}

TEST_CASE("LAGOM_TUNER_CONFIG wins over NCCL_TUNER_CONFIG_FILE, which is the fallback", "[shim]") {
  std::string dir = lagom::test::temp_dir("shim-env");
  std::string other = dir + "/other.conf";
  lagom::test::write_file(other, "allreduce,-1,-1,collnet_chain,ll128,-1,-1,-1\n");  // 8 fields
  SECTION("both set") {
    ConfigEnv env(k_fixture_conf.c_str());
    EnvGuard nccl("NCCL_TUNER_CONFIG_FILE", other.c_str());
    void* ctx = init_v5(16, 2);
    CHECK(collinfo(plugin().v5, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1024}).table.pick() ==
          std::make_pair(LAGOM_NCCL_ALGO_TREE, LAGOM_NCCL_PROTO_LL));
    plugin().v5->finalize(ctx);
  }
  SECTION("only NCCL_TUNER_CONFIG_FILE") {
    ConfigEnv env(nullptr);
    EnvGuard nccl("NCCL_TUNER_CONFIG_FILE", other.c_str());
    void* ctx = init_v5(16, 2);
    REQUIRE(log_at(LAGOM_NCCL_LOG_INFO).size() == 1);
    CHECK(log_at(LAGOM_NCCL_LOG_INFO)[0].find("(NCCL_TUNER_CONFIG_FILE)") != std::string::npos);
    CHECK(collinfo(plugin().v5, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1024}).table.pick() ==
          std::make_pair(LAGOM_NCCL_ALGO_COLLNET_CHAIN, LAGOM_NCCL_PROTO_LL128));
    plugin().v5->finalize(ctx);
  }
}

TEST_CASE("each communicator keeps its own rules", "[shim]") {
  std::string dir = lagom::test::temp_dir("shim-comms");
  std::string tree = dir + "/tree.conf";
  std::string ring = dir + "/ring.conf";
  lagom::test::write_file(tree, "allreduce,-1,-1,tree,simple,2,-1,-1,-1,-1\n");
  lagom::test::write_file(ring, "allreduce,-1,-1,ring,ll,6,-1,-1,-1,-1\n");
  void* ctx_tree = nullptr;
  void* ctx_ring = nullptr;
  {
    ConfigEnv env(tree.c_str());
    ctx_tree = init_v5(8, 1);
  }
  {
    ConfigEnv env(ring.c_str());
    ctx_ring = init_v5(8, 1);
  }
  // Concurrent calls on two communicators, as two NCCL streams of one process may issue them.
  bool tree_ok = true;
  bool ring_ok = true;
  auto hammer = [](void* ctx, std::pair<int, int> expected, int channels, bool& ok) {
    for (int i = 0; i < 2000; ++i) {
      CostTable table;
      int n = 0;
      plugin().v5->getCollInfo(ctx, LAGOM_NCCL_FUNC_ALLREDUCE, 4096 + static_cast<size_t>(i), 1,
                               table.as_nccl(), k_algos, k_protos, 0, &n);
      ok = ok && table.pick() == expected && n == channels;
    }
  };
  std::thread a(hammer, ctx_tree, std::make_pair(LAGOM_NCCL_ALGO_TREE, LAGOM_NCCL_PROTO_SIMPLE), 2,
                std::ref(tree_ok));
  std::thread b(hammer, ctx_ring, std::make_pair(LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_LL), 6,
                std::ref(ring_ok));
  a.join();
  b.join();
  CHECK(tree_ok);
  CHECK(ring_ok);
  plugin().v5->finalize(ctx_tree);
  plugin().v5->finalize(ctx_ring);
}

TEST_CASE("a bad config is one warning naming the file and line, and NCCL's choice stands", "[shim]") {
  struct Bad {
    const char* text;
    int line;
    const char* why;
  };
  const std::string header =
      "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff\n";
  const Bad cases[] = {
      {"allreduce,0,-1,ring,simple,4,-1,-1,-1,-1\nallgatherv,0,-1,ring,simple,4,-1,-1,-1,-1\n", 3,
       "unknown collective 'allgatherv'"},
      {"allreduce,0,-1,star,simple,4,-1,-1,-1,-1\n", 2, "unknown algorithm 'star'"},
      {"allreduce,0,-1,ring,ll64,4,-1,-1,-1,-1\n", 2, "unknown protocol 'll64'"},
      {"allreduce,0,-1,ring,-1,4,-1,-1,-1,-1\n", 2,
       "algorithm and protocol must both be named or both be -1"},
      {"allreduce,0,-1,ring,simple,65,-1,-1,-1,-1\n", 2, "channels 65 is out of range (-1 or 1..64)"},
      {"allreduce,0,-1,ring,simple,0,-1,-1,-1,-1\n", 2, "channels 0 is out of range (-1 or 1..64)"},
      {"allreduce,0,-1,ring,simple,4,-1,-1,-1,2\n", 2, "regBuff 2 is out of range (-1 or 0..1)"},
      {"allreduce,-2,-1,ring,simple,4,-1,-1,-1,-1\n", 2,
       "min_bytes -2 is out of range (-1 or 0..9223372036854775807)"},
      {"allreduce,99999999999999999999,-1,ring,simple,4,-1,-1,-1,-1\n", 2,
       "min_bytes is not an integer: '99999999999999999999'"},
      {"allreduce,100,10,ring,simple,4,-1,-1,-1,-1\n", 2, "min_bytes 100 is above max_bytes 10"},
      {"allreduce,1K,-1,ring,simple,4,-1,-1,-1,-1\n", 2, "min_bytes is not an integer: '1K'"},
      {"allreduce,0,-1,ring,simple,4,0,-1,-1,-1\n", 2, "nNodes 0 is out of range (-1 or 1..2147483647)"},
      {"allreduce,0,-1,ring,simple,4,-1\n", 2,
       "expected 8 to 11 comma-separated fields "
       "(collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,"
       "nRanks,numPipeOps,regBuff[,chunk]), got 7"},
      {"allreduce,0,-1,ring,simple,4,-1,-1,-1,-1,1048576,7\n", 2,
       "expected 8 to 11 comma-separated fields "
       "(collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,"
       "nRanks,numPipeOps,regBuff[,chunk]), got 12"},
      {"allreduce 0 -1 ring simple\n", 2,
       "expected 8 to 11 comma-separated fields "
       "(collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,"
       "nRanks,numPipeOps,regBuff[,chunk]), got 1"},
      {"allreduce,0,-1,ring,simple,4,-1,-1,-1,-1,0\n", 2, "chunk 0 is out of range (-1 or 1..2147483647)"},
      {"allreduce,0,-1,ring,simple,4,-1,-1,-1,-1,2147483648\n", 2,
       "chunk 2147483648 is out of range (-1 or 1..2147483647)"},
      {"allreduce,0,-1,ring,simple,4,-1,-1,-1,-1,1M\n", 2, "chunk is not an integer: '1M'"},
  };
  std::string dir = lagom::test::temp_dir("shim-bad");
  std::string path = dir + "/nccl_tuner.conf";
  for (const Bad& bad : cases) {
    INFO(bad.text);
    lagom::test::write_file(path, header + bad.text);
    ConfigEnv env(path.c_str());
    void* ctx = init_v5(16, 2);
    std::vector<std::string> warnings = log_at(LAGOM_NCCL_LOG_WARN);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] == "lagom tuner: " + path + ":" + std::to_string(bad.line) + ": " + bad.why +
                             "; ignoring the file, NCCL keeps its own choices");
    CHECK(log_at(LAGOM_NCCL_LOG_INFO).empty());
    require_untouched(collinfo(plugin().v5, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1024}));
    plugin().v5->finalize(ctx);
  }
}

TEST_CASE("the 8- and 9-field forms of NVIDIA's example plugin are accepted", "[shim]") {
  std::string dir = lagom::test::temp_dir("shim-short");
  std::string path = dir + "/nccl_tuner.conf";
  lagom::test::write_file(path,
                          "  AllReduce , 0 , 100 , Tree , LL128 , 7 , -1 , -1\r\n"
                          "allreduce,101,-1,NVLSTree,Simple,-1,-1,-1,2\n");
  ConfigEnv env(path.c_str());
  void* ctx = init_v5(16, 2);
  REQUIRE(log_at(LAGOM_NCCL_LOG_WARN).empty());
  Outcome small = collinfo(plugin().v5, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 50, 3, 1});
  CHECK(small.table.pick() == std::make_pair(LAGOM_NCCL_ALGO_TREE, LAGOM_NCCL_PROTO_LL128));
  CHECK(small.channels == 7);
  Outcome large = collinfo(plugin().v5, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 500, 2, 1});
  CHECK(large.table.pick() == std::make_pair(LAGOM_NCCL_ALGO_NVLS_TREE, LAGOM_NCCL_PROTO_SIMPLE));
  require_untouched(collinfo(plugin().v5, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 500, 1, 1}));
  plugin().v5->finalize(ctx);
}

TEST_CASE("a missing, unreadable or unset config is one warning and NCCL's defaults", "[shim]") {
  std::string dir = lagom::test::temp_dir("shim-missing");
  std::string missing = dir + "/nope.conf";
  struct Case {
    const char* name;
    const char* path;
    std::string warning;
  };
  const Case cases[] = {
      {"missing file", missing.c_str(),
       "lagom tuner: " + missing +
           ": cannot open: No such file or directory; ignoring the file, NCCL keeps its own "
           "choices"},
      {"a directory", dir.c_str(),
       "lagom tuner: " + dir +
           ": cannot read: Is a directory; ignoring the file, NCCL keeps its own choices"},
      {"unset", nullptr,
       "lagom tuner: neither LAGOM_TUNER_CONFIG nor NCCL_TUNER_CONFIG_FILE is set; NCCL keeps its own "
       "choices"},
      {"empty", "",
       "lagom tuner: neither LAGOM_TUNER_CONFIG nor NCCL_TUNER_CONFIG_FILE is set; NCCL keeps its own "
       "choices"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    ConfigEnv env(c.path);
    void* ctx = init_v5(16, 2);
    REQUIRE(ctx != nullptr);
    REQUIRE(log_at(LAGOM_NCCL_LOG_WARN) == std::vector<std::string>{c.warning});
    require_untouched(collinfo(plugin().v5, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1024}));
    plugin().v5->finalize(ctx);
  }
}

TEST_CASE("random bytes as a config never crash and never change NCCL's choice", "[shim][fuzz]") {
  std::string dir = lagom::test::temp_dir("shim-fuzz");
  std::string path = dir + "/nccl_tuner.conf";
  std::mt19937 rng(20240611);  // fixed seed: a failure reproduces
  // Bytes biased towards the config's alphabet so that some inputs get deep into the parser.
  const std::string alphabet = "allreduce,tree,ring,ll128,simple,-1,0123456789\n#\r \t";
  ConfigEnv env(path.c_str());
  const Call calls[] = {{LAGOM_NCCL_FUNC_ALLREDUCE, 0},
                        {LAGOM_NCCL_FUNC_ALLREDUCE, 1 << 20},
                        {LAGOM_NCCL_FUNC_ALLGATHER, 4096},
                        {LAGOM_NCCL_FUNC_BROADCAST, 1}};
  for (int iteration = 0; iteration < 400; ++iteration) {
    std::string bytes(rng() % 600, '\0');
    for (char& c : bytes) {
      c = (rng() % 2 == 0) ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
    }
    INFO("iteration " << iteration);
    lagom::test::write_file(path, bytes);
    void* ctx = init_v5(16, 2);
    REQUIRE(ctx != nullptr);
    for (const Call& call : calls) require_untouched(collinfo(plugin().v5, ctx, call));
    plugin().v5->finalize(ctx);
  }
}

TEST_CASE("a mutated config never crashes and is applied only when no warning was given", "[shim][fuzz]") {
  std::string dir = lagom::test::temp_dir("shim-mutate");
  std::string path = dir + "/nccl_tuner.conf";
  const std::string valid = lagom::test::read_file(k_fixture_conf);
  REQUIRE(!valid.empty());
  std::mt19937 rng(7);
  ConfigEnv env(path.c_str());
  int rejected = 0;
  for (int iteration = 0; iteration < 400; ++iteration) {
    std::string text = valid;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          text.erase(at, 1 + rng() % 8);
          break;
        default:
          text.insert(at, 1, ",-0x9\n"[rng() % 6]);
          break;
      }
    }
    INFO("iteration " << iteration << ": " << text);
    lagom::test::write_file(path, text);
    void* ctx = init_v5(16, 2);
    REQUIRE(ctx != nullptr);
    bool warned = !log_at(LAGOM_NCCL_LOG_WARN).empty();
    CHECK(warned != (log_at(LAGOM_NCCL_LOG_INFO).size() == 1));
    Outcome o = collinfo(plugin().v5, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1024});
    if (warned) {
      ++rejected;
      require_untouched(o);
    }
    plugin().v5->finalize(ctx);
  }
  // Most single-byte edits break a line; pinned so that the test keeps exercising the reject path.
  CHECK(rejected > 200);
}

TEST_CASE("with NCCL_DEBUG unset a warning is also printed to stderr once per process", "[shim]") {
  std::string dir = lagom::test::temp_dir("shim-stderr");
  std::string path = dir + "/broken.conf";
  lagom::test::write_file(path, "allreduce,0,-1,ring,simple,99,-1,-1,-1,-1\n");
  std::string captured = dir + "/stderr.txt";
  EnvGuard lagom_env("LAGOM_TUNER_CONFIG", path.c_str());
  EnvGuard debug("NCCL_DEBUG", nullptr);
  std::fflush(stderr);
  int saved = dup(2);
  std::FILE* sink = std::fopen(captured.c_str(), "w");
  REQUIRE(sink != nullptr);
  dup2(fileno(sink), 2);
  for (int comm = 0; comm < 3; ++comm) plugin().v5->finalize(init_v5(16, 2));
  {
    EnvGuard with_debug("NCCL_DEBUG", "WARN");  // NCCL prints it then: no echo
    plugin().v5->finalize(init_v5(16, 2));
  }
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::fclose(sink);
  CHECK(lagom::test::read_file(captured) ==
        "lagom: warning: tuner: " + path +
            ":1: channels 99 is out of range (-1 or 1..64); ignoring the file, "
            "NCCL keeps its own choices\n");
}

TEST_CASE("null context, null logger and null outputs are tolerated", "[shim]") {
  ConfigEnv env(k_fixture_conf.c_str());
  const auto* t = plugin().v5;
  CostTable table;
  int channels = 0;
  CHECK(t->getCollInfo(nullptr, LAGOM_NCCL_FUNC_ALLREDUCE, 1024, 1, table.as_nccl(), k_algos, k_protos, 0,
                       &channels) == LAGOM_NCCL_SUCCESS);
  CHECK(table.same_as(CostTable{}));
  CHECK(t->finalize(nullptr) == LAGOM_NCCL_SUCCESS);
  CHECK(t->init(nullptr, 1, 16, 2, capture_log, nullptr, nullptr) == LAGOM_NCCL_SUCCESS);
  void* ctx = nullptr;
  REQUIRE(t->init(&ctx, 1, 16, 2, nullptr, nullptr, nullptr) == LAGOM_NCCL_SUCCESS);
  CHECK(t->getCollInfo(ctx, LAGOM_NCCL_FUNC_ALLREDUCE, 1024, 1, nullptr, k_algos, k_protos, 0, nullptr) ==
        LAGOM_NCCL_SUCCESS);
  // An older NCCL with fewer algorithms: a rule naming an index beyond numAlgo is skipped.
  CHECK(t->getCollInfo(ctx, LAGOM_NCCL_FUNC_REDUCESCATTER, 1024, 1, table.as_nccl(), LAGOM_NCCL_ALGO_PAT,
                       k_protos, 1, &channels) == LAGOM_NCCL_SUCCESS);
  CHECK(table.same_as(CostTable{}));
  CHECK(channels == 0);
  CHECK(t->finalize(ctx) == LAGOM_NCCL_SUCCESS);
}

namespace {

// What `lagom adapt` does to a config: a new file renamed over the old one.
void replace_file(const std::string& path, const std::string& text) {
  lagom::test::write_file(path + ".tmp", text);
  REQUIRE(std::rename((path + ".tmp").c_str(), path.c_str()) == 0);
}

std::vector<std::string> warnings_now() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  return log_at(LAGOM_NCCL_LOG_WARN);
}

// Which of the test's tables a call applied: 0, 1, 2, or -1 for anything else (a mix, or no rule).
int table_of(const CostTable& table, int channels) {
  const auto pick = table.pick();
  if (pick == std::make_pair(LAGOM_NCCL_ALGO_TREE, LAGOM_NCCL_PROTO_LL) && channels == 4) return 0;
  if (pick == std::make_pair(LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_LL128) && channels == 8) return 1;
  if (pick == std::make_pair(LAGOM_NCCL_ALGO_TREE, LAGOM_NCCL_PROTO_LL128) && channels == 2) return 2;
  return -1;
}

// NCCL's logger keeping only warnings: the concurrent test makes millions of calls, each with a TRACE line.
void capture_warnings(int level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  if (level != LAGOM_NCCL_LOG_WARN) return;
  char buffer[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  (void)file;
  (void)line;
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_log.push_back({level, flags, buffer});
}

void* init_v5_warnings_only() {
  g_log.clear();
  void* ctx = nullptr;
  lagom_nccl_nvl_domain_info_v5_t nvl{1, 8, 8};
  static lagom_nccl_tuner_constants_v5_t constants{};
  REQUIRE(plugin().v5->init(&ctx, 0xabcdefULL, 16, 2, capture_warnings, &nvl, &constants) ==
          LAGOM_NCCL_SUCCESS);
  return ctx;
}

}  // namespace

TEST_CASE(
    "a replaced config is reloaded under concurrent calls: each call sees a whole table, a bad file keeps "
    "the old",
    "[shim]") {
  const std::string dir = lagom::test::temp_dir("shim-reload");
  const std::string path = dir + "/nccl_tuner.conf";
  // Table 1 puts a broadcast rule first: a reader that saw only part of it would find no allreduce rule.
  const std::string tables[] = {
      "allreduce,0,-1,tree,ll,4,-1,-1,-1,-1\n",
      "broadcast,0,-1,ring,ll,2,-1,-1,-1,-1\nallreduce,0,-1,ring,ll128,8,-1,-1,-1,-1\n",
      "allreduce,0,65535,tree,ll128,2,-1,-1,-1,-1\nallreduce,65536,-1,tree,ll128,2,-1,-1,-1,-1\n",
  };
  replace_file(path, tables[0]);
  ConfigEnv env(path.c_str());
  EnvGuard reload("LAGOM_TUNER_RELOAD_MS", "1");
  const auto* t = plugin().v5;
  void* ctx = init_v5_warnings_only();
  REQUIRE(ctx != nullptr);

  std::atomic<bool> stop{false};
  std::atomic<int> newest_seen{0};
  std::atomic<long> foreign{0}, backwards{0}, calls{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      int last = 0;
      while (!stop.load()) {
        CostTable table;
        int channels = 0;
        t->getCollInfo(ctx, LAGOM_NCCL_FUNC_ALLREDUCE, 1024, 1, table.as_nccl(), k_algos, k_protos, 0,
                       &channels);
        const int seen = table_of(table, channels);
        calls.fetch_add(1);
        if (seen < 0) {
          foreign.fetch_add(1);
          continue;
        }
        if (seen < last) backwards.fetch_add(1);  // a call after a newer table must not see an older one
        last = seen;
        int newest = newest_seen.load();
        while (seen > newest && !newest_seen.compare_exchange_weak(newest, seen)) {
        }
      }
    });
  }
  // Waits (bounded: 10 s on a loaded machine) until some call applied table `n`.
  auto wait_for_table = [&](int n) {
    for (int i = 0; i < 10000 && newest_seen.load() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return newest_seen.load() >= n;
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  replace_file(path, tables[1]);
  CHECK(wait_for_table(1));
  // A malformed new file: the old rules stay, one warning however many checks see it.
  replace_file(path, "allreduce,0,-1,ring,simple,99,-1,-1,-1,-1\n");
  // Waits (bounded, as above) for the first check to see the bad file, rather than a fixed sleep that a
  // loaded machine or valgrind outlasts; then a few hundred more calls, whose checks see the same file.
  for (int i = 0; i < 10000 && warnings_now().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const long calls_at_warning = calls.load();
  for (int i = 0; i < 10000 && calls.load() < calls_at_warning + 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const long before_fix = calls.load();
  CHECK(newest_seen.load() == 1);
  CHECK(warnings_now() ==
        std::vector<std::string>{"lagom tuner: " + path +
                                 ":1: channels 99 is out of range (-1 or 1..64); keeping the "
                                 "rules loaded before (generation 2)"});
  replace_file(path, tables[2]);
  CHECK(wait_for_table(2));
  stop = true;
  for (auto& thread : threads) thread.join();
  CHECK(before_fix > 0);
  CHECK(foreign.load() == 0);
  CHECK(backwards.load() == 0);
  // Calls made later, and communicators created later, use the newest rules.
  Outcome later = collinfo(t, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1 << 20});
  CHECK(table_of(later.table, later.channels) == 2);
  void* fresh = init_v5(16, 2);
  Outcome created_later = collinfo(t, fresh, {LAGOM_NCCL_FUNC_ALLREDUCE, 1024});
  CHECK(table_of(created_later.table, created_later.channels) == 2);
  t->finalize(fresh);
  t->finalize(ctx);
}

TEST_CASE("LAGOM_TUNER_RELOAD_MS=0 never reloads", "[shim]") {
  const std::string dir = lagom::test::temp_dir("shim-noreload");
  const std::string path = dir + "/nccl_tuner.conf";
  replace_file(path, "allreduce,0,-1,tree,ll,4,-1,-1,-1,-1\n");
  ConfigEnv env(path.c_str());
  EnvGuard reload("LAGOM_TUNER_RELOAD_MS", "0");
  void* ctx = init_v5(16, 2);
  replace_file(path, "allreduce,0,-1,ring,ll128,8,-1,-1,-1,-1\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  Outcome o = collinfo(plugin().v5, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1024});
  CHECK(table_of(o.table, o.channels) == 0);
  plugin().v5->finalize(ctx);
}

namespace {

void* init_v6(size_t n_ranks, size_t n_nodes) {
  g_log.clear();
  void* ctx = nullptr;
  lagom_nccl_nvl_domain_info_v5_t nvl{1, 8, 8};
  static lagom_nccl_tuner_constants_v5_t constants{};
  REQUIRE(plugin().v6->init(&ctx, 0x6ULL, n_ranks, n_nodes, capture_log, &nvl, &constants) ==
          LAGOM_NCCL_SUCCESS);
  return ctx;
}

// getCollInfo on a table where NCCL ruled out `ruled_out` (algo, proto) pairs, then getChunkSize with
// NCCL's pick and its chunk 131072; returns the chunk NCCL keeps.
std::size_t chunk_after(void* ctx, Call c, std::vector<std::pair<int, int>> ruled_out = {}) {
  CostTable table;
  for (auto [a, p] : ruled_out) table.t[a][p] = LAGOM_NCCL_ALGO_PROTO_IGNORE;
  int channels = 0;
  REQUIRE(plugin().v6->getCollInfo(ctx, c.coll, c.bytes, c.num_pipe_ops, table.as_nccl(), k_algos, k_protos,
                                   c.reg_buff, &channels) == LAGOM_NCCL_SUCCESS);
  const auto [algo, proto] = table.pick();
  std::size_t chunk = 131072;
  REQUIRE(plugin().v6->getChunkSize(ctx, c.coll, c.bytes / 8, algo, proto, 1, &chunk) == LAGOM_NCCL_SUCCESS);
  return chunk;
}

}  // namespace

TEST_CASE("v6 applies a line's chunk only to the pair it chose, and never to a later call", "[shim]") {
  const std::string path = lagom::test::temp_dir("shim-chunk") + "/nccl_tuner.conf";
  lagom::test::write_file(path,
                          "allgather,0,1000000,ring,simple,2,-1,-1,-1,-1,1048576\n"
                          "allreduce,0,1000,ring,ll,-1,-1,-1,-1,-1,8\n"
                          "allreduce,1001,-1,ring,ll128,-1,-1,-1,-1,-1,3840\n");
  ConfigEnv env(path.c_str());
  void* ctx = init_v6(16, 2);
  REQUIRE(log_at(LAGOM_NCCL_LOG_WARN).empty());
  SECTION("the chunk of the line that matched") {
    CHECK(chunk_after(ctx, {LAGOM_NCCL_FUNC_ALLGATHER, 4096}) == 1048576);
    // LL128's grain (3840 bytes) is the smallest chunk NCCL can run; exactly one grain is applied.
    CHECK(chunk_after(ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 4096}) == 3840);
  }
  SECTION("a chunk below the protocol's grain would be aligned to 0 by NCCL: NCCL's chunk stands") {
    CHECK(chunk_after(ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 512}) == 131072);
    std::vector<std::string> traces = log_at(LAGOM_NCCL_LOG_TRACE);
    REQUIRE(!traces.empty());
    CHECK(
        traces.back() ==
        "lagom tuner: allreduce 64 bytes ring/ll: chunk 8 is below the protocol's grain of 16 bytes; NCCL's "
        "chunk 131072 stands");
  }
  SECTION("a pair NCCL ruled out: NCCL picks another, and keeps its own chunk for it") {
    CHECK(chunk_after(ctx, {LAGOM_NCCL_FUNC_ALLGATHER, 4096},
                      {{LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_SIMPLE}}) == 131072);
  }
  SECTION("a call no line matches after one that did: NCCL's chunk") {
    CHECK(chunk_after(ctx, {LAGOM_NCCL_FUNC_ALLGATHER, 4096}) == 1048576);
    CHECK(chunk_after(ctx, {LAGOM_NCCL_FUNC_ALLGATHER, 2000000}) == 131072);
  }
  SECTION("getChunkSize for another pair than the line's, or outside the tuner's collectives: unchanged") {
    CHECK(chunk_after(ctx, {LAGOM_NCCL_FUNC_ALLGATHER, 4096}) == 1048576);
    std::size_t chunk = 131072;
    plugin().v6->getChunkSize(ctx, LAGOM_NCCL_FUNC_ALLGATHER, 512, LAGOM_NCCL_ALGO_TREE,
                              LAGOM_NCCL_PROTO_SIMPLE, 1, &chunk);
    CHECK(chunk == 131072);
    plugin().v6->getChunkSize(ctx, 8 /* ncclFuncAlltoAll in 2.30 */, 512, 1, 2, 1, &chunk);
    plugin().v6->getChunkSize(ctx, LAGOM_NCCL_FUNC_ALLGATHER, 512, 99, -1, 1, &chunk);
    CHECK(chunk == 131072);
    CHECK(plugin().v6->getChunkSize(ctx, LAGOM_NCCL_FUNC_ALLGATHER, 512, 1, 2, 1, nullptr) ==
          LAGOM_NCCL_SUCCESS);
    CHECK(plugin().v6->getChunkSize(nullptr, LAGOM_NCCL_FUNC_ALLGATHER, 512, 1, 2, 1, &chunk) ==
          LAGOM_NCCL_SUCCESS);
  }
  plugin().v6->finalize(ctx);
}

TEST_CASE("a config without the chunk column is valid for v6, and v5 warns once of a chunk it cannot apply",
          "[shim]") {
  SECTION("the fixture (10 fields) under v6: no warning, NCCL's chunks") {
    ConfigEnv env(k_fixture_conf.c_str());
    void* ctx = init_v6(16, 2);
    CHECK(log_at(LAGOM_NCCL_LOG_WARN).empty());
    CHECK(chunk_after(ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1024}) == 131072);
    plugin().v6->finalize(ctx);
  }
  SECTION("a chunk under v5: one warning, the rest of the line applies") {
    const std::string path = lagom::test::temp_dir("shim-chunk-v5") + "/nccl_tuner.conf";
    lagom::test::write_file(path, "allreduce,0,-1,tree,ll,4,-1,-1,-1,-1,65536\n");
    ConfigEnv env(path.c_str());
    void* ctx = init_v5(16, 2);
    CHECK(log_at(LAGOM_NCCL_LOG_WARN) ==
          std::vector<std::string>{"lagom tuner: " + path +
                                   ": 1 line set a chunk, which the tuner v5 interface cannot apply (NCCL "
                                   "2.30's v6 can); their algorithm, protocol and channels apply, NCCL keeps "
                                   "its own chunk"});
    Outcome o = collinfo(plugin().v5, ctx, {LAGOM_NCCL_FUNC_ALLREDUCE, 1024});
    CHECK(o.table.pick() == std::make_pair(LAGOM_NCCL_ALGO_TREE, LAGOM_NCCL_PROTO_LL));
    CHECK(o.channels == 4);
    CHECK(log_at(LAGOM_NCCL_LOG_WARN).size() == 1);
    plugin().v5->finalize(ctx);
  }
}
