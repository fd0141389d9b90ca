// Fuzz target: a HuggingFace config.json (model/hf_config.h): read with what was read, ignored and noted,
// then checked as a workload (parse_hf_config).
#include <nlohmann/json.hpp>

#include "fuzz_input.h"
#include "model/hf_config.h"
#include "model/specs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto document = nlohmann::json::parse(lagom::fuzz::text_of(data, size), nullptr, false);
  if (document.is_discarded()) return 0;
  (void)lagom::model::is_hf_config(document);
  auto reading = lagom::model::read_hf_config(document, "config.json");
  if (reading && reading.value().workload.seq == 0) {
    (void)lagom::model::missing_hf_seq(reading.value(), "config.json");
  }
  auto workload = lagom::model::parse_hf_config(document, "config.json");
  if (workload) (void)workload.value().parameters();
  return 0;
}
