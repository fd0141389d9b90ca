// The harness the ABI tests share (tests/shim/test_nccl_abi_<tag>.cpp). Each test includes one NCCL
// tag's own plugin headers (tests/data/nccl-abi/<tag>/, inside a namespace of its own), holds Lagom's
// declarations (shim/nccl_tuner_abi.h) against them field by field, and drives libnccl-tuner-lagom.so
// through NCCL's declared types the way that NCCL does: dlsym of the symbol it looks for, init,
// getCollInfo with the contiguous cost table, getChunkSize (v6) for each part of the collective.
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/types.h>

#include "shim/nccl_profiler_abi.h"
#include "shim/nccl_tuner_abi.h"
#include "support/run.h"

// The tests call through NCCL's function types (enum parameters: ncclFunc_t, ncclDebugLogLevel) into the
// plugin's int parameters, as NCCL does: the same call on every ABI NCCL supports (an enum of int range is
// passed as an int). Clang's -fsanitize=function checks the declared type of an indirect call and would
// report that difference, so the callers opt out of that one check. The logger is called the other way,
// by the plugin (which cannot opt out), so it has the plugin's type (capture_log, below).
#if defined(__clang__)
#define LAGOM_NCCL_ABI_CALL __attribute__((no_sanitize("function")))
#else
#define LAGOM_NCCL_ABI_CALL
#endif

// A field of Lagom's struct at the offset and of the size of NCCL's.
#define LAGOM_SAME_FIELD(Nccl, Lagom, field)                      \
  static_assert(offsetof(Nccl, field) == offsetof(Lagom, field)); \
  static_assert(sizeof(Nccl::field) == sizeof(Lagom::field))

namespace lagom::abi_test {

// The plugin, opened once per process as NCCL opens it (RTLD_NOW | RTLD_LOCAL, never closed).
inline void* tuner_library() {
  static void* handle = [] {
    const std::string path = std::string(LAGOM_LIB_DIR) + "/libnccl-tuner-lagom.so";
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) FAIL("dlopen " << path << ": " << dlerror());
    return h;
  }();
  return handle;
}

template <typename T>
T* tuner_symbol(const char* name) {
  return static_cast<T*>(dlsym(tuner_library(), name));
}

// The logger handed to the plugin. The plugin calls it through its C mirror's type, the level an int
// (lagom_nccl_logger_t, shim/nccl_tuner_abi.h), as any C caller of NCCL's logger does; a C++ call through a
// pointer of another function type is undefined (clang's -fsanitize=function reports it), so the logger has
// exactly the plugin's type and is cast to the tag's ncclDebugLogger_t only to be handed over (nccl_logger).
struct LogLine {
  int level;
  std::string text;
};
inline std::mutex g_log_mutex;
inline std::vector<LogLine> g_log;

inline void capture_log(int level, unsigned long /*flags*/, const char* /*file*/, int /*line*/,
                        const char* fmt, ...) {
  char buffer[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_log.push_back({level, buffer});
}

// capture_log as the tag's ncclDebugLogger_t (through void (*)(), the type every compiler lets a function
// pointer pass through without a cast-function-type warning).
template <typename Logger>
Logger nccl_logger() {
  return reinterpret_cast<Logger>(reinterpret_cast<void (*)()>(&capture_log));
}

inline std::vector<std::string> log_at(int level) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  std::vector<std::string> out;
  for (const LogLine& l : g_log) {
    if (l.level == level) out.push_back(l.text);
  }
  return out;
}

inline void clear_log() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_log.clear();
}

// The config every tag's harness loads: two allgather op classes split at 288368640 bytes (as `lagom
// tune` bins them), two allreduce classes split at 65535, the second on LL128 with a chunk of 31 LL128
// grains, and a channels-only reducescatter line with a chunk (for whatever NCCL picks).
inline const char* const k_config =
    "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff,chunk\n"
    "allgather,0,288368640,ring,simple,2,2,16,-1,-1,1048576\n"
    "allgather,288368641,-1,ring,simple,4,2,16,-1,-1,262144\n"
    "allreduce,0,65535,tree,ll,4,2,16,-1,-1,-1\n"
    "allreduce,65536,-1,ring,ll128,16,2,16,-1,-1,119040\n"
    "reducescatter,0,-1,-1,-1,8,2,16,-1,-1,524288\n";
inline constexpr int k_config_chunk_lines = 4;

