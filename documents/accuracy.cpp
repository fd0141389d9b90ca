#include "documents/accuracy.h"

#include <cstdint>

#include <fmt/format.h>

#include "core/json_fields.h"

namespace lagom::documents {

using model::k_interval_level;
using model::k_sharding_names;
using model::k_stack_names;
using model::Regime;
using model::regime_name;
using model::Sharding;
using model::Stack;

namespace {

nlohmann::json optional_json(const std::optional<bool>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}
nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

Result<std::optional<bool>> optional_boolean(const FieldReader& r, const std::string& field) {
  if (!r.has(field)) {
    r.mark(field);
    return std::optional<bool>();
  }
  LAGOM_TRY(const bool value, r.boolean(field, std::nullopt));
  return std::optional<bool>(value);
}

Result<Regime> parse_regime(const FieldReader& r) {
  Regime g;
  LAGOM_TRY(const std::int64_t sm_arch, r.integer("sm_arch", std::nullopt, 1, 1000));
  g.sm_arch = static_cast<int>(sm_arch);
  LAGOM_TRY(g.stack, r.choice<Stack>("stack", std::nullopt, k_stack_names));
  LAGOM_TRY(g.sharding, r.choice<Sharding>("sharding", std::nullopt, k_sharding_names));
  LAGOM_TRY(g.moe, optional_boolean(r, "moe"));
  LAGOM_TRY(g.fp8, optional_boolean(r, "fp8"));
  LAGOM_TRY(g.multi_node, optional_boolean(r, "multi_node"));
  LAGOM_TRY(const std::int64_t runs, r.integer("runs", std::nullopt));
  LAGOM_TRY(const std::int64_t models, r.integer("models", std::nullopt));
  LAGOM_TRY(const std::int64_t min_gpus, r.integer("min_gpus", std::nullopt));
  LAGOM_TRY(const std::int64_t max_gpus, r.integer("max_gpus", std::nullopt));
  LAGOM_TRY(const std::int64_t held_out_runs, r.integer("held_out_runs", std::nullopt, 0));
  g.runs = static_cast<int>(runs);
  g.models = static_cast<int>(models);
  g.min_gpus = static_cast<int>(min_gpus);
  g.max_gpus = static_cast<int>(max_gpus);
  g.held_out_runs = static_cast<int>(held_out_runs);
  LAGOM_TRY(g.data, r.string("data", std::nullopt));
  LAGOM_TRY(g.low_ratio, r.optional_number("low_ratio", false));
  LAGOM_TRY(g.high_ratio, r.optional_number("high_ratio", false));
  LAGOM_TRY(g.bias_pct, r.finite("bias_pct", std::nullopt));
  LAGOM_TRY(g.mape_pct, r.number("mape_pct", std::nullopt, true));
  LAGOM_TRY(g.held_out_coverage, r.optional_number("held_out_coverage", true));
  r.mark("name");  // written for people; the dimensions are what is read
  if (g.low_ratio.has_value() != g.high_ratio.has_value() || (g.low_ratio && *g.low_ratio > *g.high_ratio)) {
    return r.error("low_ratio", "must be null with high_ratio, or no larger than it");
  }
  LAGOM_TRY_STATUS(r.finish());
  return g;
}

}  // namespace

nlohmann::json regimes_json(const std::vector<Regime>& regimes) {
  nlohmann::json list = nlohmann::json::array();
  for (const Regime& g : regimes) {
    list.push_back({{"name", regime_name(g)},
                    {"sm_arch", g.sm_arch},
                    {"stack", to_string(g.stack)},
                    {"sharding", to_string(g.sharding)},
                    {"moe", optional_json(g.moe)},
                    {"fp8", optional_json(g.fp8)},
                    {"multi_node", optional_json(g.multi_node)},
                    {"runs", g.runs},
                    {"models", g.models},
                    {"min_gpus", g.min_gpus},
                    {"max_gpus", g.max_gpus},
                    {"data", g.data},
                    {"low_ratio", optional_json(g.low_ratio)},
                    {"high_ratio", optional_json(g.high_ratio)},
                    {"bias_pct", g.bias_pct},
                    {"mape_pct", g.mape_pct},
                    {"held_out_coverage", optional_json(g.held_out_coverage)},
                    {"held_out_runs", g.held_out_runs}});
  }
  return {{"level", k_interval_level}, {"regimes", std::move(list)}};
}

Result<std::vector<Regime>> parse_regimes(const nlohmann::json& document, const std::string& origin) {
  LAGOM_TRY_STATUS(require_object(document, origin));
  const FieldReader top(document, origin, "", UnknownFields::ignore);
  LAGOM_TRY(const double level, top.number("level", std::nullopt));
  if (level != k_interval_level) return top.error("level", fmt::format("must be {}", k_interval_level));
  LAGOM_TRY(const nlohmann::json* list, top.array("regimes"));
  std::vector<Regime> regimes;
  for (std::size_t i = 0; i < list->size(); ++i) {
    LAGOM_TRY(const FieldReader r, top.element("regimes", *list, i));
    LAGOM_TRY(Regime g, parse_regime(r));
    regimes.push_back(std::move(g));
  }
  return regimes;
}

}  // namespace lagom::documents
