#include "documents/comm_config.h"

#include <cstdint>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/json_fields.h"

namespace lagom::documents {

using simulator::CommAssignment;
using simulator::k_issue_priority_names;
using simulator::op_class_name;
using simulator::OpClassKey;

namespace {

constexpr std::int64_t k_int64_max = std::numeric_limits<std::int64_t>::max();

Result<std::pair<OpClassKey, model::CollConfig>> read_op(const FieldReader& op) {
  LAGOM_TRY(const std::string collective_name, op.string("collective", std::nullopt));
  const auto collective = model::parse_collective(collective_name);
  if (!collective) return op.error("collective", fmt::format("unknown collective '{}'", collective_name));
  LAGOM_TRY(const std::string group_name, op.string("group", std::nullopt));
  const auto group = model::k_group_names.parse(group_name);
  if (!group) return op.error("group", fmt::format("unknown group '{}'", group_name));
  LAGOM_TRY(const std::int64_t bytes, op.integer("bytes", std::nullopt, 0, k_int64_max));
  LAGOM_TRY(const std::string algo_name, op.string("algo", std::nullopt));
  const auto algo = model::k_algo_names.parse(algo_name);
  if (!algo) return op.error("algo", fmt::format("unknown algorithm '{}'", algo_name));
  LAGOM_TRY(const std::string proto_name, op.string("proto", std::nullopt));
  const auto proto = model::k_proto_names.parse(proto_name);
  if (!proto) return op.error("proto", fmt::format("unknown protocol '{}'", proto_name));
  model::CollConfig config;
  config.algo = *algo;
  config.proto = *proto;
  // Counts land in an int: a larger value is an error, never truncated.
  LAGOM_TRY(config.channels, op.integer("channels", 0, 0));
  LAGOM_TRY(config.threads, op.integer("threads", 0, 0));
  LAGOM_TRY(config.chunk_bytes, op.integer("chunk_bytes", 0, 0, k_int64_max));
  // Written only for a class tune moved to the copy engines (absent: NCCL's default policy).
  LAGOM_TRY(config.cta_policy, op.choice<model::CtaPolicy>("cta_policy", model::CtaPolicy::default_policy,
                                                           model::k_cta_policy_names));
  // The communicator's shape and the call count tune wrote beside the knobs are not read here, but a
  // value no communicator has is refused, as check --predicted and adapt refuse it (one file, one verdict).
  LAGOM_TRY_STATUS(op.integer("ranks", 1));
  LAGOM_TRY_STATUS(op.integer("nodes", 1));
  LAGOM_TRY_STATUS(op.integer("count", 0, 0, k_int64_max));
  return std::pair{OpClassKey{*collective, *group, bytes}, config};
}

Status read_overlap(const FieldReader& overlap, CommAssignment& assignment) {
  if (overlap.has("tp_overlap")) {
    LAGOM_TRY(const std::string text, overlap.string("tp_overlap", std::nullopt));
    auto method = model::parse_overlap_method(text);
    if (!method.ok()) return overlap.error("tp_overlap", method.error().message);
    assignment.tp_overlap = *method;
  }
  if (overlap.has("bucket_mb")) {
    LAGOM_TRY(assignment.bucket_mb, overlap.number("bucket_mb", std::nullopt));
  }
  if (overlap.has("prefetch")) {
    LAGOM_TRY(assignment.fsdp_prefetch, overlap.integer("prefetch", std::nullopt));
  }
  if (overlap.has("priority")) {
    const auto& value = overlap.at("priority");
    const auto priority =
        value.is_string() ? k_issue_priority_names.parse(value.get<std::string>()) : std::nullopt;
    if (!priority) return overlap.error("priority", "must be \"as-scheduled\" or \"critical-first\"");
    assignment.priority = *priority;
  }
  return {};
}

}  // namespace

// The other fields of lagom-config.json (name, scope, predicted times, the tune inputs) are the
// documents module's; unknown fields are ignored here.
Result<CommAssignment> parse_comm_config(const nlohmann::json& document, const std::string& origin) {
  if (!document.is_object())
    return make_error(ErrorCode::invalid_input, origin + ": document: must be a JSON object");
  const FieldReader top(document, origin, "", UnknownFields::ignore);
  CommAssignment assignment;
  if (top.has("ops")) {
    LAGOM_TRY(const nlohmann::json* ops, top.array("ops"));
    for (std::size_t i = 0; i < ops->size(); ++i) {
      LAGOM_TRY(const FieldReader op, top.element("ops", *ops, i));
      LAGOM_TRY(auto entry, read_op(op));
      assignment.per_class.push_back(std::move(entry));
    }
  }
  if (top.has("communicators")) {
    LAGOM_TRY(const nlohmann::json* comms, top.array("communicators"));
    for (std::size_t i = 0; i < comms->size(); ++i) {
      LAGOM_TRY(const FieldReader comm, top.element("communicators", *comms, i));
      LAGOM_TRY(const std::string group_name, comm.string("group", std::nullopt));
      const auto group = model::k_group_names.parse(group_name);
      if (!group) return comm.error("group", fmt::format("unknown group '{}'", group_name));
      LAGOM_TRY(const int ctas, comm.integer("ctas", std::nullopt));
      assignment.comm_ctas.emplace_back(*group, ctas);
    }
  }
  if (top.has("overlap")) {
    LAGOM_TRY(const FieldReader overlap, top.object("overlap"));
    LAGOM_TRY_STATUS(read_overlap(overlap, assignment));
  }
  return assignment;
}

nlohmann::json to_json(const CommAssignment& assignment) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& [key, config] : assignment.per_class) {
    ops.push_back({{"name", op_class_name(key)},
                   {"collective", std::string(model::to_string(key.collective))},
                   {"group", std::string(model::to_string(key.group))},
                   {"bytes", key.bytes},
                   {"algo", std::string(model::to_string(config.algo))},
                   {"proto", std::string(model::to_string(config.proto))},
                   {"channels", config.channels},
                   {"threads", config.threads},
                   {"chunk_bytes", config.chunk_bytes}});
    if (config.cta_policy != model::CtaPolicy::default_policy)
      ops.back()["cta_policy"] = std::string(model::to_string(config.cta_policy));
  }
  nlohmann::json comms = nlohmann::json::array();
  for (const auto& [group, ctas] : assignment.comm_ctas) {
    comms.push_back({{"group", std::string(model::to_string(group))}, {"ctas", ctas}});
  }
  return {
      {"ops", std::move(ops)}, {"communicators", std::move(comms)}, {"overlap", overlap_json(assignment)}};
}

nlohmann::json overlap_json(const CommAssignment& assignment) {
  nlohmann::json overlap = {{"prefetch", assignment.fsdp_prefetch},
                            {"priority", std::string(to_string(assignment.priority))}};
  if (assignment.tp_overlap) overlap["tp_overlap"] = model::to_string(*assignment.tp_overlap);
  if (assignment.bucket_mb) overlap["bucket_mb"] = *assignment.bucket_mb;
  return overlap;
}

}  // namespace lagom::documents
