#include "simulator/comm_config.h"

#include <cstdint>
#include <limits>
#include <string_view>

#include <fmt/format.h>

namespace lagom::simulator {

namespace {

Error bad(const std::string& origin, const std::string& where, const std::string& why) {
  return make_error(ErrorCode::invalid_input, fmt::format("{}: {}: {}", origin, where, why));
}

Result<std::int64_t> get_int(const nlohmann::json& object, const char* key, const std::string& origin,
                             const std::string& where, bool required, std::int64_t fallback = 0) {
  if (!object.contains(key)) {
    if (required) return bad(origin, where + "." + key, "missing");
    return fallback;
  }
  const auto& value = object.at(key);
  if (!value.is_number_integer() || value.get<std::int64_t>() < 0) {
    return bad(origin, where + "." + key, "must be a non-negative integer");
  }
  // Counts (channels, threads, CTAs, prefetch) land in an int: a larger value is an error, never truncated.
  if (std::string_view(key) != "bytes" && std::string_view(key) != "chunk_bytes" &&
      (value.is_number_unsigned() ? value.get<std::uint64_t>() > std::numeric_limits<int>::max()
                                  : value.get<std::int64_t>() > std::numeric_limits<int>::max())) {
    return bad(origin, where + "." + key,
               fmt::format("{} is out of range (at most {})", value.dump(), std::numeric_limits<int>::max()));
  }
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > std::numeric_limits<std::int64_t>::max()) {
    return bad(origin, where + "." + key, fmt::format("{} is out of range", value.dump()));
  }
  return value.get<std::int64_t>();
}

Result<std::string> get_string(const nlohmann::json& object, const char* key, const std::string& origin,
                               const std::string& where) {
  if (!object.contains(key)) return bad(origin, where + "." + key, "missing");
  if (!object.at(key).is_string()) return bad(origin, where + "." + key, "must be a string");
  return object.at(key).get<std::string>();
}

}  // namespace

Result<CommAssignment> parse_comm_config(const nlohmann::json& document, const std::string& origin) {
  if (!document.is_object()) return bad(origin, "document", "must be a JSON object");
  CommAssignment assignment;
  if (document.contains("ops")) {
    const auto& ops = document.at("ops");
    if (!ops.is_array()) return bad(origin, "ops", "must be an array");
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      const std::string where = fmt::format("ops[{}]", i);
      if (!op.is_object()) return bad(origin, where, "must be an object");
      LAGOM_TRY(const std::string collective_name, get_string(op, "collective", origin, where));
      const auto collective = model::parse_collective(collective_name);
      if (!collective)
        return bad(origin, where + ".collective", fmt::format("unknown collective '{}'", collective_name));
      LAGOM_TRY(const std::string group_name, get_string(op, "group", origin, where));
      const auto group = model::k_group_names.parse(group_name);
      if (!group) return bad(origin, where + ".group", fmt::format("unknown group '{}'", group_name));
      LAGOM_TRY(const std::int64_t bytes, get_int(op, "bytes", origin, where, true));
      LAGOM_TRY(const std::string algo_name, get_string(op, "algo", origin, where));
      const auto algo = model::k_algo_names.parse(algo_name);
      if (!algo) return bad(origin, where + ".algo", fmt::format("unknown algorithm '{}'", algo_name));
      LAGOM_TRY(const std::string proto_name, get_string(op, "proto", origin, where));
      const auto proto = model::k_proto_names.parse(proto_name);
      if (!proto) return bad(origin, where + ".proto", fmt::format("unknown protocol '{}'", proto_name));
      model::CollConfig config;
      config.algo = *algo;
      config.proto = *proto;
      LAGOM_TRY(const std::int64_t channels, get_int(op, "channels", origin, where, false));
      LAGOM_TRY(const std::int64_t threads, get_int(op, "threads", origin, where, false));
      LAGOM_TRY(config.chunk_bytes, get_int(op, "chunk_bytes", origin, where, false));
      config.channels = static_cast<int>(channels);
      config.threads = static_cast<int>(threads);
      assignment.per_class.emplace_back(OpClassKey{*collective, *group, bytes}, config);
    }
  }
  if (document.contains("communicators")) {
    const auto& comms = document.at("communicators");
    if (!comms.is_array()) return bad(origin, "communicators", "must be an array");
    for (std::size_t i = 0; i < comms.size(); ++i) {
      const std::string where = fmt::format("communicators[{}]", i);
      if (!comms[i].is_object()) return bad(origin, where, "must be an object");
      LAGOM_TRY(const std::string group_name, get_string(comms[i], "group", origin, where));
      const auto group = model::k_group_names.parse(group_name);
      if (!group) return bad(origin, where + ".group", fmt::format("unknown group '{}'", group_name));
      LAGOM_TRY(const std::int64_t ctas, get_int(comms[i], "ctas", origin, where, true));
      if (ctas < 1) return bad(origin, where + ".ctas", "must be at least 1");
      assignment.comm_ctas.emplace_back(*group, static_cast<int>(ctas));
    }
  }
  if (document.contains("overlap")) {
    const auto& overlap = document.at("overlap");
    if (!overlap.is_object()) return bad(origin, "overlap", "must be an object");
    if (overlap.contains("tp_overlap")) {
      if (!overlap.at("tp_overlap").is_string()) return bad(origin, "overlap.tp_overlap", "must be a string");
      auto method = model::parse_overlap_method(overlap.at("tp_overlap").get<std::string>());
      if (!method.ok()) return bad(origin, "overlap.tp_overlap", method.error().message);
      assignment.tp_overlap = *method;
    }
    if (overlap.contains("bucket_mb")) {
      const auto& value = overlap.at("bucket_mb");
      if (!value.is_number() || !(value.get<double>() > 0)) {
        return bad(origin, "overlap.bucket_mb", "must be a positive number");
      }
      assignment.bucket_mb = value.get<double>();
    }
    if (overlap.contains("prefetch")) {
      LAGOM_TRY(const std::int64_t prefetch, get_int(overlap, "prefetch", origin, "overlap", false, 1));
      if (prefetch < 1) return bad(origin, "overlap.prefetch", "must be at least 1");
      assignment.fsdp_prefetch = static_cast<int>(prefetch);
    }
    if (overlap.contains("priority")) {
      const auto& value = overlap.at("priority");
      const auto priority =
          value.is_string() ? k_issue_priority_names.parse(value.get<std::string>()) : std::nullopt;
      if (!priority) return bad(origin, "overlap.priority", "must be \"as-scheduled\" or \"critical-first\"");
      assignment.priority = *priority;
    }
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

}  // namespace lagom::simulator