// What NCCL computed before it asks getChunkSize (any value: the plugin either keeps it or replaces it).
inline constexpr std::size_t k_nccl_chunk = 131072;
inline constexpr long long k_keep = -1;

// A collective on a 16-rank, 2-node communicator, and what the config makes of it.
struct Case {
  int coll;
  std::size_t bytes;
  int algo;  // NCCL's pick after getCollInfo
  int proto;
  int channels;     // nChannels the plugin returns (0: left as NCCL's)
  long long chunk;  // what getChunkSize leaves (k_keep: NCCL's k_nccl_chunk)
};

// Both sides of every size-bin edge of k_config, and the ends.
inline std::vector<Case> cases() {
  return {
      {LAGOM_NCCL_FUNC_ALLGATHER, 0, LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_SIMPLE, 2, 1048576},
      {LAGOM_NCCL_FUNC_ALLGATHER, 288368640, LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_SIMPLE, 2, 1048576},
      {LAGOM_NCCL_FUNC_ALLGATHER, 288368641, LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_SIMPLE, 4, 262144},
      {LAGOM_NCCL_FUNC_ALLGATHER, std::size_t{1} << 40, LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_SIMPLE, 4,
       262144},
      {LAGOM_NCCL_FUNC_ALLREDUCE, 65535, LAGOM_NCCL_ALGO_TREE, LAGOM_NCCL_PROTO_LL, 4, k_keep},
      {LAGOM_NCCL_FUNC_ALLREDUCE, 65536, LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_LL128, 16, 119040},
      {LAGOM_NCCL_FUNC_REDUCESCATTER, 4096, LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_SIMPLE, 8, 524288},
      {LAGOM_NCCL_FUNC_BROADCAST, 4096, LAGOM_NCCL_ALGO_RING, LAGOM_NCCL_PROTO_SIMPLE, 0, k_keep},
  };
}

// NCCL's cost table: every pair allowed, distinct times, NCCL's own pick ring/simple.
struct CostTable {
  float t[LAGOM_NCCL_NUM_ALGORITHMS][LAGOM_NCCL_NUM_PROTOCOLS];
  CostTable() {
    for (int a = 0; a < LAGOM_NCCL_NUM_ALGORITHMS; ++a) {
      for (int p = 0; p < LAGOM_NCCL_NUM_PROTOCOLS; ++p) {
        t[a][p] = 100.0f + static_cast<float>(a * LAGOM_NCCL_NUM_PROTOCOLS + p);
      }
    }
    t[LAGOM_NCCL_ALGO_RING][LAGOM_NCCL_PROTO_SIMPLE] = 50.0f;
  }
  float** as_nccl() { return reinterpret_cast<float**>(t); }
  std::pair<int, int> pick() const {
    std::pair<int, int> best{-1, -1};
    float best_time = 3.4e38f;
    for (int a = 0; a < LAGOM_NCCL_NUM_ALGORITHMS; ++a) {
      for (int p = 0; p < LAGOM_NCCL_NUM_PROTOCOLS; ++p) {
        if (t[a][p] >= 0.0f && t[a][p] < best_time) {
          best_time = t[a][p];
          best = {a, p};
        }
      }
    }
    return best;
  }
};

