#include "cli/check.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>

#include <fmt/format.h>

#include "cli/output.h"
#include "core/units.h"

namespace lagom::cli::regression {

std::string_view to_string(DocumentKind kind) {
  switch (kind) {
    case DocumentKind::simulate:
      return "simulate";
    case DocumentKind::tune:
      return "tune";
    case DocumentKind::profile:
      return "profile";
  }
  return "unknown";
}

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::ok:
      return "ok";
    case Verdict::improved:
      return "improved";
    case Verdict::regressed:
      return "REGRESSED";
    case Verdict::missing:
      return "MISSING";
    case Verdict::added:
      return "added";
  }
  return "?";
}

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

Result<DocumentKind> detect_kind(const nlohmann::json& document) {
  if (!document.is_object()) {
    return make_error(ErrorCode::invalid_input, "not a Lagom JSON document (expected an object)");
  }
  if (document.contains("iteration_time_s") && document.contains("breakdown_s"))
    return DocumentKind::simulate;
  if (document.contains("search") && document.contains("predicted_iteration_time_s"))
    return DocumentKind::tune;
  bool samples = false;
  for_each_object(document, [&](const nlohmann::json& o) {
    samples = samples || is_comm_sample(o) || is_gemm_sample(o);
  });
  if (samples) return DocumentKind::profile;
  return make_error(ErrorCode::invalid_input,
                    "not a simulate --json, tune --json or profile export document");
}

std::vector<std::string> metric_fields(DocumentKind kind) {
  switch (kind) {
    case DocumentKind::simulate:
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
    case DocumentKind::tune:
      return {"predicted_iteration_time_s", "speedup", "predicted_time_us"};
    case DocumentKind::profile:
      return {"busbw_GBps", "tflops"};
  }
  return {};
}

Status check_tolerance_fields(const Tolerance& tolerance, DocumentKind kind) {
  const std::vector<std::string> fields = metric_fields(kind);
  for (const auto& [field, pct] : tolerance.per_field_pct) {
    if (std::find(fields.begin(), fields.end(), field) != fields.end()) continue;
    std::string valid;
    for (const auto& f : fields) valid += (valid.empty() ? "" : ", ") + f;
    return make_error(ErrorCode::invalid_input,
                      fmt::format("--tolerance: '{}' is not a metric of {} documents "
                                  "(valid: {})",
                                  field, to_string(kind), valid));
  }
  return {};
}

