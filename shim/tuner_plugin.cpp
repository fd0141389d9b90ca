// libnccl-tuner-lagom.so: the NCCL tuner plugin that applies `lagom tune`'s nccl_tuner.conf.
//
// NCCL (src/plugin/tuner.cc: 2.30 tries ncclTunerPlugin_v6, then v5, v4) loads one tuner per process and
// calls init once per communicator, getCollInfo once per enqueued collective, under v6 getChunkSize once
// per part of a collective it schedules, finalize/destroy when the communicator goes. Each init gets
// its own TunerContext (the logger, the communicator's size, and the rule source of its config file:
// shim/tuner_rules.h, RuleSource, the current rule table behind one atomic pointer, read as it is at
// init, then reloaded when the file's identity changes, checked at most every LAGOM_TUNER_RELOAD_MS by
// one of the calling threads while the others read on). The one process-wide object is the set of
// warnings already echoed to stderr, guarded by a mutex.
//
// The plugin never takes a job down: every failure (no config, unreadable, malformed) is one warning and
// an empty rule set, i.e. NCCL's own choices (a bad new version of a file that loaded before keeps the
// rules loaded before); the entry points return ncclSuccess and catch everything.
#include <array>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "shim/nccl_tuner_abi.h"
#include "shim/tuner_rules.h"

#define LAGOM_TUNER_EXPORT __attribute__((visibility("default")))

namespace lagom::shim {
namespace {

constexpr const char* k_plugin_name = "lagom";
constexpr const char* k_config_variable = "LAGOM_TUNER_CONFIG";
constexpr const char* k_nccl_config_variable = "NCCL_TUNER_CONFIG_FILE";

// True when NCCL prints nothing at WARN level: NCCL_DEBUG unset, empty, NONE or VERSION. Then a warning
// would vanish, so the plugin echoes it to stderr itself (once per process and message).
bool nccl_silences_warnings() {
  const char* level = std::getenv("NCCL_DEBUG");
  if (level == nullptr || *level == '\0') return true;
  return strcasecmp(level, "NONE") == 0 || strcasecmp(level, "VERSION") == 0;
}

void echo_warning_once(const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> echoed;
  std::lock_guard<std::mutex> lock(mutex);
  if (!echoed.insert(message).second) return;
  std::fprintf(stderr, "lagom: warning: tuner: %s\n", message.c_str());
}

constexpr const char* k_reload_variable = "LAGOM_TUNER_RELOAD_MS";
constexpr std::int64_t k_default_reload_ms = 1000;

// A coarse monotonic clock: a few ns per read (vDSO), resolution of a scheduler tick, plenty for an
// interval in milliseconds.
std::int64_t now_ms() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

// The interface NCCL loaded the plugin through (it tries v6, then v5, v4: src/plugin/tuner.cc of each
// tag): only v6 has getChunkSize.
enum class Interface { v4, v5, v6 };

constexpr std::size_t k_chunk_slots =
    std::size_t{LAGOM_NCCL_NUM_TUNER_FUNCS} * LAGOM_NCCL_NUM_ALGORITHMS * LAGOM_NCCL_NUM_PROTOCOLS;

class TunerContext {
 public:
  TunerContext(Interface interface, std::size_t n_ranks, std::size_t n_nodes, lagom_nccl_logger_t logger)
      : m_interface(interface), m_n_ranks(n_ranks), m_n_nodes(n_nodes), m_logger(logger) {
    for (std::atomic<std::int64_t>& slot : m_chunks) slot.store(k_any, std::memory_order_relaxed);
  }

  // Reads the config named by LAGOM_TUNER_CONFIG, else NCCL_TUNER_CONFIG_FILE.
  void load(uint64_t comm_id) {
    const char* variable = k_config_variable;
    const char* path = std::getenv(variable);
    if (path == nullptr || *path == '\0') {
      variable = k_nccl_config_variable;
      path = std::getenv(variable);
    }
    if (path == nullptr || *path == '\0') {
      warn(std::string("neither ") + k_config_variable + " nor " + k_nccl_config_variable +
           " is set; NCCL keeps its own choices");
      return;
    }
    m_source = std::make_unique<RuleSource>(path, reload_interval_ms());
    const RuleSource::Event event = m_source->load();
    const RuleTable* table = m_source->current();
    if (table == nullptr) {
      warn(event.message);
      return;
    }
    log(LAGOM_NCCL_LOG_INFO, LAGOM_NCCL_INIT | LAGOM_NCCL_TUNING, __LINE__,
        "lagom tuner: loaded %zu rules from %s (%s) for comm 0x%" PRIx64 ", nRanks %zu, nNodes %zu",
        table->rules.size(), path, variable, comm_id, m_n_ranks, m_n_nodes);
    warn_unapplied_chunks(*table);
  }

