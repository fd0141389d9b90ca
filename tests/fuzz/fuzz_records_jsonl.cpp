// Fuzz target: a production records file (docs/records.md): the whole-file reader (profiler/production.h,
// which `lagom db import --records` and `lagom check --predicted` use) and the line parser under it
// (records/record.h); an accepted record must format and parse back to the same key.
#include <cstdlib>

#include "fuzz_input.h"
#include "profiler/production.h"
#include "records/record.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = lagom::fuzz::text_of(data, size);
  lagom::profiler::RecordFiles files;
  (void)lagom::profiler::parse_records_text("records.jsonl", std::string(text), files);
  (void)lagom::profiler::comm_samples_from_records(files.records);
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const auto line = lagom::records::parse_record_line(text.substr(start, end - start));
    if (line.type == lagom::records::ParsedLine::Type::record) {
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
