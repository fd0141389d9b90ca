#include "documents/metrics.h"

#include <cstdint>
#include <functional>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "core/units.h"

namespace lagom::documents {

namespace {

bool has_number(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number();
}

// Visits every object in a JSON tree.
void for_each_object(const nlohmann::json& node, const std::function<void(const nlohmann::json&)>& visit) {
  if (node.is_object()) {
    visit(node);
    for (const auto& [key, value] : node.items()) for_each_object(value, visit);
  } else if (node.is_array()) {
    for (const auto& value : node) for_each_object(value, visit);
  }
}

bool is_comm_sample(const nlohmann::json& o) {
  return has_number(o, "busbw_GBps") && o.contains("collective") && has_number(o, "bytes");
}
bool is_gemm_sample(const nlohmann::json& o) {
  return has_number(o, "tflops") && has_number(o, "m") && has_number(o, "n") && has_number(o, "k");
}

std::string text_field(const nlohmann::json& o, const char* key) {
  if (!o.contains(key) || o[key].is_null()) return "";
  return o[key].is_string() ? o[key].get<std::string>() : o[key].dump();
}

}  // namespace

std::vector<std::pair<std::string, std::string>> described_run(const nlohmann::json& document) {
  auto text_at = [&](const char* at) {
    const nlohmann::json::json_pointer pointer(at);
    return document.contains(pointer) && document.at(pointer).is_string()
               ? document.at(pointer).get<std::string>()
               : std::string();
  };
  return {{"model", text_at("/model")},
          {"cluster", text_at("/cluster/name")},
          {"backend", text_at("/run/backend")},
          {"backend", text_at("/backend")},
          {"host", text_at("/run/host")}};
}

std::vector<std::string> metric_fields(Kind kind) {
  switch (kind) {
    case Kind::simulate:
      return {"iteration_time_s",
              "tokens_per_s",
              "mfu",
              "model_tflops_per_gpu",
              "breakdown_s.compute",
              "breakdown_s.exposed_comm",
              "breakdown_s.pipeline_bubble",
              "breakdown_s.optimizer",
              "memory_gib_per_gpu",
              "fits_in_memory"};
    case Kind::tune:
    case Kind::lagom_config:
      return {"predicted_iteration_time_s", "speedup", "predicted_time_us"};
    case Kind::profile:
      return {"busbw_GBps", "tflops"};
    default:
      break;
  }
  return {};
}

Result<std::vector<Metric>> extract_metrics(const nlohmann::json& doc, Kind kind) {
  std::vector<Metric> metrics;
  std::string invalid;  // the first metric no result can have (times, rates and counts are never negative)
  auto add = [&](std::string name, std::string field, Better better, const nlohmann::json& value) {
    if (!value.is_number()) return;
    const double x = value.get<double>();
    if (!(x >= 0) && invalid.empty()) invalid = fmt::format("{}: {} is negative", name, x);
    metrics.push_back({std::move(name), std::move(field), better, x});
  };
  switch (kind) {
    case Kind::simulate: {
      add("iteration_time_s", "iteration_time_s", Better::lower,
          doc.value("iteration_time_s", nlohmann::json()));
      add("tokens_per_s", "tokens_per_s", Better::higher, doc.value("tokens_per_s", nlohmann::json()));
      add("mfu", "mfu", Better::higher, doc.value("mfu", nlohmann::json()));
      add("model_tflops_per_gpu", "model_tflops_per_gpu", Better::higher,
          doc.value("model_tflops_per_gpu", nlohmann::json()));
      if (doc.contains("breakdown_s") && doc["breakdown_s"].is_object()) {
        for (const auto& [key, value] : doc["breakdown_s"].items()) {
          add("breakdown_s." + key, "breakdown_s." + key, Better::lower, value);
        }
      }
      if (doc.contains("memory_gib_per_gpu") && doc["memory_gib_per_gpu"].is_object()) {
        for (const auto& [key, value] : doc["memory_gib_per_gpu"].items()) {
          add("memory_gib_per_gpu." + key, "memory_gib_per_gpu", Better::lower, value);
        }
      }
      if (doc.contains("fits_in_memory") && doc["fits_in_memory"].is_boolean()) {
        // 1 fits, 0 does not: a drop from 1 to 0 is a -100% change of a higher-is-better metric.
        metrics.push_back({"fits_in_memory", "fits_in_memory", Better::higher,
                           doc["fits_in_memory"].get<bool>() ? 1.0 : 0.0});
      }
      break;
    }
    case Kind::tune:
    case Kind::lagom_config: {
      add("predicted_iteration_time_s", "predicted_iteration_time_s", Better::lower,
          doc.value("predicted_iteration_time_s", nlohmann::json()));
      add("speedup", "speedup", Better::higher, doc.value("speedup", nlohmann::json()));
      if (doc.contains("ops") && doc["ops"].is_array()) {
        for (const auto& op : doc["ops"]) {
          if (!op.is_object()) continue;
          add("predicted_time_us " + text_field(op, "name"), "predicted_time_us", Better::lower,
              op.value("predicted_time_us", nlohmann::json()));
        }
      }
      break;
    }
    case Kind::profile: {
      // Samples may repeat (in-place/out-of-place, repetitions): average per identity.
      std::map<std::string, std::pair<Metric, int>> seen;
      auto accumulate = [&](Metric m) {
        auto [it, inserted] = seen.try_emplace(m.name, m, 1);
        if (!inserted) {
          it->second.first.value += m.value;
          it->second.second += 1;
        }
      };
      for_each_object(doc, [&](const nlohmann::json& o) {
        if (is_comm_sample(o)) {
          std::string id = fmt::format("{} {}r {}", text_field(o, "collective"),
                                       o.contains("ranks") ? text_field(o, "ranks") : "?",
                                       units::format_size(o["bytes"].get<std::int64_t>()));
          for (const char* key : {"algo", "proto", "channels"}) {
            const std::string v = text_field(o, key);
            if (!v.empty() && v != "\"\"" && v != "0") id += fmt::format(" {}={}", key, v);
          }
          if (o.value("in_place", false)) id += " in-place";
          const double busbw = o["busbw_GBps"].get<double>();
          if (!(busbw >= 0) && invalid.empty())
            invalid = fmt::format("busbw_GBps {}: {} is negative", id, busbw);
          accumulate({"busbw_GBps " + id, "busbw_GBps", Better::higher, busbw});
        } else if (is_gemm_sample(o)) {
          const std::string id = fmt::format("{}x{}x{} {}", text_field(o, "m"), text_field(o, "n"),
                                             text_field(o, "k"), text_field(o, "precision"));
          const double tflops = o["tflops"].get<double>();
          if (!(tflops >= 0) && invalid.empty())
            invalid = fmt::format("tflops {}: {} is negative", id, tflops);
          accumulate({"tflops " + id, "tflops", Better::higher, tflops});
        }
      });
      for (auto& [name, entry] : seen) {
        entry.first.value /= entry.second;
        metrics.push_back(entry.first);
      }
      break;
    }
    default:
      break;
  }
  if (!invalid.empty()) return make_error(ErrorCode::invalid_input, invalid + " (not a result Lagom writes)");
  if (metrics.empty()) {
    return make_error(ErrorCode::invalid_input, fmt::format("no {} metrics found", to_string(kind)));
  }
  return metrics;
}

}  // namespace lagom::documents