  void get_coll_info(int coll_type, std::size_t bytes, int num_pipe_ops, float** cost_table, int num_algo,
                     int num_proto, int reg_buff, int* n_channels) const {
    if (m_source == nullptr) return;
    const RuleSource::Event event = m_source->maybe_reload(now_ms());
    if (!event.message.empty()) {
      if (event.reloaded) {
        log(LAGOM_NCCL_LOG_INFO, LAGOM_NCCL_INIT | LAGOM_NCCL_TUNING, __LINE__, "lagom tuner: %s",
            event.message.c_str());
        warn_unapplied_chunks(*m_source->current());
      } else {
        warn(event.message);
      }
    }
    // One load: this call uses one whole table, old or new.
    const RuleTable* table = m_source->current();
    if (table == nullptr) return;
    CallShape call{coll_type, bytes, m_n_nodes, m_n_ranks, num_pipe_ops, reg_buff};
    const Rule* rule = find_rule(table->rules, call);
    const bool applied = apply(rule, call, cost_table, num_algo, num_proto, n_channels);
    remember_chunk(coll_type, rule, applied);
  }

  // v6's getChunkSize: the chunk of the line getCollInfo last applied to this collective with the
  // algorithm and protocol NCCL then chose. Not a lookup by nBytes: NCCL 2.30 asks once per part of a
  // collective it spreads over channels, with that part's bytes and nChannels 1
  // (NVIDIA/nccl@v2.30.7-1:src/enqueue.cc:717-737), so nBytes is not the size the config's bins are of.
  void get_chunk_size(int coll_type, std::size_t bytes, int algo, int proto, int n_channels,
                      std::size_t* chunk) const {
    if (chunk == nullptr) return;
    const std::atomic<std::int64_t>* slot = chunk_slot(coll_type, algo, proto);
    const std::int64_t wanted = slot == nullptr ? k_any : slot->load(std::memory_order_relaxed);
    if (wanted == k_any) return;
    const auto wanted_bytes = static_cast<std::size_t>(wanted);
    if (wanted_bytes < protocol_grain_bytes(proto)) {
      trace(
          "lagom tuner: %s %zu bytes %s/%s: chunk %zu is below the protocol's grain of %zu bytes; NCCL's "
          "chunk %zu stands",
          collective_name(coll_type), bytes, algorithm_name(algo), protocol_name(proto), wanted_bytes,
          protocol_grain_bytes(proto), *chunk);
      return;
    }
    trace("lagom tuner: %s %zu bytes %s/%s channels %d: chunk %zu -> %zu", collective_name(coll_type), bytes,
          algorithm_name(algo), protocol_name(proto), n_channels, *chunk, wanted_bytes);
    *chunk = wanted_bytes;
  }

 private:
  // Applies `rule` (nullptr: none matched) to NCCL's cost table and channel count; true when the rule's
  // algorithm and protocol were applied (a channels-only rule applies none).
  bool apply(const Rule* rule, const CallShape& call, float** cost_table, int num_algo, int num_proto,
             int* n_channels) const {
    if (rule == nullptr) {
      trace("lagom tuner: %s %zu bytes numPipeOps %d regBuff %d: no rule, NCCL decides",
            collective_name(call.collective), static_cast<std::size_t>(call.bytes), call.num_pipe_ops,
            call.reg_buff);
      return false;
    }
    if (rule->algorithm != k_any) {
      if (cost_table == nullptr || rule->algorithm >= num_algo || rule->protocol >= num_proto) {
        trace(
            "lagom tuner: %s %zu bytes: rule at line %d names %s/%s, which this NCCL does not offer; "
            "NCCL decides",
            collective_name(call.collective), static_cast<std::size_t>(call.bytes), rule->line,
            algorithm_name(rule->algorithm), protocol_name(rule->protocol));
        return false;
      }
      // The table is one contiguous float[numAlgo][numProto] passed as float** (nccl_tuner_abi.h):
      // never dereference it as row pointers.
      float* entry = reinterpret_cast<float*>(cost_table) + rule->algorithm * num_proto + rule->protocol;
      if (*entry < 0.0f) {
        trace("lagom tuner: %s %zu bytes: rule at line %d wants %s/%s, which NCCL ruled out; NCCL decides",
              collective_name(call.collective), static_cast<std::size_t>(call.bytes), rule->line,
              algorithm_name(rule->algorithm), protocol_name(rule->protocol));
        return false;
      }
      *entry = 0.0f;
    }
    if (rule->channels != k_any && n_channels != nullptr) *n_channels = rule->channels;
    trace("lagom tuner: %s %zu bytes numPipeOps %d regBuff %d: rule at line %d -> %s/%s channels %d",
          collective_name(call.collective), static_cast<std::size_t>(call.bytes), call.num_pipe_ops,
          call.reg_buff, rule->line, algorithm_name(rule->algorithm), protocol_name(rule->protocol),
          rule->channels);
    return rule->algorithm != k_any;
  }

