// Fuzz target: the parsers of flag values and of the strings inside files: sizes (`--bytes 64M`), the TP
// overlap method (`--tp-overlap slice:4`), NCCL versions, check's tolerances, and the enumerations
// (precision, schedule, recompute, collective, algorithm, protocol, group, search, issue priority).
#include <string>

#include "check/regression.h"
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
  auto tolerance = lagom::check::parse_tolerance(std::string(text));
  if (tolerance)
    (void)lagom::check::check_tolerance_fields(tolerance.value(), lagom::check::DocumentKind::simulate);
  (void)lagom::model::k_precision_names.parse(text);
  (void)lagom::model::k_schedule_names.parse(text);
  (void)lagom::model::k_recompute_names.parse(text);
  (void)lagom::model::k_attention_names.parse(text);
  (void)lagom::model::k_cp_comm_type_names.parse(text);
  (void)lagom::model::k_moe_dispatcher_names.parse(text);
  (void)lagom::model::k_fabric_kind_names.parse(text);
  (void)lagom::model::k_nic_kind_names.parse(text);
  (void)lagom::model::parse_collective(text);
  (void)lagom::model::k_algo_names.parse(text);
  (void)lagom::model::k_proto_names.parse(text);
  (void)lagom::model::k_runtime_names.parse(text);
  (void)lagom::model::k_group_names.parse(text);
  (void)lagom::search::k_search_kind_names.parse(text);
  (void)lagom::simulator::k_issue_priority_names.parse(text);
  return 0;
}
