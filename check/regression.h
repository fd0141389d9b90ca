// `lagom check`: pairs the metrics of two documents of the same kind (simulate --json, tune --json,
// or a profile export; the metrics are the documents module's, documents/metrics.h) and judges each delta
// against a tolerance, knowing which direction is better. Rendering (table, JUnit XML, and the content of
// the JSON document, which documents/check.h writes) is here too because it is the report.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "documents/check.h"
#include "documents/kind.h"
#include "documents/metrics.h"

namespace lagom::check {

// The one kind enum (documents/kind.h); check compares simulate, tune (lagom-config.json as tune) and
// profile documents, whose metrics documents/metrics.h extracts.
using DocumentKind = documents::Kind;
using documents::Better;
using documents::extract_metrics;
using documents::Metric;

// The kind of a document (the one detector, documents::detect); a kind without metrics is an
// invalid_input error.
Result<DocumentKind> detect_kind(const nlohmann::json& document);

// "5", "5%", "busbw_GBps=3,iteration_time_s=1", or a mix ("5,busbw_GBps=3"). Percent, >= 0.
struct Tolerance {
  double default_pct = 5.0;
  std::map<std::string, double> per_field_pct;
  [[nodiscard]] double for_field(const std::string& field) const;
};
Result<Tolerance> parse_tolerance(const std::string& text);
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
// The `check --json` document's content (documents/check.h writes it).
documents::CheckDocument to_document(const Report& report);
std::string render_junit(const Report& report);

}  // namespace lagom::check
