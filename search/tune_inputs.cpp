#include "search/tune_inputs.h"

#include <cstdint>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "model/strategy_json.h"

namespace lagom::search {

namespace {

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// Typed field access with errors "<origin>: tune.<path>: <why>".
class Fields {
 public:
  Fields(const nlohmann::json& object, std::string where) : m_object(object), m_where(std::move(where)) {}

  template <typename T>
  Result<T> get(const std::string& field) const {
    if (!m_object.is_object() || !m_object.contains(field)) return error(field, "required");
    const nlohmann::json& v = m_object.at(field);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // nlohmann's get<int> truncates an integer its type cannot hold ("ranks": 4294967304 reads as 8)
      // and a fraction: an integer field takes a whole number within its type's range, or is an error.
      if (!v.is_number_integer()) return error(field, "must be an integer");
      const bool fits = v.is_number_unsigned() ? std::in_range<T>(v.get<std::uint64_t>())
                                               : std::in_range<T>(v.get<std::int64_t>());
      if (!fits) return error(field, fmt::format("{} is out of range", v.dump()));
      return static_cast<T>(v.is_number_unsigned() ? v.get<std::uint64_t>() : v.get<std::int64_t>());
    } else {
      try {
        return v.get<T>();
      } catch (const nlohmann::json::exception& e) {
        return error(field, e.what());
      }
    }
  }
  Result<std::optional<double>> optional(const std::string& field) const {
    if (!m_object.is_object() || !m_object.contains(field) || m_object.at(field).is_null())
      return std::optional<double>();
    LAGOM_TRY(const double value, get<double>(field));
    return std::optional<double>(value);
  }
  [[nodiscard]] Error error(const std::string& field, const std::string& why) const {
    return make_error(ErrorCode::invalid_input, fmt::format("{}{}: {}", m_where, field, why));
  }
  [[nodiscard]] const nlohmann::json& json() const { return m_object; }

 private:
  const nlohmann::json& m_object;
  std::string m_where;
};

}  // namespace

nlohmann::json calibration_json(const model::Calibration& c) {
  nlohmann::json collectives = nlohmann::json::array();
  for (const auto& f : c.collectives) {
    collectives.push_back({{"collective", f.collective},
                           {"algo", f.algo},
                           {"proto", f.proto},
                           {"ranks", f.ranks},
                           {"nodes", f.nodes},
                           {"channels", f.channels},
                           {"latency_us", f.latency_us},
                           {"bus_bw_GBps", f.bus_bw_GBps},
                           {"rel_error", f.rel_error},
                           {"min_bytes", f.min_bytes},
                           {"max_bytes", f.max_bytes}});
  }
  nlohmann::json gemms = nlohmann::json::array();
  for (const auto& g : c.gemms) {
    gemms.push_back({{"precision", g.precision},
                     {"peak_tflops", g.peak_tflops},
                     {"half_flops", g.half_flops},
                     {"rel_error", g.rel_error}});
  }
  const auto& i = c.interference;
  return {{"run_id", c.run_id},
          {"host", c.host},
          {"collectives", std::move(collectives)},
          {"gemms", std::move(gemms)},
          {"memory_bw_GBps", optional_number(c.memory_bw_GBps)},
          {"memory_gib", optional_number(c.memory_gib)},
          {"interference",
           {{"compute_slowdown_per_channel", optional_number(i.compute_slowdown_per_channel)},
            {"memory_contention", optional_number(i.memory_contention)},
            {"comm_slowdown", optional_number(i.comm_slowdown)},
            {"compute_slowdown", optional_number(i.compute_slowdown)},
            {"rel_error", i.rel_error}}}};
}

