// `lagom check`: pairs the metrics of two documents of the same kind (simulate --json, tune --json,
// or a profile export) and judges each delta against a tolerance, knowing which direction is better.
// Pure functions over JSON; rendering (table, JSON, JUnit XML) is here too because it is the report.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace lagom::cli::regression {

enum class DocumentKind { simulate, tune, profile };
std::string_view to_string(DocumentKind kind);

// Tells a document's kind from its fields; an unknown document is an invalid_input error.
Result<DocumentKind> detect_kind(const nlohmann::json& document);

enum class Better { lower, higher };

// One comparable number: `field` is the JSON field name users give per-metric tolerances by
// (e.g. "busbw_GBps"); `name` identifies this instance (e.g. "busbw_GBps allreduce 8r 64M").
struct Metric {
  std::string name;
  std::string field;
  Better better = Better::lower;
  double value = 0;
};

// Extracts the metrics of a document of the given kind.
Result<std::vector<Metric>> extract_metrics(const nlohmann::json& document, DocumentKind kind);

// "5", "5%", "busbw_GBps=3,iteration_time_s=1", or a mix ("5,busbw_GBps=3"). Percent, >= 0.
struct Tolerance {
  double default_pct = 5.0;
  std::map<std::string, double> per_field_pct;
  [[nodiscard]] double for_field(const std::string& field) const;
};
Result<Tolerance> parse_tolerance(const std::string& text);
// The field names a tolerance may name for documents of `kind`.
std::vector<std::string> metric_fields(DocumentKind kind);
// A per-field tolerance whose name is not a metric of `kind` (a typo, `iteration_time=1`) is an error
// listing the valid names, never a silently unused setting.
Status check_tolerance_fields(const Tolerance& tolerance, DocumentKind kind);

enum class Verdict { ok, improved, regressed, missing, added };
std::string_view to_string(Verdict verdict);

struct Comparison {
  std::string name;
  std::string field;
  Better better = Better::lower;
  std::optional<double> baseline, current;
  double delta_pct = 0;  // (current − baseline) / |baseline| × 100; 0 when either side is absent
  double tolerance_pct = 0;
  Verdict verdict = Verdict::ok;
};

struct Report {
  DocumentKind kind = DocumentKind::simulate;
  std::vector<Comparison> comparisons;
  [[nodiscard]] int regressions() const;  // regressed + missing
};

// Pairs metrics by name. A metric worse than its tolerance regresses; a metric of the baseline that the
// current document lacks is `missing` and counts as a regression; one only in current is `added`.
Report compare(DocumentKind kind, const std::vector<Metric>& baseline, const std::vector<Metric>& current,
               const Tolerance& tolerance);

std::string render_table(const Report& report);
nlohmann::json render_json(const Report& report);
std::string render_junit(const Report& report);

}  // namespace lagom::cli::regression