// Sets an environment variable (nullptr: unsets it) for one scope.
class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : m_name(name) {
    const char* old = std::getenv(name);
    m_had = old != nullptr;
    if (m_had) m_old = old;
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

// k_config written to a fresh folder and named by LAGOM_TUNER_CONFIG, NCCL_DEBUG=WARN.
struct ConfigScope {
  explicit ConfigScope(const std::string& tag)
      : path(lagom::test::temp_dir("nccl-abi-" + tag) + "/nccl_tuner.conf") {
    lagom::test::write_file(path, k_config);
  }
  std::string path;
  EnvGuard config{"LAGOM_TUNER_CONFIG", path.c_str()};
  EnvGuard fallback{"NCCL_TUNER_CONFIG_FILE", nullptr};
  EnvGuard debug{"NCCL_DEBUG", "WARN"};
  EnvGuard reload{"LAGOM_TUNER_RELOAD_MS", "0"};
};

// The warning a v4/v5 interface gives for k_config's chunk lines.
inline std::string unapplied_chunk_warning(const std::string& path, const char* interface) {
  return "lagom tuner: " + path + ": " + std::to_string(k_config_chunk_lines) +
         " lines set a chunk, which the tuner " + interface +
         " interface cannot apply (NCCL 2.30's v6 can); their algorithm, protocol and channels apply, NCCL "
         "keeps its own chunk";
}

// One collective through getCollInfo as NCCL issues it (`Func`: the tag's ncclFunc_t); returns NCCL's pick
// and the channels the plugin set.
struct Decision {
  std::pair<int, int> pick;
  int channels;
};
template <typename Func, typename Tuner>
LAGOM_NCCL_ABI_CALL Decision coll_info(const Tuner* tuner, void* ctx, const Case& c) {
  CostTable table;
  int channels = 0;
  REQUIRE(tuner->getCollInfo(ctx, static_cast<Func>(c.coll), c.bytes, 1, table.as_nccl(),
                             LAGOM_NCCL_NUM_ALGORITHMS, LAGOM_NCCL_NUM_PROTOCOLS, 0, &channels) == 0);
  return {table.pick(), channels};
}

// The v6 step after it: NCCL 2.30 asks getChunkSize once per part of the collective it spreads over
// channels, with that part's bytes and nChannels 1 (NVIDIA/nccl@v2.30.7-1:src/enqueue.cc:717-737); the
// harness asks for a sixteenth, as a 16-channel split would.
template <typename Func, typename Tuner>
LAGOM_NCCL_ABI_CALL std::size_t chunk_size(const Tuner* tuner, void* ctx, const Case& c,
                                           std::pair<int, int> pick) {
  std::size_t chunk = k_nccl_chunk;
  REQUIRE(tuner->getChunkSize(ctx, static_cast<Func>(c.coll), c.bytes / 16, pick.first, pick.second, 1,
                              &chunk) == 0);
  return chunk;
}

// Every case of cases() through getCollInfo, and under v6 through getChunkSize: NCCL's pick, the channels
// and the chunk each op class gets are the config's, on both sides of every bin edge.
template <typename Func, typename Tuner>
void check_decisions(const Tuner* tuner, void* ctx) {
  for (const Case& c : cases()) {
    INFO("collective " << c.coll << ", " << c.bytes << " bytes");
    const Decision d = coll_info<Func>(tuner, ctx, c);
    CHECK(d.pick == std::make_pair(c.algo, c.proto));
    CHECK(d.channels == c.channels);
    if constexpr (requires { tuner->getChunkSize; }) {
      const std::size_t chunk = chunk_size<Func>(tuner, ctx, c, d.pick);
      CHECK(chunk == (c.chunk == k_keep ? k_nccl_chunk : static_cast<std::size_t>(c.chunk)));
    }
  }
}

}  // namespace lagom::abi_test

// Layouts: Lagom's struct against NCCL's, field by field, and NCCL's constants the plugin relies on. `ns`
// is the namespace the tag's headers were included in.
#define LAGOM_CHECK_NCCL_CONSTANTS(ns)                                                                       \
  static_assert(NCCL_NUM_ALGORITHMS == LAGOM_NCCL_NUM_ALGORITHMS);                                           \
  static_assert(NCCL_ALGO_TREE == LAGOM_NCCL_ALGO_TREE && NCCL_ALGO_RING == LAGOM_NCCL_ALGO_RING);           \
  static_assert(NCCL_ALGO_COLLNET_DIRECT == LAGOM_NCCL_ALGO_COLLNET_DIRECT);                                 \
  static_assert(NCCL_ALGO_COLLNET_CHAIN == LAGOM_NCCL_ALGO_COLLNET_CHAIN);                                   \
  static_assert(NCCL_ALGO_NVLS == LAGOM_NCCL_ALGO_NVLS && NCCL_ALGO_NVLS_TREE == LAGOM_NCCL_ALGO_NVLS_TREE); \
  static_assert(NCCL_ALGO_PAT == LAGOM_NCCL_ALGO_PAT);                                                       \
  static_assert(NCCL_NUM_PROTOCOLS == LAGOM_NCCL_NUM_PROTOCOLS);                                             \
  static_assert(NCCL_PROTO_LL == LAGOM_NCCL_PROTO_LL && NCCL_PROTO_LL128 == LAGOM_NCCL_PROTO_LL128);         \
  static_assert(NCCL_PROTO_SIMPLE == LAGOM_NCCL_PROTO_SIMPLE);                                               \
  static_assert(NCCL_ALGO_PROTO_IGNORE == LAGOM_NCCL_ALGO_PROTO_IGNORE);                                     \
  static_assert(ns::ncclFuncBroadcast == LAGOM_NCCL_FUNC_BROADCAST);                                         \
  static_assert(ns::ncclFuncReduce == LAGOM_NCCL_FUNC_REDUCE);                                               \
  static_assert(ns::ncclFuncAllGather == LAGOM_NCCL_FUNC_ALLGATHER);                                         \
  static_assert(ns::ncclFuncReduceScatter == LAGOM_NCCL_FUNC_REDUCESCATTER);                                 \
  static_assert(ns::ncclFuncAllReduce == LAGOM_NCCL_FUNC_ALLREDUCE);                                         \
  static_assert(ns::NCCL_LOG_WARN == LAGOM_NCCL_LOG_WARN && ns::NCCL_LOG_INFO == LAGOM_NCCL_LOG_INFO);       \
  static_assert(ns::NCCL_LOG_TRACE == LAGOM_NCCL_LOG_TRACE);                                                 \
  static_assert(ns::NCCL_INIT == LAGOM_NCCL_INIT && ns::NCCL_TUNING == LAGOM_NCCL_TUNING);                   \
  static_assert(ns::ncclSuccess == LAGOM_NCCL_SUCCESS && ns::ncclInternalError == LAGOM_NCCL_INTERNAL_ERROR)

