// The writer and the names (docs/records.md). Allocation-free: the NCCL profiler plugin calls these on
// its writer thread and must not take the job down on an out-of-memory.
#include "records/record.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace lagom::records {

template <std::size_t N>
std::string_view Text<N>::view() const {
  return std::string_view(value, ::strnlen(value, N));
}

template <std::size_t N>
void Text<N>::set(std::string_view text) {
  const std::size_t n = text.size() < N - 1 ? text.size() : N - 1;
  if (n > 0) std::memcpy(value, text.data(), n);
  value[n] = '\0';
}

template struct Text<8>;
template struct Text<16>;
template struct Text<64>;

namespace {

// Appends to a fixed buffer; once full, further output is dropped and ok() turns false.
class LineBuffer {
 public:
  LineBuffer(char* out, std::size_t capacity) : m_out(out), m_capacity(capacity) {}

  // printf-checked by the compiler (gcc and clang check the format against the arguments).
  __attribute__((format(printf, 2, 3))) void printf(const char* format, ...) {
    if (!m_ok) return;
    std::va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(m_out + m_size, m_capacity - m_size, format, args);
    va_end(args);
    if (n < 0 || static_cast<std::size_t>(n) >= m_capacity - m_size) {
      m_ok = false;
      return;
    }
    m_size += static_cast<std::size_t>(n);
  }

  // A JSON string: quotes, backslashes and control characters escaped (RFC 8259 section 7).
  void string(std::string_view text) {
    put('"');
    for (const char c : text) {
      const auto byte = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        put('\\');
        put(c);
      } else if (byte < 0x20) {
        printf("\\u%04x", static_cast<unsigned>(byte));
      } else {
        put(c);
      }
    }
    put('"');
  }

  void put(char c) {
    if (!m_ok) return;
    if (m_size + 1 >= m_capacity) {
      m_ok = false;
      return;
    }
    m_out[m_size++] = c;
  }

  // The line with its newline, or 0 when it did not fit.
  std::size_t finish() {
    put('\n');
    if (!m_ok) return 0;
    m_out[m_size] = '\0';
    return m_size;
  }

 private:
  char* m_out;
  std::size_t m_capacity;
  std::size_t m_size = 0;
  bool m_ok = true;
};

struct NamePair {
  const char* nccl;
  const char* lagom;
};

const char* lookup(const NamePair* table, std::size_t n, const char* name, const char* fallback) {
  if (name == nullptr) return fallback;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::strcmp(table[i].nccl, name) == 0) return table[i].lagom;
  }
  return fallback;
}

// NVIDIA/nccl@v2.28.9-1:src/collectives.cc:13-28 (ncclFuncToString).
constexpr NamePair k_functions[] = {
    {"AllGather", "allgather"}, {"AllReduce", "allreduce"},
    {"AlltoAll", "alltoall"},   {"Broadcast", "broadcast"},
    {"Gather", "gather"},       {"Recv", "recv"},
    {"Reduce", "reduce"},       {"ReduceScatter", "reducescatter"},
    {"Scatter", "scatter"},     {"SendRecv", "sendrecv"},
    {"Send", "send"},
};
// NVIDIA/nccl@v2.28.9-1:src/collectives.cc:41-56 (ncclDatatypeToString); ncclUint8 prints "Unknown"
// there, so it is listed under the name a later NCCL may give it.
constexpr NamePair k_datatypes[] = {
    {"ncclInt8", "int8"},         {"ncclUint8", "uint8"},         {"ncclInt32", "int32"},
    {"ncclUint32", "uint32"},     {"ncclInt64", "int64"},         {"ncclUint64", "uint64"},
    {"ncclFloat16", "float16"},   {"ncclFloat32", "float32"},     {"ncclFloat64", "float64"},
    {"ncclBfloat16", "bfloat16"}, {"ncclFloat8e4m3", "fp8_e4m3"}, {"ncclFloat8e5m2", "fp8_e5m2"},
};
// NVIDIA/nccl@v2.28.9-1:src/collectives.cc:58-78 (ncclAlgoToString, ncclProtoToString); Lagom's names
// are those of nccl_tuner.conf (docs/shim.md).
constexpr NamePair k_algorithms[] = {
    {"TREE", "tree"},
    {"RING", "ring"},
    {"COLLNET_DIRECT", "collnet_direct"},
    {"COLLNET_CHAIN", "collnet_chain"},
    {"NVLS", "nvls"},
    {"NVLS_TREE", "nvls_tree"},
    {"PAT", "pat"},
};
constexpr NamePair k_protocols[] = {{"LL", "ll"}, {"LL128", "ll128"}, {"SIMPLE", "simple"}};

}  // namespace

