// Fuzz target: the parsers of flag values and of the strings inside files: sizes (`--bytes 64M`), the TP
// overlap method (`--tp-overlap slice:4`), NCCL versions, check's tolerances, and the enumerations
// (precision, schedule, recompute, collective, algorithm, protocol, group, search, issue priority).
#include <string>

#include "cli/check.h"
#include "core/units.h"
#include "fuzz_input.h"
#include "model/collective_factors.h"
#include "model/collectives.h"
#include "model/groups.h"
#include "model/overlap_method.h"
#include "model/specs.h"
#include "search/search.h"
#include "simulator/simulator.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = lagom::fuzz::text_of(data, size);
  auto bytes = lagom::units::parse_size(text);
  if (bytes) (void)lagom::units::format_size(bytes.value());
  auto method = lagom::model::parse_overlap_method(text);
  if (method) {
    (void)lagom::model::check_overlap_method(method.value());
    (void)lagom::model::to_string(method.value());
  }
  (void)lagom::model::parse_overlap_kernel(text);
  (void)lagom::model::parse_nccl_version(text);
  auto tolerance = lagom::cli::regression::parse_tolerance(std::string(text));
  if (tolerance)
    (void)lagom::cli::regression::check_tolerance_fields(tolerance.value(),
                                                         lagom::cli::regression::DocumentKind::simulate);
  (void)lagom::model::parse_precision(text);
  (void)lagom::model::parse_schedule(text);
  (void)lagom::model::parse_recompute(text);
  (void)lagom::model::parse_attention(text);
  (void)lagom::model::parse_cp_comm_type(text);
  (void)lagom::model::parse_moe_dispatcher(text);
  (void)lagom::model::parse_fabric_kind(text);
  (void)lagom::model::parse_nic_kind(text);
  (void)lagom::model::parse_collective(text);
  (void)lagom::model::parse_algo(text);
  (void)lagom::model::parse_proto(text);
  (void)lagom::model::parse_runtime(text);
  (void)lagom::model::parse_group(text);
  (void)lagom::search::parse_search(text);
  (void)lagom::simulator::parse_issue_priority(text);
  return 0;
}
