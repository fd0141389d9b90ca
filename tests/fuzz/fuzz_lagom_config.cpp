// Fuzz target: lagom-config.json, the file `lagom tune` writes, in both commands that read it: `lagom
// check --predicted` (read_predictions, with the nccl_tuner.conf beside it: the input's text after a line
// "---nccl_tuner.conf---") and `lagom simulate --comm-config` (parse_comm_config).
#include <nlohmann/json.hpp>

#include "check/predicted.h"
#include "documents/comm_config.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto [config, conf] =
      lagom::fuzz::split_at(lagom::fuzz::text_of(data, size), "\n---nccl_tuner.conf---\n");
  const std::string path = lagom::fuzz::write_scratch("lagom-config.json", config);
  lagom::fuzz::write_scratch("nccl_tuner.conf", conf);
  (void)lagom::check::read_predictions(path);
  const auto document = nlohmann::json::parse(config, nullptr, false);
  if (!document.is_discarded()) (void)lagom::documents::parse_comm_config(document, "lagom-config.json");
  return 0;
}
