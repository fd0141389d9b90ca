// libnccl-profiler-lagom.so: the NCCL profiler plugin that writes production records (docs/records.md)
// of every collective and point-to-point operation a job executes. NCCL_PROFILER_PLUGIN=lagom loads it.
//
// What is measured (shim/nccl_profiler_abi.h explains NCCL's events): a Coll/P2p event carries the
// operation's description (count, datatype, algorithm, protocol, channels, sequence number) but its
// start/stop is the enqueue on the host. The execution is timed by the operation's kernel-channel events:
// one per channel, each with the GPU global timer's start and stop. A record's start is the earliest
// channel start, its end the latest channel stop, as ext-profiler/example derives kernel times
// (NVIDIA/nccl@v2.28.9-1:ext-profiler/example/plugin.cc:536-560 and 797-801: startGpuClk from the
// descriptor, stopGpuClk from the KernelChStop state).
//
// Cost on NCCL's threads: an operation takes a slot from one process-wide table of in-flight operations
// (fixed size, allocated once; a slot is claimed with one compare-and-swap), its events update the slot
// with atomics, and the thread that completes it (all channels stopped and the enqueue done) copies one
// fixed-size record into its own single-producer ring buffer. No lock, no allocation, no system call on
// that path. One writer thread drains every ring each LAGOM_PROFILE_FLUSH_MS, formats the records
// (records/record.h, the one writer) and appends them to the file, rotating it at LAGOM_PROFILE_MAX_BYTES.
//
// Failure never reaches NCCL: every entry point returns ncclSuccess and catches everything. A full ring,
// no free slot, an operation without kernel timing, and lines a write lost (full disk, unwritable
// directory) are counted, never waited for, and reported in the summary line written at the end.
// Garbage arguments (null pointers, unknown event types, handles the plugin did not hand out, channel ids
// past NCCL's 64) are ignored; a handle is checked against the slot table before it is used.
//
// Completion: an operation is done when its enqueue has stopped and as many channels as its descriptor's
// nChannels have stopped (NCCL adds one kernel-channel event per channel, enqueue.cc:575-597). An
// operation reported with nChannels 0 completes at its enqueue stop, untimed; a kernel-channel event that
// arrives for a slot already freed is ignored (one reused meanwhile would take it: NCCL does not send
// such events, so this is only a limit on garbage input).
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <sys/stat.h>

#include "records/record.h"
#include "shim/nccl_profiler_abi.h"

#define LAGOM_PROFILER_EXPORT __attribute__((visibility("default")))

