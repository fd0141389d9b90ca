// Every enum's name table (core/enum_table.h) names each enumerator once and reads its names back: a row
// missing, duplicated or misspelt shows here rather than as a "?" in a JSON document.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "model/accuracy.h"
#include "model/collectives.h"
#include "model/groups.h"
#include "model/overlap_method.h"
#include "model/specs.h"
#include "model/steps.h"

namespace {

// The table names the enumerators 0..count-1 (an enum class's values in declaration order), each once,
// every name unique and parsed back to its value.
template <typename E, std::size_t N>
void check_table(const lagom::EnumTable<E, N>& table, std::size_t count) {
  CHECK(table.size() == count);
  std::set<std::string> names;
  for (std::size_t i = 0; i < count; ++i) {
    const auto value = static_cast<E>(i);
    const std::string_view name = table.name(value);
    INFO(name);
    CHECK(name != "?");
    CHECK(table.parse(name) == value);
    names.insert(std::string(name));
  }
  CHECK(names.size() == count);
}

}  // namespace

TEST_CASE("every model enum's table names each value once and parses it back", "[model]") {
  using namespace lagom::model;
  check_table(k_precision_names, 5);
  check_table(k_fabric_kind_names, 4);
  check_table(k_nic_kind_names, 3);
  check_table(k_cpu_vendor_names, 2);
  check_table(k_ffn_type_names, 4);
  check_table(k_recompute_names, 10);
  check_table(k_schedule_names, 3);
  check_table(k_attention_names, 4);
  check_table(k_cp_comm_type_names, 4);
  check_table(k_moe_dispatcher_names, 2);
  check_table(k_collective_names, 7);
  check_table(k_algo_names, 8);
  check_table(k_proto_names, 3);
  check_table(k_runtime_names, 2);
  check_table(k_knob_names, 6);
  check_table(k_knob_scope_names, 4);
  check_table(k_group_names, k_groups);
  check_table(k_phase_names, 3);
  check_table(k_op_kind_names, 7);
  check_table(k_overlap_kernel_names, 3);
  check_table(k_sharding_names, 2);
  // Names as files and flags spell them.
  CHECK(to_string(Schedule::one_f_one_b) == "1f1b");
  CHECK(to_string(CpCommType::a2a_p2p) == "a2a+p2p");
  CHECK(to_string(Group::expert_dp) == "edp");
  CHECK(to_string(Runtime::nccl_extended) == "nccl-extended");
  CHECK(k_precision_names.alternatives() == "bf16, fp16, fp8, tf32 or fp32");
}
