// Fuzz target: a production records file (docs/records.md): the whole-file reader (profiler/production.h,
// which `lagom db import` uses) and the line parser under it (records/record.h); an accepted record must
// hold every field check of the reader (a name the format has, bytes = count x the dtype's size, kind,
// collective, peer, clock and source agreeing) and format and parse back to the same key; a rejected file
// lists at most k_listed_rejections lines.
#include <cstdlib>
#include <string_view>

#include "fuzz_input.h"
#include "profiler/production.h"
#include "records/record.h"

namespace {

bool one_of(std::string_view value, std::initializer_list<std::string_view> names) {
  for (const std::string_view name : names) {
    if (value == name) return true;
  }
  return false;
}

// What docs/records.md allows of a record, restated here apart from the reader's tables.
bool allowed(const lagom::records::Record& r) {
  using lagom::records::Kind;
  const std::string_view c = r.collective.view();
  const bool p2p = r.kind == Kind::p2p;
  const bool name_ok = p2p ? one_of(c, {"send", "recv", "unknown"})
                           : one_of(c, {"allreduce", "allgather", "reducescatter", "broadcast", "reduce",
                                        "alltoall", "gather", "scatter", "sendrecv", "unknown"});
  const bool peer_ok = p2p ? r.peer >= 0 && r.peer < r.n_ranks : r.peer == -1;
  const bool dtype_ok = lagom::records::dtype_bytes(r.dtype.view()) > 0 || r.dtype.view() == "unknown";
  const bool ce = r.algorithm.view() == "ce";
  return name_ok && peer_ok && dtype_ok && one_of(r.source.view(), {"nccl", "mpi"}) &&
         one_of(r.algorithm.view(),
                {"", "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat", "ce"}) &&
         one_of(r.protocol.view(), {"", "ll", "ll128", "simple"}) &&
         r.bytes == lagom::records::record_bytes(r.count, r.dtype.view()) &&
         ce == (r.clock.view() == "enqueue") && (r.source.view() == "mpi") == (r.clock.view() == "host") &&
         r.rank >= 0 && r.rank < r.n_ranks && r.n_nodes >= 1 && r.n_nodes <= r.n_ranks &&
         r.end_ns >= r.start_ns;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = lagom::fuzz::text_of(data, size);
  lagom::profiler::RecordFiles files;
  (void)lagom::profiler::parse_records_text("records.jsonl", std::string(text), files);
  if (files.rejected.size() > lagom::profiler::k_listed_rejections ||
      files.rejected.size() > files.rejected_lines) {
    std::abort();
  }
  for (const auto& record : files.records) {
    if (!allowed(record)) std::abort();
  }
  (void)lagom::profiler::comm_samples_from_records(files.records);
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const auto line = lagom::records::parse_record_line(text.substr(start, end - start));
    if (line.type == lagom::records::ParsedLine::Type::record) {
      if (!allowed(line.record)) std::abort();
      char out[4096];
      const std::size_t n = lagom::records::format_record(line.record, out, sizeof out);
      if (n > 0 && n < sizeof out) {
        const auto back = lagom::records::parse_record_line(std::string_view(out, n));
        if (back.type != lagom::records::ParsedLine::Type::record ||
            lagom::records::record_key(back.record) != lagom::records::record_key(line.record)) {
          std::abort();
        }
      }
    }
    start = end + 1;
  }
  return 0;
}
