// libnccl-tuner-lagom.so: the NCCL tuner plugin that applies `lagom tune`'s nccl_tuner.conf.
//
// NCCL (2.28.9, src/plugin/tuner.cc) loads one tuner per process and calls init once per communicator,
// getCollInfo once per enqueued collective, finalize/destroy when the communicator goes. Each init gets
// its own TunerContext (the rules, the logger, the communicator's size), so communicators never share
// mutable state; getCollInfo only reads its context. The one process-wide object is the set of warnings
// already echoed to stderr, guarded by a mutex.
//
// The plugin never takes a job down: every failure (no config, unreadable, malformed) is one warning and
// an empty rule set, i.e. NCCL's own choices; the entry points return ncclSuccess and catch everything.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

class TunerContext {
 public:
  TunerContext(std::size_t n_ranks, std::size_t n_nodes, lagom_nccl_logger_t logger)
      : m_n_ranks(n_ranks), m_n_nodes(n_nodes), m_logger(logger) {}

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
    ParseResult parsed = load_rules(path);
    if (!parsed.error.empty()) {
      std::string where = parsed.error_line > 0 ? std::string(path) + ":" + std::to_string(parsed.error_line)
                                                : std::string(path);
      warn(where + ": " + parsed.error + "; ignoring the file, NCCL keeps its own choices");
      return;
    }
    m_rules = std::move(parsed.rules);
    log(LAGOM_NCCL_LOG_INFO, LAGOM_NCCL_INIT | LAGOM_NCCL_TUNING, __LINE__,
        "lagom tuner: loaded %zu rules from %s (%s) for comm 0x%" PRIx64 ", nRanks %zu, nNodes %zu",
        m_rules.size(), path, variable, comm_id, m_n_ranks, m_n_nodes);
  }

  void get_coll_info(int coll_type, std::size_t bytes, int num_pipe_ops, float** cost_table, int num_algo,
                     int num_proto, int reg_buff, int* n_channels) const {
    CallShape call{coll_type, bytes, m_n_nodes, m_n_ranks, num_pipe_ops, reg_buff};
    const Rule* rule = find_rule(m_rules, call);
    if (rule == nullptr) {
      trace("lagom tuner: %s %zu bytes numPipeOps %d regBuff %d: no rule, NCCL decides",
            collective_name(coll_type), bytes, num_pipe_ops, reg_buff);
      return;
    }
    if (rule->algorithm != k_any) {
      if (cost_table == nullptr || rule->algorithm >= num_algo || rule->protocol >= num_proto) {
        trace(
            "lagom tuner: %s %zu bytes: rule at line %d names %s/%s, which this NCCL does not offer; "
            "NCCL decides",
            collective_name(coll_type), bytes, rule->line, algorithm_name(rule->algorithm),
            protocol_name(rule->protocol));
        return;
      }
      // The table is one contiguous float[numAlgo][numProto] passed as float** (nccl_tuner_abi.h):
      // never dereference it as row pointers.
      float* entry = reinterpret_cast<float*>(cost_table) + rule->algorithm * num_proto + rule->protocol;
      if (*entry < 0.0f) {
        trace("lagom tuner: %s %zu bytes: rule at line %d wants %s/%s, which NCCL ruled out; NCCL decides",
              collective_name(coll_type), bytes, rule->line, algorithm_name(rule->algorithm),
              protocol_name(rule->protocol));
        return;
      }
      *entry = 0.0f;
    }
    if (rule->channels != k_any && n_channels != nullptr) *n_channels = rule->channels;
    trace("lagom tuner: %s %zu bytes numPipeOps %d regBuff %d: rule at line %d -> %s/%s channels %d",
          collective_name(coll_type), bytes, num_pipe_ops, reg_buff, rule->line,
          algorithm_name(rule->algorithm), protocol_name(rule->protocol), rule->channels);
  }

 private:
  // Arguments go straight to NCCL's variadic logger, which drops a message below NCCL_DEBUG's level before
  // formatting it: a TRACE line per collective costs a function call when tracing is off.
  template <typename... Args>
  void log(int level, unsigned long flags, int line, const char* format, Args... args) const {
    if (m_logger != nullptr) m_logger(level, flags, __FILE__, line, format, args...);
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

  std::size_t m_n_ranks;
  std::size_t m_n_nodes;
  lagom_nccl_logger_t m_logger;
  std::vector<Rule> m_rules;
};

lagom_nccl_result_t create_context(void** context, uint64_t comm_id, std::size_t n_ranks, std::size_t n_nodes,
                                   lagom_nccl_logger_t logger) {
  if (context == nullptr) return LAGOM_NCCL_SUCCESS;
  *context = nullptr;
  try {
    auto* tuner = new TunerContext(n_ranks, n_nodes, logger);
    *context = tuner;
    tuner->load(comm_id);
  } catch (...) {
    // Out of memory while reading rules: keep whatever context exists (its rules are empty or whole).
  }
  return LAGOM_NCCL_SUCCESS;
}

lagom_nccl_result_t init_v5(void** context, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
                            lagom_nccl_logger_t logger, lagom_nccl_nvl_domain_info_v5_t* /*nvl_domain_info*/,
                            lagom_nccl_tuner_constants_v5_t* /*constants: left as NCCL set them*/) {
  return create_context(context, comm_id, n_ranks, n_nodes, logger);
}

lagom_nccl_result_t init_v4(size_t n_ranks, size_t n_nodes, lagom_nccl_logger_t logger, void** context) {
  // v4 has no communicator id.
  return create_context(context, 0, n_ranks, n_nodes, logger);
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

lagom_nccl_result_t finalize(void* context) {
  delete static_cast<TunerContext*>(context);
  return LAGOM_NCCL_SUCCESS;
}

}  // namespace
}  // namespace lagom::shim

extern "C" {

LAGOM_TUNER_EXPORT lagom_nccl_tuner_v5_t ncclTunerPlugin_v5 = {
    lagom::shim::k_plugin_name, lagom::shim::init_v5, lagom::shim::get_coll_info, lagom::shim::finalize};

LAGOM_TUNER_EXPORT lagom_nccl_tuner_v4_t ncclTunerPlugin_v4 = {
    lagom::shim::k_plugin_name, lagom::shim::init_v4, lagom::shim::get_coll_info, lagom::shim::finalize};

}  // extern "C"