Result<model::Calibration> parse_calibration(const nlohmann::json& document, const std::string& origin) {
  const Fields top(document, origin + ": tune.calibration.");
  if (!document.is_object()) return top.error("", "must be an object");
  model::Calibration c;
  LAGOM_TRY(c.run_id, top.get<std::int64_t>("run_id"));
  LAGOM_TRY(c.host, top.get<std::string>("host"));
  LAGOM_TRY(const nlohmann::json collectives, top.get<nlohmann::json>("collectives"));
  if (!collectives.is_array()) return top.error("collectives", "must be an array");
  for (std::size_t k = 0; k < collectives.size(); ++k) {
    const Fields f(collectives[k], fmt::format("{}: tune.calibration.collectives[{}].", origin, k));
    model::CollectiveFit fit;
    LAGOM_TRY(fit.collective, f.get<std::string>("collective"));
    LAGOM_TRY(fit.algo, f.get<std::string>("algo"));
    LAGOM_TRY(fit.proto, f.get<std::string>("proto"));
    LAGOM_TRY(fit.ranks, f.get<int>("ranks"));
    LAGOM_TRY(fit.nodes, f.get<int>("nodes"));
    LAGOM_TRY(fit.channels, f.get<int>("channels"));
    LAGOM_TRY(fit.latency_us, f.get<double>("latency_us"));
    LAGOM_TRY(fit.bus_bw_GBps, f.get<double>("bus_bw_GBps"));
    LAGOM_TRY(fit.rel_error, f.get<double>("rel_error"));
    LAGOM_TRY(fit.min_bytes, f.get<std::int64_t>("min_bytes"));
    LAGOM_TRY(fit.max_bytes, f.get<std::int64_t>("max_bytes"));
    if (fit.ranks < 1 || fit.nodes < 1 || fit.nodes > fit.ranks) {
      return f.error("nodes", "ranks and nodes must satisfy 1 <= nodes <= ranks");
    }
    if (!(fit.latency_us >= 0) || !(fit.bus_bw_GBps > 0) || fit.channels < 0) {
      return f.error("bus_bw_GBps", "latency_us >= 0, bus_bw_GBps > 0 and channels >= 0 are required");
    }
    c.collectives.push_back(std::move(fit));
  }
  LAGOM_TRY(const nlohmann::json gemms, top.get<nlohmann::json>("gemms"));
  if (!gemms.is_array()) return top.error("gemms", "must be an array");
  for (std::size_t k = 0; k < gemms.size(); ++k) {
    const Fields f(gemms[k], fmt::format("{}: tune.calibration.gemms[{}].", origin, k));
    model::GemmFit fit;
    LAGOM_TRY(fit.precision, f.get<std::string>("precision"));
    LAGOM_TRY(fit.peak_tflops, f.get<double>("peak_tflops"));
    LAGOM_TRY(fit.half_flops, f.get<double>("half_flops"));
    LAGOM_TRY(fit.rel_error, f.get<double>("rel_error"));
    if (!(fit.peak_tflops > 0) || !(fit.half_flops >= 0)) {
      return f.error("peak_tflops", "peak_tflops > 0 and half_flops >= 0 are required");
    }
    c.gemms.push_back(std::move(fit));
  }
  LAGOM_TRY(c.memory_bw_GBps, top.optional("memory_bw_GBps"));
  LAGOM_TRY(c.memory_gib, top.optional("memory_gib"));
  LAGOM_TRY(const nlohmann::json interference, top.get<nlohmann::json>("interference"));
  const Fields i(interference, origin + ": tune.calibration.interference.");
  if (!interference.is_object()) return top.error("interference", "must be an object");
  LAGOM_TRY(c.interference.compute_slowdown_per_channel, i.optional("compute_slowdown_per_channel"));
  LAGOM_TRY(c.interference.memory_contention, i.optional("memory_contention"));
  LAGOM_TRY(c.interference.comm_slowdown, i.optional("comm_slowdown"));
  LAGOM_TRY(c.interference.compute_slowdown, i.optional("compute_slowdown"));
  LAGOM_TRY(c.interference.rel_error, i.get<double>("rel_error"));
  return c;
}

nlohmann::json tune_inputs_json(const Problem& problem, const TuneResult& result,
                                const std::string& model_name, const std::string& cluster_name,
                                const std::string& plugin_path) {
  const SpaceContext& space = problem.space;
  const auto& calibration = space.model != nullptr ? space.model->calibration() : std::nullopt;
  return {{"version", k_tune_inputs_version},
          {"model_name", model_name},
          {"cluster_name", cluster_name},
          {"workload", model::to_json(*problem.workload)},
          {"cluster", model::to_json(*problem.cluster)},
          {"strategy", model::to_json(space.strategy)},
          {"search", std::string(to_string(result.search))},
          {"runtime", std::string(model::to_string(space.runtime))},
          {"pins",
           {{"tp_overlap", space.pins.tp_overlap},
            {"bucket_mb", space.pins.bucket_mb},
            {"prefetch", space.pins.prefetch},
            {"issue_priority", space.pins.priority}}},
          {"issue_priority", std::string(simulator::to_string(space.priority))},
          {"search_nccl_knobs", space.search_nccl_knobs},
          {"framework", std::string(to_string(space.framework))},
          {"calibration", calibration ? calibration_json(*calibration) : nlohmann::json(nullptr)},
          {"plugin_path", plugin_path}};
}

