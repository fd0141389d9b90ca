// Fuzz target: nccl_tuner.conf as the NCCL tuner plugin reads it (shim/tuner_rules.h): parsed, then
// matched against a few call shapes. A file the parser accepts must have rules; a rejected one, a reason.
#include <cstdlib>

#include "fuzz_input.h"
#include "shim/tuner_rules.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parsed = lagom::shim::parse_rules(lagom::fuzz::text_of(data, size));
  if (!parsed.error.empty() && !parsed.rules.empty()) std::abort();
  for (const int collective : {0, 2, 4}) {
    for (const std::uint64_t bytes : {std::uint64_t{0}, std::uint64_t{65536}, UINT64_MAX}) {
      lagom::shim::CallShape call;
      call.collective = collective;
      call.bytes = bytes;
      call.n_nodes = 2;
      call.n_ranks = 16;
      const auto* rule = lagom::shim::find_rule(parsed.rules, call);
      if (rule != nullptr) {
        (void)lagom::shim::algorithm_name(rule->algorithm);
        (void)lagom::shim::protocol_name(rule->protocol);
      }
    }
  }
  return 0;
}
