// Fuzz target: a vTrain LUT CSV (e.g. AR_GPU8_1M_1024M_LUT) as `lagom db import` reads it
// (profiler/nccl_tests_format.h); the file name gives the collective and the rank count.
#include "fuzz_input.h"
#include "profiler/nccl_tests_format.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(lagom::fuzz::text_of(data, size));
  (void)lagom::profiler::parse_log("AR_GPU8_1M_1024M_LUT", text, {});
  (void)lagom::profiler::parse_log("A2A_GPU4_LUT", text, {});
  return 0;
}
