// `lagom report`: one self-contained HTML page from the documents Lagom writes (docs/report.md).
//
// Each input document is recognised by its fields (detect_kind: the writers do not all carry a `kind`,
// and check's `kind` names the kind of the documents it compared), read by its kind's reader in
// documents/ (every field checked; an error names the file and the field path), and turned into one section:
// plain JSON holding exactly what the page draws, with what the page should not compute itself derived here
// (the Pareto front of explore, the fitted curves of a profile, the default-vs-tuned table of tune, each
// cluster's time–cost front of a plan).
// render_html() puts the sections, the chart library's text and the page template
// (report/report_template.html, embedded at build time) together. Pure functions over JSON and strings: no
// file access, no printing.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace lagom::report {

enum class Kind { simulate, explore, tune, profile, validate, check, plan };
std::string_view to_string(Kind kind);

// The kind of a document by the fields that only that writer writes (docs/report.md#inputs):
//   simulate  iteration_time_s (number), breakdown_s and stage_breakdown_s (object, array)
//   explore   results (array), evaluated and simulated (numbers)
//   tune      search (string), predicted_iteration_time_s (number), ops (array): tune --json and
//             lagom-config.json alike
//   profile   run (object) or run_id (number), comm and compute (arrays): `lagom db export RUN --format
//             json`, `lagom profile --json`
//   validate  kind "validate", runs (array), groups (object)
//   check     metrics (array), passed (boolean), regressions (number)
//   plan      kind "plan" (plan documents always carry their kind)
// Anything else is an invalid_input error that lists the kinds.
Result<Kind> detect_kind(const nlohmann::json& document);

struct SectionOptions {
  std::size_t table_rows = 50;  // rows of explore's strategy table (the scatter shows every strategy); >= 1
  // Device memory of the simulated GPU in GiB, when the caller knows it (a preset's GPU); drawn as the
  // capacity bar of simulate's memory chart.
  std::optional<double> gpu_memory_gib;
};

// One section of the page from a document of `kind`; `source` says where the document came from (a file
// name, "lagom.db run 3") and prefixes every error: "<source>: field results[2].mfu: expected a number".
Result<nlohmann::json> build_section(const nlohmann::json& document, Kind kind, const std::string& source,
                                     const SectionOptions& options = {});

// The whole page. `chart_library` is the text of Chart.js's UMD build (chart.min.js, licence header
// included); the page works offline because everything is inlined.
struct Page {
  std::string title;
  std::string subtitle;
  std::string footer;
  nlohmann::json sections = nlohmann::json::array();
};
std::string render_html(const Page& page, std::string_view chart_library);

// The page template as embedded at build time (report/report_template.html).
std::string_view page_template();

}  // namespace lagom::report
