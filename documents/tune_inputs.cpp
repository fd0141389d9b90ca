#include "documents/tune_inputs.h"

#include <cstdint>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/json_fields.h"
#include "model/strategy_json.h"

namespace lagom::documents {

namespace {

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json collective_fit_json(const model::CollectiveFit& f) {
  return {{"collective", f.collective}, {"algo", f.algo},
          {"proto", f.proto},           {"ranks", f.ranks},
          {"nodes", f.nodes},           {"channels", f.channels},
          {"latency_us", f.latency_us}, {"bus_bw_GBps", f.bus_bw_GBps},
          {"rel_error", f.rel_error}};
}

nlohmann::json calibration_json(const model::Calibration& c) {
  nlohmann::json collectives = nlohmann::json::array();
  for (const auto& f : c.collectives) {
    nlohmann::json fit = collective_fit_json(f);
    fit["min_bytes"] = f.min_bytes;
    fit["max_bytes"] = f.max_bytes;
    collectives.push_back(std::move(fit));
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

namespace {

// A signed count or size of a fit (an int64 the writer wrote; any value an int64 holds).
constexpr std::int64_t k_int64_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t k_int64_max = std::numeric_limits<std::int64_t>::max();

Result<model::CollectiveFit> read_collective_fit(const FieldReader& f) {
  model::CollectiveFit fit;
  LAGOM_TRY(fit.collective, f.string("collective", std::nullopt));
  LAGOM_TRY(fit.algo, f.string("algo", std::nullopt));
  LAGOM_TRY(fit.proto, f.string("proto", std::nullopt));
  LAGOM_TRY(fit.ranks, f.integer("ranks", std::nullopt));
  LAGOM_TRY(fit.nodes, f.integer("nodes", std::nullopt));
  if (fit.nodes > fit.ranks) return f.error("nodes", "ranks and nodes must satisfy 1 <= nodes <= ranks");
  LAGOM_TRY(fit.channels, f.integer("channels", std::nullopt, 0));
  LAGOM_TRY(fit.latency_us, f.number("latency_us", std::nullopt, true));
  LAGOM_TRY(fit.bus_bw_GBps, f.number("bus_bw_GBps", std::nullopt));
  LAGOM_TRY(fit.rel_error, f.number("rel_error", std::nullopt, true));
  LAGOM_TRY(fit.min_bytes, f.integer("min_bytes", std::nullopt, k_int64_min, k_int64_max));
  LAGOM_TRY(fit.max_bytes, f.integer("max_bytes", std::nullopt, k_int64_min, k_int64_max));
  return fit;
}

Result<model::GemmFit> read_gemm_fit(const FieldReader& f) {
  model::GemmFit fit;
  LAGOM_TRY(fit.precision, f.string("precision", std::nullopt));
  LAGOM_TRY(fit.peak_tflops, f.number("peak_tflops", std::nullopt));
  LAGOM_TRY(fit.half_flops, f.number("half_flops", std::nullopt, true));
  LAGOM_TRY(fit.rel_error, f.number("rel_error", std::nullopt, true));
  return fit;
}

Result<model::Calibration> read_calibration(const FieldReader& top) {
  model::Calibration c;
  LAGOM_TRY(c.run_id, top.integer("run_id", std::nullopt, k_int64_min, k_int64_max));
  LAGOM_TRY(c.host, top.string("host", std::nullopt));
  LAGOM_TRY(const nlohmann::json* collectives, top.array("collectives"));
  for (std::size_t k = 0; k < collectives->size(); ++k) {
    LAGOM_TRY(const FieldReader f, top.element("collectives", *collectives, k));
    LAGOM_TRY(model::CollectiveFit fit, read_collective_fit(f));
    c.collectives.push_back(std::move(fit));
  }
  LAGOM_TRY(const nlohmann::json* gemms, top.array("gemms"));
  for (std::size_t k = 0; k < gemms->size(); ++k) {
    LAGOM_TRY(const FieldReader f, top.element("gemms", *gemms, k));
    LAGOM_TRY(model::GemmFit fit, read_gemm_fit(f));
    c.gemms.push_back(std::move(fit));
  }
  LAGOM_TRY(c.memory_bw_GBps, top.optional_number("memory_bw_GBps", false));
  LAGOM_TRY(c.memory_gib, top.optional_number("memory_gib", false));
  // The interference fits are fractional slowdowns: a fit to noisy data may come out slightly negative.
  LAGOM_TRY(const FieldReader i, top.object("interference"));
  LAGOM_TRY(c.interference.compute_slowdown_per_channel,
            i.optional_number("compute_slowdown_per_channel", true, true));
  LAGOM_TRY(c.interference.memory_contention, i.optional_number("memory_contention", true, true));
  LAGOM_TRY(c.interference.comm_slowdown, i.optional_number("comm_slowdown", true, true));
  LAGOM_TRY(c.interference.compute_slowdown, i.optional_number("compute_slowdown", true, true));
  LAGOM_TRY(c.interference.rel_error, i.number("rel_error", std::nullopt, true));
  return c;
}

}  // namespace

Result<model::Calibration> parse_calibration(const nlohmann::json& document, const std::string& origin) {
  const FieldReader top(document, origin, "tune.calibration.", UnknownFields::ignore);
  if (!document.is_object()) return top.error("", "must be an object");
  return read_calibration(top);
}

nlohmann::json tune_inputs_json(const search::Problem& problem, const search::TuneResult& result,
                                const std::string& model_name, const std::string& cluster_name,
                                const std::string& plugin_path) {
  const search::SpaceContext& space = problem.space;
  const auto& calibration = space.model != nullptr ? space.model->calibration() : std::nullopt;
  return {{"version", k_tune_inputs_version},
          {"model_name", model_name},
          {"cluster_name", cluster_name},
          {"workload", model::to_json(*problem.workload)},
          {"cluster", model::to_json(*problem.cluster)},
          {"strategy", model::to_json(space.strategy)},
          {"search", std::string(search::to_string(result.search))},
          {"runtime", std::string(model::to_string(space.runtime))},
          {"pins",
           {{"tp_overlap", space.pins.tp_overlap},
            {"bucket_mb", space.pins.bucket_mb},
            {"prefetch", space.pins.prefetch},
            {"issue_priority", space.pins.priority}}},
          {"issue_priority", std::string(simulator::to_string(space.priority))},
          {"search_nccl_knobs", space.search_nccl_knobs},
          {"framework", std::string(search::to_string(space.framework))},
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
  const FieldReader f(config["tune"], origin, "tune.", UnknownFields::ignore);
  if (!config["tune"].is_object()) return f.error("", "must be an object");
  LAGOM_TRY(const int version, f.integer("version", std::nullopt));
  if (version != k_tune_inputs_version) {
    return f.error("version",
                   fmt::format("{} is not {} (written by another lagom)", version, k_tune_inputs_version));
  }
  TuneInputs in;
  LAGOM_TRY(in.model_name, f.string("model_name", std::nullopt));
  LAGOM_TRY(in.cluster_name, f.string("cluster_name", std::nullopt));
  LAGOM_TRY_STATUS(f.object("workload"));
  LAGOM_TRY(in.workload, model::parse_workload(f.at("workload"), origin + ": tune.workload"));
  LAGOM_TRY_STATUS(f.object("cluster"));
  LAGOM_TRY(in.cluster, model::parse_cluster(f.at("cluster"), origin + ": tune.cluster"));
  LAGOM_TRY_STATUS(f.object("strategy"));
  LAGOM_TRY(in.strategy, model::parse_strategy(f.at("strategy"), origin + ": tune.strategy"));
  LAGOM_TRY(const std::string search_name, f.string("search", std::nullopt));
  const auto kind = search::k_search_kind_names.parse(search_name);
  if (!kind) {
    return f.error("search",
                   fmt::format("'{}' is not {}", search_name, search::k_search_kind_names.alternatives()));
  }
  in.search = *kind;
  LAGOM_TRY(const std::string runtime, f.string("runtime", std::nullopt));
  const auto parsed_runtime = model::k_runtime_names.parse(runtime);
  if (!parsed_runtime)
    return f.error("runtime", fmt::format("'{}' is not {}", runtime, model::k_runtime_names.alternatives()));
  in.runtime = *parsed_runtime;
  LAGOM_TRY(const FieldReader p, f.object("pins"));
  LAGOM_TRY(in.pins.tp_overlap, p.boolean("tp_overlap", std::nullopt));
  LAGOM_TRY(in.pins.bucket_mb, p.boolean("bucket_mb", std::nullopt));
  LAGOM_TRY(in.pins.prefetch, p.boolean("prefetch", std::nullopt));
  LAGOM_TRY(in.pins.priority, p.boolean("issue_priority", std::nullopt));
  LAGOM_TRY(const std::string priority, f.string("issue_priority", std::nullopt));
  const auto parsed_priority = simulator::k_issue_priority_names.parse(priority);
  if (!parsed_priority) {
    return f.error("issue_priority",
                   fmt::format("'{}' is not {}", priority, simulator::k_issue_priority_names.alternatives()));
  }
  in.priority = *parsed_priority;
  LAGOM_TRY(in.search_nccl_knobs, f.boolean("search_nccl_knobs", std::nullopt));
  LAGOM_TRY(const std::string framework, f.string("framework", std::nullopt));
  const auto parsed_framework = search::k_framework_names.parse(framework);
  if (!parsed_framework) {
    return f.error("framework",
                   fmt::format("'{}' is not {}", framework, search::k_framework_names.alternatives()));
  }
  in.framework = *parsed_framework;
  if (f.has("calibration")) {
    LAGOM_TRY(const FieldReader calibration, f.object("calibration"));
    LAGOM_TRY(in.calibration, read_calibration(calibration));
  }
  LAGOM_TRY(in.plugin_path, f.string("plugin_path", std::nullopt));
  return in;
}

}  // namespace lagom::documents
