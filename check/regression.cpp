#include "check/regression.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "documents/kind.h"
#include "documents/metrics.h"

namespace lagom::check {

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

Result<DocumentKind> detect_kind(const nlohmann::json& document) {
  // The one detector (documents/kind.h); check compares the kinds that have metrics (documents/metrics.h),
  // lagom-config.json as the tune it records.
  LAGOM_TRY(const documents::Detected detected, documents::detect(document));
  const DocumentKind kind = detected.kind == DocumentKind::lagom_config ? DocumentKind::tune : detected.kind;
  if (documents::metric_fields(kind).empty()) {
    return make_error(
        ErrorCode::invalid_input,
        fmt::format("a {} document: not a simulate --json, tune --json or profile export document",
                    documents::to_string(kind)));
  }
  return kind;
}

Status check_tolerance_fields(const Tolerance& tolerance, DocumentKind kind) {
  const std::vector<std::string> fields = documents::metric_fields(kind);
  for (const auto& [field, pct] : tolerance.per_field_pct) {
    if (std::find(fields.begin(), fields.end(), field) != fields.end()) continue;
    std::string valid;
    for (const auto& f : fields) valid += (valid.empty() ? "" : ", ") + f;
    return make_error(ErrorCode::invalid_input,
                      fmt::format("--tolerance: '{}' is not a metric of {} documents "
                                  "(valid: {})",
                                  field, documents::to_string(kind), valid));
  }
  return {};
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
  // Each tolerance once: a second value for the same metric (or a second default) would silently replace
  // the first.
  bool default_given = false;
  auto twice = [&text](const std::string& what) {
    return make_error(ErrorCode::invalid_input, fmt::format("--tolerance: '{}': {} given twice", text, what));
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) {
      if (default_given) return twice("the default tolerance");
      default_given = true;
      LAGOM_TRY(tolerance.default_pct, parse_pct(item));
    } else {
      const std::string field = item.substr(0, eq);
      if (field.empty())
        return make_error(ErrorCode::invalid_input,
                          fmt::format("--tolerance: '{}': empty metric name", text));
      LAGOM_TRY(double pct, parse_pct(item.substr(eq + 1)));
      if (tolerance.per_field_pct.count(field) > 0) return twice(fmt::format("'{}'", field));
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
documents::CheckStatus status_of(Verdict verdict) {
  switch (verdict) {
    case Verdict::ok:
      return documents::CheckStatus::ok;
    case Verdict::improved:
      return documents::CheckStatus::improved;
    case Verdict::regressed:
      return documents::CheckStatus::regressed;
    case Verdict::missing:
      return documents::CheckStatus::missing;
    case Verdict::added:
      return documents::CheckStatus::added;
  }
  return documents::CheckStatus::ok;
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
  TextTable table(
      {{"metric", true}, {"baseline"}, {"current"}, {"delta"}, {"better", true}, {"tol"}, {"status", true}});
  for (const auto& c : report.comparisons) {
    table.add_row({c.name, number(c.baseline), number(c.current),
                   c.baseline && c.current ? fmt::format("{:+.2f}%", c.delta_pct) : "-",
                   c.better == Better::lower ? "lower" : "higher", fmt::format("{:g}%", c.tolerance_pct),
                   std::string(to_string(c.verdict))});
  }
  std::string out = fmt::format("# lagom check: {} documents, {} metrics\n",
                                documents::to_string(report.kind), report.comparisons.size());
  out += table.render();
  out += fmt::format("# {} regression(s)\n", report.regressions());
  return out;
}

documents::CheckDocument to_document(const Report& report) {
  documents::CheckDocument document;
  document.compared = report.kind;
  document.regressions = report.regressions();
  for (const auto& c : report.comparisons) {
    documents::CheckMetricRow row;
    row.metric = c.name;
    row.field = c.field;
    row.better = c.better;
    row.baseline = c.baseline;
    row.current = c.current;
    if (c.baseline && c.current) row.delta_pct = c.delta_pct;
    row.tolerance_pct = c.tolerance_pct;
    row.status = status_of(c.verdict);
    document.metrics.push_back(std::move(row));
  }
  return document;
}

std::string render_junit(const Report& report) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites><testsuite name=\"lagom check {}\" tests=\"{}\" failures=\"{}\">\n",
                     documents::to_string(report.kind), report.comparisons.size(), report.regressions());
  for (const auto& c : report.comparisons) {
    out += fmt::format("  <testcase classname=\"lagom.check.{}\" name=\"{}\"",
                       documents::to_string(report.kind), markup_escape(c.name));
    if (c.verdict == Verdict::regressed || c.verdict == Verdict::missing) {
      out += fmt::format("><failure message=\"{}\"/></testcase>\n", markup_escape(describe(c)));
    } else {
      out += "/>\n";
    }
  }
  out += "</testsuite></testsuites>\n";
  return out;
}

}  // namespace lagom::check