namespace lagom::shim {
namespace {

constexpr const char* k_plugin_name = "lagom";
// MAXCHANNELS (NVIDIA/nccl@v2.28.9-1:src/include/device.h): kernel-channel ids are below it.
constexpr int k_max_channels = 64;
// Threads that can own a ring at once; a thread beyond them has its records dropped (and counted).
constexpr std::size_t k_max_rings = 256;

// Settings read from the environment at the first init (docs/shim.md lists them).
struct Settings {
  std::string path;                       // the file records go to ("" = the plugin records nothing)
  std::uint64_t max_bytes = 64ull << 20;  // rotate the file once it reaches this size
  int keep = 4;                           // rotated files kept beside the active one
  std::size_t ring_records = 4096;        // records per thread's ring (rounded up to a power of two)
  std::size_t inflight = 4096;            // operations in flight at once, all communicators together
  int flush_ms = 200;                     // the writer thread's period
};

// NCCL's logger (the same function for every communicator), kept for the writer thread's warnings.
std::atomic<lagom_nccl_logger_t> g_logger{nullptr};

bool nccl_silences_warnings() {
  const char* level = std::getenv("NCCL_DEBUG");
  if (level == nullptr || *level == '\0') return true;
  return strcasecmp(level, "NONE") == 0 || strcasecmp(level, "VERSION") == 0;
}

// The file NCCL's logger prints beside the line: the plugin's name, never a path of the machine that built
// it.
constexpr const char* k_log_file = "lagom-profiler";

// One warning through NCCL's logger, echoed to stderr when NCCL would print nothing at WARN level.
void warn(const std::string& message) {
  if (lagom_nccl_logger_t logger = g_logger.load(std::memory_order_relaxed)) {
    logger(LAGOM_NCCL_LOG_WARN, LAGOM_NCCL_INIT, k_log_file, __LINE__, "lagom profiler: %s", message.c_str());
  }
  if (nccl_silences_warnings()) std::fprintf(stderr, "lagom: warning: profiler: %s\n", message.c_str());
}

// A positive integer from the environment, or `fallback` (with a warning when the value is malformed).
std::uint64_t env_integer(const char* name, std::uint64_t fallback, std::uint64_t min, std::uint64_t max) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || value < min || value > max) {
    warn(std::string(name) + "=" + text + ": expected an integer from " + std::to_string(min) + " to " +
         std::to_string(max) + "; using " + std::to_string(fallback));
    return fallback;
  }
  return value;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

Settings read_settings(const std::string& host, long pid) {
  Settings s;
  const char* file = std::getenv("LAGOM_PROFILE_FILE");
  const char* dir = std::getenv("LAGOM_PROFILE_DIR");
  if (file != nullptr && *file != '\0') {
    s.path = file;
  } else if (dir != nullptr && *dir != '\0') {
    s.path = std::string(dir) + "/" + host + "-" + std::to_string(pid) + ".jsonl";
  }
  s.max_bytes = env_integer("LAGOM_PROFILE_MAX_BYTES", s.max_bytes, 4096, UINT64_MAX / 2);
  s.keep = static_cast<int>(env_integer("LAGOM_PROFILE_KEEP", static_cast<std::uint64_t>(s.keep), 0, 1000));
  s.ring_records = env_integer("LAGOM_PROFILE_RING", s.ring_records, 16, 1u << 20);
  s.inflight = env_integer("LAGOM_PROFILE_INFLIGHT", s.inflight, 16, 1u << 20);
  s.flush_ms = static_cast<int>(
      env_integer("LAGOM_PROFILE_FLUSH_MS", static_cast<std::uint64_t>(s.flush_ms), 1, 60000));
  std::size_t ring = 16;
  while (ring < s.ring_records) ring <<= 1;
  s.ring_records = ring;
  return s;
}

// Counters of the summary line (records/record.h, Summary).
struct Counters {
  std::atomic<std::uint64_t> recorded{0}, dropped_full{0}, dropped_slots{0}, untimed{0}, write_failed{0};
};
Counters g_counters;

// A single-producer, single-consumer ring of records: the owning thread pushes, the writer thread drains.
class Ring {
 public:
  explicit Ring(std::size_t capacity) : m_slots(capacity), m_mask(capacity - 1) {}

  // False (and nothing written) when the ring is full: the caller counts a drop and never waits.
  bool push(const records::Record& record) noexcept {
    const std::uint64_t head = m_head.load(std::memory_order_relaxed);
    if (head - m_tail.load(std::memory_order_acquire) > m_mask) return false;
    m_slots[head & m_mask] = record;
    m_head.store(head + 1, std::memory_order_release);
    return true;
  }

  template <typename Visit>
  void drain(Visit visit) {
    std::uint64_t tail = m_tail.load(std::memory_order_relaxed);
    const std::uint64_t head = m_head.load(std::memory_order_acquire);
    for (; tail != head; ++tail) {
      visit(m_slots[tail & m_mask]);
      m_tail.store(tail + 1, std::memory_order_release);
    }
  }

  [[nodiscard]] std::size_t capacity() const { return m_mask + 1; }
  [[nodiscard]] bool empty() const {
    return m_head.load(std::memory_order_acquire) == m_tail.load(std::memory_order_acquire);
  }

  std::atomic<bool> owned{false};  // a live thread pushes into it

 private:
  std::vector<records::Record> m_slots;
  std::size_t m_mask;
  alignas(64) std::atomic<std::uint64_t> m_head{0};
  alignas(64) std::atomic<std::uint64_t> m_tail{0};
};

// Every ring ever handed out. Appended under a mutex (once per thread), read by the writer without one:
// a ring's pointer is stored before the count that publishes it.
struct RingTable {
  std::mutex mutex;
  Ring* rings[k_max_rings] = {};
  std::atomic<std::size_t> count{0};
  std::size_t ring_records = 4096;
};
RingTable& ring_table() {
  static RingTable* table = new RingTable;  // never destroyed: threads may outlive static destructors
  return *table;
}

// The calling thread's ring; releases it for reuse when the thread exits.
struct ThreadRing {
  Ring* ring = nullptr;
  bool tried = false;
  ~ThreadRing() {
    if (ring != nullptr) ring->owned.store(false, std::memory_order_release);
  }
};
thread_local ThreadRing t_ring;

Ring* thread_ring() noexcept {
  if (t_ring.ring != nullptr) return t_ring.ring;
  if (t_ring.tried) return nullptr;
  t_ring.tried = true;
  RingTable& table = ring_table();
  try {
    std::lock_guard<std::mutex> lock(table.mutex);
    const std::size_t n = table.count.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < n; ++i) {
      // A ring whose thread exited, and which the writer emptied, gets a new producer.
      Ring* ring = table.rings[i];
      if (!ring->owned.load(std::memory_order_acquire) && ring->empty() &&
          ring->capacity() == table.ring_records) {
        ring->owned.store(true, std::memory_order_relaxed);
        t_ring.ring = ring;
        t_ring.tried = false;
        return ring;
      }
    }
    if (n == k_max_rings) return nullptr;
    auto* ring = new Ring(table.ring_records);
    ring->owned.store(true, std::memory_order_relaxed);
    table.rings[n] = ring;
    table.count.store(n + 1, std::memory_order_release);
    t_ring.ring = ring;
    t_ring.tried = false;
    return ring;
  } catch (...) {
    return nullptr;  // out of memory: this thread's records are dropped (counted)
  }
}