Result<std::vector<Metric>> extract_metrics(const nlohmann::json& doc, DocumentKind kind) {
  std::vector<Metric> metrics;
  std::string invalid;  // the first metric no result can have (times, rates and counts are never negative)
  auto add = [&](std::string name, std::string field, Better better, const nlohmann::json& value) {
    if (!value.is_number()) return;
    const double x = value.get<double>();
    if (!(x >= 0) && invalid.empty()) invalid = fmt::format("{}: {} is negative", name, x);
    metrics.push_back({std::move(name), std::move(field), better, x});
  };
  switch (kind) {
    case DocumentKind::simulate: {
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
    case DocumentKind::tune: {
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
    case DocumentKind::profile: {
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
  }
  if (!invalid.empty()) return make_error(ErrorCode::invalid_input, invalid + " (not a result Lagom writes)");
  if (metrics.empty()) {
    return make_error(ErrorCode::invalid_input, fmt::format("no {} metrics found", to_string(kind)));
  }
  return metrics;
}

double Tolerance::for_field(const std::string& field) const {
  const auto it = per_field_pct.find(field);
  return it == per_field_pct.end() ? default_pct : it->second;
}

Result<Tolerance> parse_tolerance(const std::string& text) {
  Tolerance tolerance;
  auto parse_pct = [&](const std::string& value) -> Result<double> {
    const std::optional<double> pct = units::parse_percentage(value);
    if (!pct || *pct < 0) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("--tolerance: '{}': expected a non-negative percentage", text));
    }
    return *pct;
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) {
      LAGOM_TRY(tolerance.default_pct, parse_pct(item));
    } else {
      const std::string field = item.substr(0, eq);
      if (field.empty())
        return make_error(ErrorCode::invalid_input,
                          fmt::format("--tolerance: '{}': empty metric name", text));
      LAGOM_TRY(double pct, parse_pct(item.substr(eq + 1)));
      tolerance.per_field_pct[field] = pct;
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return tolerance;
}

int Report::regressions() const {
  return static_cast<int>(std::count_if(comparisons.begin(), comparisons.end(), [](const Comparison& c) {
    return c.verdict == Verdict::regressed || c.verdict == Verdict::missing;
  }));
}

Report compare(DocumentKind kind, const std::vector<Metric>& baseline, const std::vector<Metric>& current,
               const Tolerance& tolerance) {
  Report report{kind, {}};
  std::map<std::string, const Metric*> by_name;
  for (const auto& m : current) by_name[m.name] = &m;
  std::map<std::string, bool> used;
  for (const auto& b : baseline) {
    Comparison c{b.name,     b.field, b.better, b.value, std::nullopt, 0.0, tolerance.for_field(b.field),
                 Verdict::ok};
    const auto it = by_name.find(b.name);
    if (it == by_name.end()) {
      c.verdict = Verdict::missing;
    } else {
      used[b.name] = true;
      c.current = it->second->value;
      const double base = b.value, cur = *c.current;
      if (base != 0.0) {
        c.delta_pct = (cur - base) / std::fabs(base) * 100.0;
      } else {
        // From 0 any change is infinitely many percent (not +100%): it passes no tolerance.
        c.delta_pct = cur == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
      }
      const double worse_pct = b.better == Better::lower ? c.delta_pct : -c.delta_pct;
      if (worse_pct > c.tolerance_pct) {
        c.verdict = Verdict::regressed;
      } else if (worse_pct < -c.tolerance_pct) {
        c.verdict = Verdict::improved;
      }
    }
    report.comparisons.push_back(c);
  }
  for (const auto& m : current) {
    if (!used.count(m.name)) {
      report.comparisons.push_back({m.name, m.field, m.better, std::nullopt, m.value, 0.0,
                                    tolerance.for_field(m.field), Verdict::added});
    }
  }
  return report;
}

namespace {
std::string number(const std::optional<double>& v) {
  if (!v) return "-";
  return fmt::format("{:.6g}", *v);
}
std::string describe(const Comparison& c) {
  if (c.verdict == Verdict::missing)
    return fmt::format("{}: missing in current (baseline {})", c.name, number(c.baseline));
  return fmt::format("{}: {} -> {} ({:+.2f}%, {} is better, tolerance {}%)", c.name, number(c.baseline),
                     number(c.current), c.delta_pct, c.better == Better::lower ? "lower" : "higher",
                     c.tolerance_pct);
}
}  // namespace

std::string render_table(const Report& report) {
  Table table(
      {{"metric", true}, {"baseline"}, {"current"}, {"delta"}, {"better", true}, {"tol"}, {"status", true}});
  for (const auto& c : report.comparisons) {
    table.add_row({c.name, number(c.baseline), number(c.current),
                   c.baseline && c.current ? fmt::format("{:+.2f}%", c.delta_pct) : "-",
                   c.better == Better::lower ? "lower" : "higher", fmt::format("{:g}%", c.tolerance_pct),
                   std::string(to_string(c.verdict))});
  }
  std::string out = fmt::format("# lagom check: {} documents, {} metrics\n", to_string(report.kind),
                                report.comparisons.size());
  out += table.render();
  out += fmt::format("# {} regression(s)\n", report.regressions());
  return out;
}

nlohmann::json render_json(const Report& report) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& c : report.comparisons) {
    metrics.push_back(
        {{"metric", c.name},
         {"field", c.field},
         {"better", c.better == Better::lower ? "lower" : "higher"},
         {"baseline", c.baseline ? nlohmann::json(*c.baseline) : nlohmann::json()},
         {"current", c.current ? nlohmann::json(*c.current) : nlohmann::json()},
         {"delta_pct", c.baseline && c.current ? nlohmann::json(c.delta_pct) : nlohmann::json()},
         {"tolerance_pct", c.tolerance_pct},
         {"status", c.verdict == Verdict::regressed ? "regressed"
                    : c.verdict == Verdict::missing ? "missing"
                                                    : std::string(to_string(c.verdict))}});
  }
  return {{"kind", to_string(report.kind)},
          {"passed", report.regressions() == 0},
          {"regressions", report.regressions()},
          {"metrics", metrics}};
}

std::string render_junit(const Report& report) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites><testsuite name=\"lagom check {}\" tests=\"{}\" failures=\"{}\">\n",
                     to_string(report.kind), report.comparisons.size(), report.regressions());
  for (const auto& c : report.comparisons) {
    out += fmt::format("  <testcase classname=\"lagom.check.{}\" name=\"{}\"", to_string(report.kind),
                       markup_escape(c.name));
    if (c.verdict == Verdict::regressed || c.verdict == Verdict::missing) {
      out += fmt::format("><failure message=\"{}\"/></testcase>\n", markup_escape(describe(c)));
    } else {
      out += "/>\n";
    }
  }
  out += "</testsuite></testsuites>\n";
  return out;
}

}  // namespace lagom::cli::regression