std::size_t format_record(const Record& record, char* out, std::size_t capacity) noexcept {
  if (out == nullptr || capacity == 0) return 0;
  LineBuffer line(out, capacity);
  line.printf("{\"version\":%d,\"kind\":", k_version);
  line.string(record.kind == Kind::p2p ? "p2p" : "collective");
  line.printf(",\"source\":");
  line.string(record.source.view());
  line.printf(",\"host\":");
  line.string(record.host.view());
  line.printf(",\"pid\":%" PRId64 ",\"comm_hash\":\"0x%016" PRIx64
              "\",\"rank\":%d,\"n_ranks\":%d,\"n_nodes\":%d",
              record.pid, record.comm_hash, record.rank, record.n_ranks, record.n_nodes);
  line.printf(",\"collective\":");
  line.string(record.collective.view());
  line.printf(",\"count\":%" PRIu64 ",\"dtype\":", record.count);
  line.string(record.dtype.view());
  line.printf(",\"bytes\":%" PRIu64 ",\"algorithm\":", record.bytes);
  line.string(record.algorithm.view());
  line.printf(",\"protocol\":");
  line.string(record.protocol.view());
  line.printf(",\"channels\":%d,\"seq\":%" PRIu64 ",\"peer\":%d,\"clock\":", record.channels, record.seq,
              record.peer);
  line.string(record.clock.view());
  line.printf(",\"start_ns\":%" PRId64 ",\"end_ns\":%" PRId64 "}", record.start_ns, record.end_ns);
  return line.finish();
}

std::size_t format_summary(const Summary& summary, char* out, std::size_t capacity) noexcept {
  if (out == nullptr || capacity == 0) return 0;
  LineBuffer line(out, capacity);
  line.printf("{\"version\":%d,\"kind\":\"summary\",\"host\":", k_version);
  line.string(summary.host.view());
  line.printf(",\"pid\":%" PRId64 ",\"recorded\":%" PRIu64 ",\"dropped_full\":%" PRIu64
              ",\"dropped_slots\":%" PRIu64 ",\"untimed\":%" PRIu64 ",\"write_failed\":%" PRIu64 "}",
              summary.pid, summary.recorded, summary.dropped_full, summary.dropped_slots, summary.untimed,
              summary.write_failed);
  return line.finish();
}

const char* collective_from_nccl(const char* nccl_func) {
  return lookup(k_functions, std::size(k_functions), nccl_func, "unknown");
}
const char* dtype_from_nccl(const char* nccl_datatype) {
  return lookup(k_datatypes, std::size(k_datatypes), nccl_datatype, "unknown");
}
const char* algorithm_from_nccl(const char* nccl_algo) {
  return lookup(k_algorithms, std::size(k_algorithms), nccl_algo, "");
}
const char* protocol_from_nccl(const char* nccl_proto) {
  return lookup(k_protocols, std::size(k_protocols), nccl_proto, "");
}

std::uint64_t record_bytes(std::uint64_t count, std::string_view dtype) {
  const std::uint64_t size = dtype_bytes(dtype);
  if (size != 0 && count > UINT64_MAX / size) return UINT64_MAX;
  return count * size;
}

std::size_t dtype_bytes(std::string_view dtype) {
  // ncclTypeSize (NVIDIA/nccl@v2.28.9-1:src/include/collectives.h:42).
  if (dtype == "int8" || dtype == "uint8" || dtype == "fp8_e4m3" || dtype == "fp8_e5m2") return 1;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  if (dtype == "int32" || dtype == "uint32" || dtype == "float32") return 4;
  if (dtype == "int64" || dtype == "uint64" || dtype == "float64") return 8;
  return 0;
}

}  // namespace lagom::records
