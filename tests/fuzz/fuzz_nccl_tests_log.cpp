// Fuzz target: an nccl-tests stdout log as `lagom db import` reads it (profiler/nccl_tests_format.h).
#include "fuzz_input.h"
#include "profiler/nccl_tests_format.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(lagom::fuzz::text_of(data, size));
  // The file name names the collective; the log may name the ranks (else --ranks does).
  (void)lagom::profiler::parse_log("all_reduce_perf.log", text, {});
  lagom::profiler::ImportOptions options;
  options.ranks = 8;
  options.nodes = 2;
  (void)lagom::profiler::parse_log("all_gather_perf.log", text, options);
  return 0;
}