struct Context;

// One operation in flight. Aligned to 128 bytes so that a kernel-channel handle can be the slot's address
// with the channel id + 1 in its low 7 bits.
struct alignas(128) Task {
  static constexpr std::uint32_t k_free = 0, k_busy = 1;
  std::atomic<std::uint32_t> state{k_free};
  std::atomic<std::int32_t> pending{0};  // the enqueue stop and each expected channel stop still to come
  std::atomic<bool> enqueued{false};
  bool host_timed = false;  // a copy-engine collective: timed by its enqueue on the host (set at start)
  std::atomic<std::uint64_t> stopped_channels{0};  // bit c: channel c's stop was seen
  std::atomic<std::uint64_t> first_start{UINT64_MAX};
  std::atomic<std::uint64_t> last_stop{0};
  // The communicator, for finalize's sweep of operations that never completed (read there while other
  // communicators claim slots, hence atomic).
  std::atomic<const Context*> context{nullptr};
  records::Record record;  // filled when the operation starts
};
static_assert(alignof(Task) >= 128, "kernel-channel handles keep the channel in the low 7 bits");

// The process-wide slot table, sized when the first communicator of a session starts (LAGOM_PROFILE_INFLIGHT)
// and kept after the last one ends, so that a late handle is still safe to check.
struct TaskTable {
  Task* tasks = nullptr;
  std::size_t size = 0;
  std::atomic<std::size_t> cursor{0};
};
TaskTable g_tasks;

Task* task_from_handle(const void* handle) {
  const auto address = reinterpret_cast<std::uintptr_t>(handle);
  const auto base = reinterpret_cast<std::uintptr_t>(g_tasks.tasks);
  if (g_tasks.tasks == nullptr || address < base || address >= base + g_tasks.size * sizeof(Task))
    return nullptr;
  if ((address - base) % sizeof(Task) != 0) return nullptr;
  Task* task = reinterpret_cast<Task*>(address);
  return task->state.load(std::memory_order_acquire) == Task::k_busy ? task : nullptr;
}

struct Context {
  static constexpr std::uint64_t k_magic = 0x4c41474f4d505246ull;  // "LAGOMPRF"
  std::uint64_t magic = k_magic;
  std::uint64_t comm_hash = 0;
  int rank = 0, n_ranks = 1, n_nodes = 1;
  std::atomic<std::uint64_t> p2p_seq{0};  // NCCL numbers collectives only; p2p operations get this count
};

const Context* valid_context(const void* context) {
  const auto* c = static_cast<const Context*>(context);
  return c != nullptr && c->magic == Context::k_magic ? c : nullptr;
}

// --- the writer -----------------------------------------------------------------------------------

class Writer {
 public:
  void start(const Settings& settings, const std::string& host, long pid) {
    m_settings = settings;
    m_host = host;
    m_pid = pid;
    m_stop = false;
    // The summary counts this file's session.
    g_counters.recorded = 0;
    g_counters.dropped_full = 0;
    g_counters.dropped_slots = 0;
    g_counters.untimed = 0;
    g_counters.write_failed = 0;
    m_thread = std::thread([this] { run(); });
  }