Result<TuneInputs> parse_tune_inputs(const nlohmann::json& config, const std::string& origin) {
  if (!config.is_object() || !config.contains("tune")) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{}: no \"tune\" object (written by a lagom tune older than lagom adapt: "
                                  "run lagom tune again)",
                                  origin));
  }
  const nlohmann::json& doc = config["tune"];
  const Fields f(doc, origin + ": tune.");
  if (!doc.is_object()) return f.error("", "must be an object");
  LAGOM_TRY(const int version, f.get<int>("version"));
  if (version != k_tune_inputs_version) {
    return f.error("version",
                   fmt::format("{} is not {} (written by another lagom)", version, k_tune_inputs_version));
  }
  TuneInputs in;
  LAGOM_TRY(in.model_name, f.get<std::string>("model_name"));
  LAGOM_TRY(in.cluster_name, f.get<std::string>("cluster_name"));
  LAGOM_TRY(const nlohmann::json workload, f.get<nlohmann::json>("workload"));
  LAGOM_TRY(in.workload, model::parse_workload(workload, origin + ": tune.workload"));
  LAGOM_TRY(const nlohmann::json cluster, f.get<nlohmann::json>("cluster"));
  LAGOM_TRY(in.cluster, model::parse_cluster(cluster, origin + ": tune.cluster"));
  LAGOM_TRY(const nlohmann::json strategy, f.get<nlohmann::json>("strategy"));
  LAGOM_TRY(in.strategy, model::parse_strategy(strategy, origin + ": tune.strategy"));
  LAGOM_TRY(const std::string search, f.get<std::string>("search"));
  const auto kind = k_search_kind_names.parse(search);
  if (!kind)
    return f.error("search", fmt::format("'{}' is not {}", search, k_search_kind_names.alternatives()));
  in.search = *kind;
  LAGOM_TRY(const std::string runtime, f.get<std::string>("runtime"));
  const auto parsed_runtime = model::k_runtime_names.parse(runtime);
  if (!parsed_runtime)
    return f.error("runtime", fmt::format("'{}' is not {}", runtime, model::k_runtime_names.alternatives()));
  in.runtime = *parsed_runtime;
  LAGOM_TRY(const nlohmann::json pins, f.get<nlohmann::json>("pins"));
  const Fields p(pins, origin + ": tune.pins.");
  LAGOM_TRY(in.pins.tp_overlap, p.get<bool>("tp_overlap"));
  LAGOM_TRY(in.pins.bucket_mb, p.get<bool>("bucket_mb"));
  LAGOM_TRY(in.pins.prefetch, p.get<bool>("prefetch"));
  LAGOM_TRY(in.pins.priority, p.get<bool>("issue_priority"));
  LAGOM_TRY(const std::string priority, f.get<std::string>("issue_priority"));
  const auto parsed_priority = simulator::k_issue_priority_names.parse(priority);
  if (!parsed_priority) {
    return f.error("issue_priority",
                   fmt::format("'{}' is not {}", priority, simulator::k_issue_priority_names.alternatives()));
  }
  in.priority = *parsed_priority;
  LAGOM_TRY(in.search_nccl_knobs, f.get<bool>("search_nccl_knobs"));
  LAGOM_TRY(const std::string framework, f.get<std::string>("framework"));
  const auto parsed_framework = k_framework_names.parse(framework);
  if (!parsed_framework) {
    return f.error("framework", fmt::format("'{}' is not {}", framework, k_framework_names.alternatives()));
  }
  in.framework = *parsed_framework;
  if (doc.contains("calibration") && !doc["calibration"].is_null()) {
    LAGOM_TRY(in.calibration, parse_calibration(doc["calibration"], origin));
  }
  LAGOM_TRY(in.plugin_path, f.get<std::string>("plugin_path"));
  return in;
}

}  // namespace lagom::search