  // Under v6, what getChunkSize will apply to this collective: the rule's chunk for the (algorithm,
  // protocol) it set (for every pair when it set channels only, since NCCL then picks), nothing for the
  // other pairs or when no rule applied, so a chunk never outlives the call it was chosen for.
  void remember_chunk(int coll_type, const Rule* rule, bool applied) const {
    if (m_interface != Interface::v6 || coll_type < 0 || coll_type >= LAGOM_NCCL_NUM_TUNER_FUNCS) return;
    const bool has_chunk = rule != nullptr && rule->chunk_bytes != k_any;
    for (int algo = 0; algo < LAGOM_NCCL_NUM_ALGORITHMS; ++algo) {
      for (int proto = 0; proto < LAGOM_NCCL_NUM_PROTOCOLS; ++proto) {
        const bool this_pair =
            rule != nullptr &&
            (rule->algorithm == k_any || (applied && rule->algorithm == algo && rule->protocol == proto));
        chunk_slot(coll_type, algo, proto)
            ->store(has_chunk && this_pair ? rule->chunk_bytes : k_any, std::memory_order_relaxed);
      }
    }
  }

  std::atomic<std::int64_t>* chunk_slot(int coll_type, int algo, int proto) const {
    if (coll_type < 0 || coll_type >= LAGOM_NCCL_NUM_TUNER_FUNCS || algo < 0 ||
        algo >= LAGOM_NCCL_NUM_ALGORITHMS || proto < 0 || proto >= LAGOM_NCCL_NUM_PROTOCOLS)
      return nullptr;
    return &m_chunks[static_cast<std::size_t>(
        (coll_type * LAGOM_NCCL_NUM_ALGORITHMS + algo) * LAGOM_NCCL_NUM_PROTOCOLS + proto)];
  }

  // v4 and v5 have no getChunkSize: a table with chunks is applied without them, and says so once.
  void warn_unapplied_chunks(const RuleTable& table) const {
    const std::size_t n = table.chunk_rules();
    if (m_interface == Interface::v6 || n == 0) return;
    warn(m_source->path() + ": " + std::to_string(n) + " line" + (n == 1 ? "" : "s") +
         " set a chunk, which the tuner " + (m_interface == Interface::v5 ? "v5" : "v4") +
         " interface cannot apply (NCCL 2.30's v6 can); their algorithm, protocol and channels apply, "
         "NCCL keeps its own chunk");
  }

  // Arguments go straight to NCCL's variadic logger, which drops a message below NCCL_DEBUG's level before
  // formatting it: a TRACE line per collective costs a function call when tracing is off.
  template <typename... Args>
  void log(int level, unsigned long flags, int line, const char* format, Args... args) const {
    // NCCL prints the file beside the line: the plugin's name, never a path of the machine that built it.
    if (m_logger != nullptr) m_logger(level, flags, "lagom-tuner", line, format, args...);
  }

  template <typename... Args>
  void trace(const char* format, Args... args) const {
    log(LAGOM_NCCL_LOG_TRACE, LAGOM_NCCL_TUNING, __LINE__, format, args...);
  }

  void warn(const std::string& message) const {
    log(LAGOM_NCCL_LOG_WARN, LAGOM_NCCL_INIT | LAGOM_NCCL_TUNING, __LINE__, "lagom tuner: %s",
        message.c_str());
    if (nccl_silences_warnings()) echo_warning_once(message);
  }

  // LAGOM_TUNER_RELOAD_MS: milliseconds between checks of the config file (0 = never reload).
  std::int64_t reload_interval_ms() const {
    const char* text = std::getenv(k_reload_variable);
    if (text == nullptr || *text == '\0') return k_default_reload_ms;
    char* end = nullptr;
    const long long value = std::strtoll(text, &end, 10);
    if (end == text || *end != '\0' || value < 0 || value > 86400000) {
      warn(std::string(k_reload_variable) + "=" + text +
           ": expected milliseconds from 0 to 86400000; using " + std::to_string(k_default_reload_ms));
      return k_default_reload_ms;
    }
    return value;
  }