#define LAGOM_CHECK_TUNER_V4(ns)                                              \
  static_assert(sizeof(ns::ncclTuner_v4_t) == sizeof(lagom_nccl_tuner_v4_t)); \
  LAGOM_SAME_FIELD(ns::ncclTuner_v4_t, lagom_nccl_tuner_v4_t, name);          \
  LAGOM_SAME_FIELD(ns::ncclTuner_v4_t, lagom_nccl_tuner_v4_t, init);          \
  LAGOM_SAME_FIELD(ns::ncclTuner_v4_t, lagom_nccl_tuner_v4_t, getCollInfo);   \
  LAGOM_SAME_FIELD(ns::ncclTuner_v4_t, lagom_nccl_tuner_v4_t, destroy)

#define LAGOM_CHECK_TUNER_V5(ns)                                                                        \
  static_assert(sizeof(ns::ncclTuner_v5_t) == sizeof(lagom_nccl_tuner_v5_t));                           \
  LAGOM_SAME_FIELD(ns::ncclTuner_v5_t, lagom_nccl_tuner_v5_t, name);                                    \
  LAGOM_SAME_FIELD(ns::ncclTuner_v5_t, lagom_nccl_tuner_v5_t, init);                                    \
  LAGOM_SAME_FIELD(ns::ncclTuner_v5_t, lagom_nccl_tuner_v5_t, getCollInfo);                             \
  LAGOM_SAME_FIELD(ns::ncclTuner_v5_t, lagom_nccl_tuner_v5_t, finalize);                                \
  static_assert(sizeof(ns::ncclNvlDomainInfo_v5_t) == sizeof(lagom_nccl_nvl_domain_info_v5_t));         \
  LAGOM_SAME_FIELD(ns::ncclNvlDomainInfo_v5_t, lagom_nccl_nvl_domain_info_v5_t, nNvlDomains);           \
  LAGOM_SAME_FIELD(ns::ncclNvlDomainInfo_v5_t, lagom_nccl_nvl_domain_info_v5_t, minRanksPerNvlDomain);  \
  LAGOM_SAME_FIELD(ns::ncclNvlDomainInfo_v5_t, lagom_nccl_nvl_domain_info_v5_t, maxRanksPerNvlDomain);  \
  static_assert(sizeof(ns::ncclTunerConstants_v5_t) == sizeof(lagom_nccl_tuner_constants_v5_t));        \
  LAGOM_SAME_FIELD(ns::ncclTunerConstants_v5_t, lagom_nccl_tuner_constants_v5_t, baseLatencies);        \
  LAGOM_SAME_FIELD(ns::ncclTunerConstants_v5_t, lagom_nccl_tuner_constants_v5_t, hwLatencies);          \
  LAGOM_SAME_FIELD(ns::ncclTunerConstants_v5_t, lagom_nccl_tuner_constants_v5_t, llMaxBws);             \
  LAGOM_SAME_FIELD(ns::ncclTunerConstants_v5_t, lagom_nccl_tuner_constants_v5_t, perChMaxRingLL128Bws); \
  LAGOM_SAME_FIELD(ns::ncclTunerConstants_v5_t, lagom_nccl_tuner_constants_v5_t, perChMaxTreeLL128Bws); \
  LAGOM_SAME_FIELD(ns::ncclTunerConstants_v5_t, lagom_nccl_tuner_constants_v5_t, perChMaxTreeBws);      \
  LAGOM_SAME_FIELD(ns::ncclTunerConstants_v5_t, lagom_nccl_tuner_constants_v5_t, perChMaxNVLSTreeBws)