  // Drains what is left, writes the summary and closes the file.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_stop = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) m_thread.join();
    drain();
    records::Summary summary;
    summary.host.set(m_host);
    summary.pid = m_pid;
    summary.recorded = g_counters.recorded.load();
    summary.dropped_full = g_counters.dropped_full.load();
    summary.dropped_slots = g_counters.dropped_slots.load();
    summary.untimed = g_counters.untimed.load();
    summary.write_failed = g_counters.write_failed.load();
    char line[records::k_max_line_bytes];
    const std::size_t n = records::format_summary(summary, line, sizeof line);
    append(line, n, 1);
    write_buffer();
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(m_mutex);
    while (!m_stop) {
      m_wake.wait_for(lock, std::chrono::milliseconds(m_settings.flush_ms), [this] { return m_stop; });
      lock.unlock();
      drain();
      lock.lock();
    }
  }

  void drain() {
    RingTable& table = ring_table();
    const std::size_t n = table.count.load(std::memory_order_acquire);
    char line[records::k_max_line_bytes];
    for (std::size_t i = 0; i < n; ++i) {
      table.rings[i]->drain([&](const records::Record& queued) {
        records::Record record = queued;
        record.host.set(m_host);
        record.pid = m_pid;
        append(line, records::format_record(record, line, sizeof line), 1);
      });
    }
    write_buffer();
  }

  void append(const char* line, std::size_t n, std::uint64_t lines) {
    if (n == 0) return;
    if (m_buffer.size() + n > k_buffer_bytes) write_buffer();
    m_buffer.append(line, n);
    m_buffer_lines += lines;
  }

  bool open_file() {
    if (m_fd >= 0) return true;
    const auto now = std::chrono::steady_clock::now();
    if (m_tried_open && now - m_last_open < std::chrono::seconds(1)) return false;
    m_tried_open = true;
    m_last_open = now;
    m_fd = ::open(m_settings.path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (m_fd < 0) {
      warn_once(m_warned_open, "cannot open " + m_settings.path + ": " + std::strerror(errno) +
                                   "; records are dropped until it can be opened");
      return false;
    }
    struct stat info {};
    m_regular = ::fstat(m_fd, &info) == 0 && S_ISREG(info.st_mode);
    m_file_bytes = m_regular ? static_cast<std::uint64_t>(info.st_size) : 0;
    return true;
  }

  void write_buffer() {
    if (m_buffer.empty()) return;
    bool ok = open_file();
    std::size_t done = 0;
    while (ok && done < m_buffer.size()) {
      const ssize_t n = ::write(m_fd, m_buffer.data() + done, m_buffer.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        warn_once(m_warned_write, "writing " + m_settings.path +
                                      " failed: " + std::strerror(n < 0 ? errno : EIO) +
                                      "; records are dropped and counted");
        ok = false;
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    if (!ok) g_counters.write_failed.fetch_add(m_buffer_lines, std::memory_order_relaxed);
    m_file_bytes += done;
    m_buffer.clear();
    m_buffer_lines = 0;
    if (ok && m_regular && m_file_bytes >= m_settings.max_bytes) rotate();
  }

  // The full file becomes <stem>.<n>.jsonl (n counting up); the oldest beyond `keep` is removed, so the
  // disk holds at most (keep + 1) × max_bytes.
  void rotate() {
    ::close(m_fd);
    m_fd = -1;
    std::string stem = m_settings.path;
    if (stem.size() > 6 && stem.compare(stem.size() - 6, 6, ".jsonl") == 0) stem.resize(stem.size() - 6);
    ++m_rotations;
    const std::string rotated = stem + "." + std::to_string(m_rotations) + ".jsonl";
    if (::rename(m_settings.path.c_str(), rotated.c_str()) != 0) {
      warn_once(m_warned_rotate, "cannot rename " + m_settings.path + " to " + rotated + ": " +
                                     std::strerror(errno) + "; the file keeps growing");
      m_settings.max_bytes = UINT64_MAX;
    } else if (m_rotations > m_settings.keep) {
      const std::string oldest = stem + "." + std::to_string(m_rotations - m_settings.keep) + ".jsonl";
      ::unlink(oldest.c_str());
    }
    m_tried_open = false;
    open_file();
  }

  static void warn_once(bool& warned, const std::string& message) {
    if (warned) return;
    warned = true;
    try {
      warn(message);
    } catch (...) {
    }
  }

  static constexpr std::size_t k_buffer_bytes = 1 << 20;
  Settings m_settings;
  std::string m_host;
  long m_pid = 0;
  std::thread m_thread;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stop = false;
  std::string m_buffer;
  std::uint64_t m_buffer_lines = 0;
  int m_fd = -1;
  bool m_regular = false;
  std::uint64_t m_file_bytes = 0;
  int m_rotations = 0;
  bool m_tried_open = false;
  std::chrono::steady_clock::time_point m_last_open;
  bool m_warned_open = false, m_warned_write = false, m_warned_rotate = false;
};

// Contexts alive, and the writer that runs while there is one.
struct Lifecycle {
  std::mutex mutex;
  int contexts = 0;
  bool active = false;  // records are being written
  std::unique_ptr<Writer> writer;
};
Lifecycle& lifecycle() {
  static Lifecycle* state = new Lifecycle;  // never destroyed, like the ring table
  return *state;
}

// --- events ---------------------------------------------------------------------------------------

// What the plugin reads of a Coll or P2p event, whichever ABI version delivered it.
struct OperationDescr {
  records::Kind kind = records::Kind::collective;
  const char* func = nullptr;
  const char* datatype = nullptr;
  std::uint64_t count = 0;
  const char* algo = nullptr;
  const char* proto = nullptr;
  int channels = 0;
  std::uint64_t seq = 0;
  int peer = -1;
  bool copy_engine = false;  // a v6 CeColl event: no channels, no GPU timing
};

// CLOCK_MONOTONIC in nanoseconds (vDSO, tens of ns): the time base of copy-engine records' enqueue.
std::uint64_t host_now_ns() noexcept {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000u + static_cast<std::uint64_t>(t.tv_nsec);
}

// NCCL passes its names as pointers to string literals (src/collectives.cc: ncclFuncToString, ...), the
// same few pointers call after call: a per-thread cache keyed by the pointer saves the string compares
// of records::*_from_nccl on the hot path (they were the largest single cost per operation).
struct NameCache {
  static constexpr int k_size = 4;
  const char* keys[k_size] = {};
  const char* values[k_size] = {};
  int next = 0;

  const char* get(const char* key, const char* (*lookup)(const char*)) {
    for (int i = 0; i < k_size; ++i) {
      if (keys[i] == key && values[i] != nullptr) return values[i];
    }
    const char* value = lookup(key);
    keys[next] = key;
    values[next] = value;
    next = (next + 1) % k_size;
    return value;
  }
};
thread_local NameCache t_functions, t_datatypes, t_algorithms, t_protocols;

Task* claim_task() noexcept {
  if (g_tasks.tasks == nullptr) return nullptr;
  // A few probes from a moving cursor: slots free up roughly in the order they were claimed.
  for (int probe = 0; probe < 8; ++probe) {
    const std::size_t index = g_tasks.cursor.fetch_add(1, std::memory_order_relaxed) % g_tasks.size;
    Task& task = g_tasks.tasks[index];
    std::uint32_t expected = Task::k_free;
    if (task.state.compare_exchange_strong(expected, Task::k_busy, std::memory_order_acquire)) return &task;
  }
  return nullptr;
}

void release_task(Task* task) noexcept {
  task->context.store(nullptr, std::memory_order_relaxed);
  task->state.store(Task::k_free, std::memory_order_release);
}

void start_operation(const Context* context, void** handle, const OperationDescr& d) noexcept {
  Task* task = claim_task();
  if (task == nullptr) {
    g_counters.dropped_slots.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const int channels = d.copy_engine    ? 0
                       : d.channels < 0 ? 0
                                        : (d.channels > k_max_channels ? k_max_channels : d.channels);
  task->context.store(context, std::memory_order_relaxed);
  task->enqueued.store(false, std::memory_order_relaxed);
  task->host_timed = d.copy_engine;
  task->stopped_channels.store(0, std::memory_order_relaxed);
  task->first_start.store(d.copy_engine ? host_now_ns() : UINT64_MAX, std::memory_order_relaxed);
  task->last_stop.store(0, std::memory_order_relaxed);
  records::Record& r = task->record;
  r = records::Record{};
  r.kind = d.kind;
  r.source.set("nccl");
  r.comm_hash = context->comm_hash;
  r.rank = context->rank;
  r.n_ranks = context->n_ranks;
  r.n_nodes = context->n_nodes;
  r.collective.set(t_functions.get(d.func, records::collective_from_nccl));
  r.count = d.count;
  r.dtype.set(t_datatypes.get(d.datatype, records::dtype_from_nccl));
  r.bytes = records::record_bytes(d.count, r.dtype.view());
  if (d.copy_engine) {
    // NCCL names no algorithm or protocol for these; the copy engines are the algorithm, and the clock
    // says the times are the enqueue's (docs/records.md).
    r.algorithm.set("ce");
    r.clock.set("enqueue");
  } else {
    r.algorithm.set(t_algorithms.get(d.algo, records::algorithm_from_nccl));
    r.protocol.set(t_protocols.get(d.proto, records::protocol_from_nccl));
    r.clock.set("gpu");
  }
  r.channels = channels;
  r.seq = d.seq;
  r.peer = d.peer;
  // Published last: the release store makes the fields above visible to the thread that completes it.
  task->pending.store(1 + channels, std::memory_order_release);
  *handle = task;
}

// The operation's last event: hands the record to this thread's ring, frees the slot.
void complete(Task* task) noexcept {
  const std::uint64_t start = task->first_start.load(std::memory_order_relaxed);
  const std::uint64_t stop = task->last_stop.load(std::memory_order_relaxed);
  if (start == UINT64_MAX || stop == 0 || stop < start || stop > static_cast<std::uint64_t>(INT64_MAX)) {
    g_counters.untimed.fetch_add(1, std::memory_order_relaxed);
  } else {
    task->record.start_ns = static_cast<std::int64_t>(start);
    task->record.end_ns = static_cast<std::int64_t>(stop);
    Ring* ring = thread_ring();
    if (ring != nullptr && ring->push(task->record)) {
      g_counters.recorded.fetch_add(1, std::memory_order_relaxed);
    } else {
      g_counters.dropped_full.fetch_add(1, std::memory_order_relaxed);
    }
  }
  release_task(task);
}

void finish_one(Task* task) noexcept {
  if (task->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) complete(task);
}

void atomic_min(std::atomic<std::uint64_t>& target, std::uint64_t value) {
  std::uint64_t current = target.load(std::memory_order_relaxed);
  while (value < current && !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
}
void atomic_max(std::atomic<std::uint64_t>& target, std::uint64_t value) {
  std::uint64_t current = target.load(std::memory_order_relaxed);
  while (value > current && !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
}

// A kernel-channel handle: the slot's address with channel + 1 in the low bits.
void* channel_handle(Task* task, int channel) {
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(task) +
                                 static_cast<std::uintptr_t>(channel) + 1);
}
bool split_channel_handle(const void* handle, Task** task, int* channel) {
  const auto address = reinterpret_cast<std::uintptr_t>(handle);
  const auto low = static_cast<int>(address & (alignof(Task) - 1));
  if (low == 0 || low > k_max_channels) return false;
  *task = task_from_handle(reinterpret_cast<const void*>(address - static_cast<std::uintptr_t>(low)));
  *channel = low - 1;
  return *task != nullptr;
}

void start_kernel_channel(void** handle, void* parent, int channel, std::uint64_t start_ns) noexcept {
  Task* task = task_from_handle(parent);
  if (task == nullptr || channel < 0 || channel >= k_max_channels) return;
  atomic_min(task->first_start, start_ns);
  *handle = channel_handle(task, channel);
}

// --- entry points ---------------------------------------------------------------------------------

lagom_nccl_result_t init_common(void** context, std::uint64_t comm_hash, int* activation_mask, int n_nodes,
                                int n_ranks, int rank, lagom_nccl_logger_t logger, bool copy_engine_events) {
  if (context != nullptr) *context = nullptr;
  if (activation_mask != nullptr) __atomic_store_n(activation_mask, 0, __ATOMIC_RELAXED);
  if (context == nullptr) return LAGOM_NCCL_SUCCESS;
  try {
    if (logger != nullptr) g_logger.store(logger, std::memory_order_relaxed);
    Lifecycle& life = lifecycle();
    std::lock_guard<std::mutex> lock(life.mutex);
    if (life.contexts == 0) {
      const std::string host = host_name();
      const long pid = static_cast<long>(::getpid());
      const Settings settings = read_settings(host, pid);
      life.active = !settings.path.empty();
      if (life.active) {
        // No slot is busy now (every finalize freed its communicator's), so the table can be resized.
        if (g_tasks.size != settings.inflight) {
          delete[] g_tasks.tasks;
          g_tasks.tasks = nullptr;
          g_tasks.size = 0;
          g_tasks.tasks = new Task[settings.inflight];
          g_tasks.size = settings.inflight;
        }
        ring_table().ring_records = settings.ring_records;
        life.writer = std::make_unique<Writer>();
        life.writer->start(settings, host, pid);
        if (logger != nullptr) {
          logger(LAGOM_NCCL_LOG_INFO, LAGOM_NCCL_INIT, k_log_file, __LINE__,
                 "lagom profiler: writing records to %s", settings.path.c_str());
        }
      } else {
        warn("neither LAGOM_PROFILE_DIR nor LAGOM_PROFILE_FILE is set; nothing is recorded");
      }
    }
    auto* c = new Context;
    c->comm_hash = comm_hash;
    c->rank = rank < 0 ? 0 : rank;
    c->n_ranks = n_ranks < 1 ? 1 : n_ranks;
    c->n_nodes = n_nodes < 1 ? 1 : (n_nodes > c->n_ranks ? c->n_ranks : n_nodes);
    if (c->rank >= c->n_ranks) c->rank = 0;
    ++life.contexts;
    *context = c;
    if (life.active && activation_mask != nullptr) {
      // v6 adds copy-engine collectives: NCCL 2.29+ runs them without a kernel, so without CeColl events
      // they would leave no trace at all (its v5 adapter drops them: v2.30.7-1:src/plugin/profiler/
      // profiler_v5.cc:111-116).
      const int mask = LAGOM_NCCL_PROFILE_COLL | LAGOM_NCCL_PROFILE_P2P | LAGOM_NCCL_PROFILE_KERNEL_CH |
                       (copy_engine_events ? LAGOM_NCCL_PROFILE_CE_COLL : 0);
      __atomic_store_n(activation_mask, mask, __ATOMIC_RELAXED);
    }
  } catch (...) {
    // Out of memory or no thread: NCCL runs without a profiler for this communicator.
  }
  return LAGOM_NCCL_SUCCESS;
}

lagom_nccl_result_t init_v6(void** context, uint64_t comm_id, int* activation_mask, const char* /*comm_name*/,
                            int n_nodes, int n_ranks, int rank, lagom_nccl_logger_t logger) {
  return init_common(context, comm_id, activation_mask, n_nodes, n_ranks, rank, logger, true);
}

lagom_nccl_result_t init_v5(void** context, uint64_t comm_id, int* activation_mask, const char* /*comm_name*/,
                            int n_nodes, int n_ranks, int rank, lagom_nccl_logger_t logger) {
  return init_common(context, comm_id, activation_mask, n_nodes, n_ranks, rank, logger, false);
}

lagom_nccl_result_t init_v4(void** context, int* activation_mask, const char* /*comm_name*/,
                            uint64_t comm_hash, int n_nodes, int n_ranks, int rank,
                            lagom_nccl_logger_t logger) {
  return init_common(context, comm_hash, activation_mask, n_nodes, n_ranks, rank, logger, false);
}

template <typename Descr>
lagom_nccl_result_t start_event(void* context, void** handle, Descr* descr, std::uint64_t type) {
  if (handle == nullptr) return LAGOM_NCCL_SUCCESS;
  *handle = nullptr;
  const Context* c = valid_context(context);
  if (c == nullptr || descr == nullptr) return LAGOM_NCCL_SUCCESS;
  if (type == LAGOM_NCCL_PROFILE_COLL) {
    OperationDescr d;
    d.kind = records::Kind::collective;
    d.func = descr->coll.func;
    d.datatype = descr->coll.datatype;
    d.count = descr->coll.count;
    d.algo = descr->coll.algo;
    d.proto = descr->coll.proto;
    d.channels = descr->coll.nChannels;
    d.seq = descr->coll.seqNumber;
    start_operation(c, handle, d);
  } else if (type == LAGOM_NCCL_PROFILE_P2P) {
    OperationDescr d;
    d.kind = records::Kind::p2p;
    d.func = descr->p2p.func;
    d.datatype = descr->p2p.datatype;
    d.count = descr->p2p.count;
    d.channels = descr->p2p.nChannels;
    d.peer = descr->p2p.peer;
    d.seq = const_cast<Context*>(c)->p2p_seq.fetch_add(1, std::memory_order_relaxed);
    start_operation(c, handle, d);
  } else if (type == LAGOM_NCCL_PROFILE_KERNEL_CH) {
    start_kernel_channel(handle, descr->parentObj, descr->kernelCh.channelId, descr->kernelCh.pTimer);
  } else if constexpr (requires { descr->ceColl; }) {
    if (type == LAGOM_NCCL_PROFILE_CE_COLL) {
      OperationDescr d;
      d.kind = records::Kind::collective;
      d.func = descr->ceColl.func;
      d.datatype = descr->ceColl.datatype;
      d.count = descr->ceColl.count;
      d.seq = descr->ceColl.seqNumber;
      d.copy_engine = true;
      start_operation(c, handle, d);
    }
  }
  // Every other event type (groups, API events, proxy events) gets no handle: NCCL accepts null.
  return LAGOM_NCCL_SUCCESS;
}

lagom_nccl_result_t start_event_v6(void* context, void** handle, lagom_nccl_profiler_descr_v6_t* descr) {
  return start_event(context, handle, descr, descr != nullptr ? descr->type : 0);
}
lagom_nccl_result_t start_event_v5(void* context, void** handle, lagom_nccl_profiler_descr_v5_t* descr) {
  return start_event(context, handle, descr, descr != nullptr ? descr->type : 0);
}
lagom_nccl_result_t start_event_v4(void* context, void** handle, lagom_nccl_profiler_descr_v4_t* descr) {
  return start_event(context, handle, descr, descr != nullptr ? descr->type : 0);
}

lagom_nccl_result_t stop_event(void* handle) {
  if (handle == nullptr) return LAGOM_NCCL_SUCCESS;
  Task* task = nullptr;
  int channel = 0;
  if (split_channel_handle(handle, &task, &channel)) {
    // Counted once per channel: a repeated stop is ignored.
    const std::uint64_t bit = std::uint64_t{1} << channel;
    if ((task->stopped_channels.fetch_or(bit, std::memory_order_acq_rel) & bit) == 0) finish_one(task);
  } else if ((task = task_from_handle(handle)) != nullptr) {
    // The enqueue is done; the operation completes when its channels have stopped too (a copy-engine
    // collective has none: its record ends here, at the host's clock).
    if (!task->enqueued.exchange(true, std::memory_order_acq_rel)) {
      if (task->host_timed) atomic_max(task->last_stop, host_now_ns());
      finish_one(task);
    }
  }
  return LAGOM_NCCL_SUCCESS;
}

lagom_nccl_result_t record_event_state(void* handle, lagom_nccl_profiler_event_state_t state,
                                       lagom_nccl_profiler_state_args_t* args) {
  if (handle == nullptr || args == nullptr || state != LAGOM_NCCL_PROFILER_KERNEL_CH_STOP)
    return LAGOM_NCCL_SUCCESS;
  Task* task = nullptr;
  int channel = 0;
  if (split_channel_handle(handle, &task, &channel)) atomic_max(task->last_stop, args->kernelCh.pTimer);
  return LAGOM_NCCL_SUCCESS;
}

lagom_nccl_result_t finalize(void* context) {
  const Context* c = valid_context(context);
  if (c == nullptr) return LAGOM_NCCL_SUCCESS;
  try {
    Lifecycle& life = lifecycle();
    std::lock_guard<std::mutex> lock(life.mutex);
    // Operations of this communicator that never completed (an aborted communicator) free their slots.
    for (std::size_t i = 0; i < g_tasks.size; ++i) {
      Task& task = g_tasks.tasks[i];
      if (task.state.load(std::memory_order_acquire) == Task::k_busy &&
          task.context.load(std::memory_order_relaxed) == c) {
        g_counters.untimed.fetch_add(1, std::memory_order_relaxed);
        release_task(&task);
      }
    }
    const_cast<Context*>(c)->magic = 0;
    delete c;
    if (--life.contexts == 0 && life.writer != nullptr) {
      life.writer->stop();
      life.writer.reset();
    }
  } catch (...) {
  }
  return LAGOM_NCCL_SUCCESS;
}

}  // namespace
}  // namespace lagom::shim

extern "C" {

// NCCL 2.29 and 2.30 load v6 (with copy-engine events) before v5; 2.28 loads v5, 2.25-2.27 v4.
LAGOM_PROFILER_EXPORT lagom_nccl_profiler_v6_t ncclProfiler_v6 = {
    lagom::shim::k_plugin_name,      lagom::shim::init_v6,
    lagom::shim::start_event_v6,     lagom::shim::stop_event,
    lagom::shim::record_event_state, lagom::shim::finalize};

LAGOM_PROFILER_EXPORT lagom_nccl_profiler_v5_t ncclProfiler_v5 = {
    lagom::shim::k_plugin_name,      lagom::shim::init_v5,
    lagom::shim::start_event_v5,     lagom::shim::stop_event,
    lagom::shim::record_event_state, lagom::shim::finalize};

LAGOM_PROFILER_EXPORT lagom_nccl_profiler_v4_t ncclProfiler_v4 = {
    lagom::shim::k_plugin_name,      lagom::shim::init_v4,
    lagom::shim::start_event_v4,     lagom::shim::stop_event,
    lagom::shim::record_event_state, lagom::shim::finalize};

}  // extern "C"