  Interface m_interface;
  std::size_t m_n_ranks;
  std::size_t m_n_nodes;
  lagom_nccl_logger_t m_logger;
  std::unique_ptr<RuleSource> m_source;  // this communicator's view of its config file
  // v6: the chunk getChunkSize applies per (collective, algorithm, protocol), written by getCollInfo.
  // NCCL calls a communicator from one thread at a time; relaxed atomics keep misuse race-free.
  mutable std::array<std::atomic<std::int64_t>, k_chunk_slots> m_chunks;
};

lagom_nccl_result_t create_context(Interface interface, void** context, uint64_t comm_id, std::size_t n_ranks,
                                   std::size_t n_nodes, lagom_nccl_logger_t logger) {
  if (context == nullptr) return LAGOM_NCCL_SUCCESS;
  *context = nullptr;
  try {
    auto* tuner = new TunerContext(interface, n_ranks, n_nodes, logger);
    *context = tuner;
    tuner->load(comm_id);
  } catch (...) {
    // Out of memory while reading rules: keep whatever context exists (its rules are empty or whole).
  }
  return LAGOM_NCCL_SUCCESS;
}

lagom_nccl_result_t init_v6(void** context, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
                            lagom_nccl_logger_t logger, lagom_nccl_nvl_domain_info_v5_t* /*nvl_domain_info*/,
                            lagom_nccl_tuner_constants_v5_t* /*constants: left as NCCL set them*/) {
  return create_context(Interface::v6, context, comm_id, n_ranks, n_nodes, logger);
}

lagom_nccl_result_t init_v5(void** context, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
                            lagom_nccl_logger_t logger, lagom_nccl_nvl_domain_info_v5_t* /*nvl_domain_info*/,
                            lagom_nccl_tuner_constants_v5_t* /*constants: left as NCCL set them*/) {
  return create_context(Interface::v5, context, comm_id, n_ranks, n_nodes, logger);
}

lagom_nccl_result_t init_v4(size_t n_ranks, size_t n_nodes, lagom_nccl_logger_t logger, void** context) {
  // v4 has no communicator id.
  return create_context(Interface::v4, context, 0, n_ranks, n_nodes, logger);
}

lagom_nccl_result_t get_coll_info(void* context, int coll_type, size_t bytes, int num_pipe_ops,
                                  float** cost_table, int num_algo, int num_proto, int reg_buff,
                                  int* n_channels) {
  if (context == nullptr) return LAGOM_NCCL_SUCCESS;
  try {
    static_cast<const TunerContext*>(context)->get_coll_info(coll_type, bytes, num_pipe_ops, cost_table,
                                                             num_algo, num_proto, reg_buff, n_channels);
  } catch (...) {
    // Only a failing logger could throw; NCCL's choice stands.
  }
  return LAGOM_NCCL_SUCCESS;
}

lagom_nccl_result_t get_chunk_size(void* context, int coll_type, size_t bytes, int algo, int proto,
                                   int n_channels, size_t* chunk) {
  if (context == nullptr) return LAGOM_NCCL_SUCCESS;
  try {
    static_cast<const TunerContext*>(context)->get_chunk_size(coll_type, bytes, algo, proto, n_channels,
                                                              chunk);
  } catch (...) {
    // Only a failing logger could throw; NCCL's chunk stands.
  }
  return LAGOM_NCCL_SUCCESS;
}

lagom_nccl_result_t finalize(void* context) {
  delete static_cast<TunerContext*>(context);
  return LAGOM_NCCL_SUCCESS;
}

}  // namespace
}  // namespace lagom::shim

extern "C" {

// NCCL 2.30 loads v6 (and never looks for v5 then); 2.28-2.29 load v5, 2.24-2.27 v4.
LAGOM_TUNER_EXPORT lagom_nccl_tuner_v6_t ncclTunerPlugin_v6 = {
    lagom::shim::k_plugin_name, lagom::shim::init_v6, lagom::shim::get_coll_info, lagom::shim::finalize,
    lagom::shim::get_chunk_size};

LAGOM_TUNER_EXPORT lagom_nccl_tuner_v5_t ncclTunerPlugin_v5 = {
    lagom::shim::k_plugin_name, lagom::shim::init_v5, lagom::shim::get_coll_info, lagom::shim::finalize};

LAGOM_TUNER_EXPORT lagom_nccl_tuner_v4_t ncclTunerPlugin_v4 = {
    lagom::shim::k_plugin_name, lagom::shim::init_v4, lagom::shim::get_coll_info, lagom::shim::finalize};

}  // extern "C"