#define LAGOM_CHECK_TUNER_V6(ns)                                              \
  static_assert(sizeof(ns::ncclTuner_v6_t) == sizeof(lagom_nccl_tuner_v6_t)); \
  LAGOM_SAME_FIELD(ns::ncclTuner_v6_t, lagom_nccl_tuner_v6_t, name);          \
  LAGOM_SAME_FIELD(ns::ncclTuner_v6_t, lagom_nccl_tuner_v6_t, init);          \
  LAGOM_SAME_FIELD(ns::ncclTuner_v6_t, lagom_nccl_tuner_v6_t, getCollInfo);   \
  LAGOM_SAME_FIELD(ns::ncclTuner_v6_t, lagom_nccl_tuner_v6_t, finalize);      \
  LAGOM_SAME_FIELD(ns::ncclTuner_v6_t, lagom_nccl_tuner_v6_t, getChunkSize)

// The profiler plugin's v6 ABI (NCCL 2.29-2.30): the descriptor's members the plugin reads, the entry
// points, the event bits and the one state it reads.
#define LAGOM_CHECK_PROFILER_V6(ns)                                                                         \
  static_assert(sizeof(ns::ncclProfilerEventDescr_v6_t) == sizeof(lagom_nccl_profiler_descr_v6_t));         \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, type);                  \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, parentObj);             \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, rank);                  \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, coll.seqNumber);        \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, coll.func);             \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, coll.count);            \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, coll.datatype);         \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, coll.nChannels);        \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, coll.algo);             \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, coll.proto);            \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, p2p.func);              \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, p2p.datatype);          \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, p2p.count);             \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, p2p.peer);              \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, p2p.nChannels);         \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, kernelCh.channelId);    \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, kernelCh.pTimer);       \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, ceColl.seqNumber);      \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, ceColl.func);           \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, ceColl.count);          \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, ceColl.datatype);       \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, ceColl.stream);         \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t, ceCollSync.nRanks);     \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventDescr_v6_t, lagom_nccl_profiler_descr_v6_t,                         \
                   ceCollBatch.useIntraSync);                                                               \
  static_assert(sizeof(ns::ncclProfilerEventStateArgs_v6_t) == sizeof(lagom_nccl_profiler_state_args_t));   \
  LAGOM_SAME_FIELD(ns::ncclProfilerEventStateArgs_v6_t, lagom_nccl_profiler_state_args_t, kernelCh.pTimer); \
  static_assert(sizeof(ns::ncclProfiler_v6_t) == sizeof(lagom_nccl_profiler_v6_t));                         \
  LAGOM_SAME_FIELD(ns::ncclProfiler_v6_t, lagom_nccl_profiler_v6_t, name);                                  \
  LAGOM_SAME_FIELD(ns::ncclProfiler_v6_t, lagom_nccl_profiler_v6_t, init);                                  \
  LAGOM_SAME_FIELD(ns::ncclProfiler_v6_t, lagom_nccl_profiler_v6_t, startEvent);                            \
  LAGOM_SAME_FIELD(ns::ncclProfiler_v6_t, lagom_nccl_profiler_v6_t, stopEvent);                             \
  LAGOM_SAME_FIELD(ns::ncclProfiler_v6_t, lagom_nccl_profiler_v6_t, recordEventState);                      \
  LAGOM_SAME_FIELD(ns::ncclProfiler_v6_t, lagom_nccl_profiler_v6_t, finalize);                              \
  static_assert(ns::ncclProfileColl == LAGOM_NCCL_PROFILE_COLL &&                                           \
                ns::ncclProfileP2p == LAGOM_NCCL_PROFILE_P2P);                                              \
  static_assert(ns::ncclProfileKernelCh == LAGOM_NCCL_PROFILE_KERNEL_CH);                                   \
  static_assert(ns::ncclProfileCeColl == LAGOM_NCCL_PROFILE_CE_COLL);                                       \
  static_assert(ns::ncclProfileCeSync == LAGOM_NCCL_PROFILE_CE_SYNC);                                       \
  static_assert(ns::ncclProfileCeBatch == LAGOM_NCCL_PROFILE_CE_BATCH);                                     \
  static_assert(ns::ncclProfilerKernelChStop == LAGOM_NCCL_PROFILER_KERNEL_CH_STOP)
