// `lagom report`: one self-contained HTML page from simulate, explore, tune, validate, check documents and
// profile runs (docs/report.md). The sections are built by report/report.cpp; this file reads the inputs and
// the chart library and writes the page.
#include <cctype>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/output.h"
#include "documents/profile.h"
#include "documents/report.h"
#include "documents/simulate.h"
#include "lagom/build_info.h"
#include "model/presets.h"
#include "report/report.h"

namespace lagom::cli {

namespace {

// Where Debian's libjs-chart.js puts the UMD build of Chart.js (dpkg -L libjs-chart.js).
constexpr const char* k_debian_chart_js = "/usr/share/javascript/chart.js/chart.min.js";

struct ReportFlags {
  std::vector<std::string> inputs;  // JSON documents, in the order their sections appear
  std::string out;
  std::string db_path = "lagom.db";
  std::vector<std::int64_t> runs;  // profile runs in --db, after the documents
  std::string title = "Lagom report";
  int top = 50;
  std::string chart_js = k_debian_chart_js;
  bool db_given = false,
       top_given = false;  // --db, --top on the command line (each acts on some inputs only)
};

Result<std::string> read_chart_library(const std::string& path) {
  const std::string hint =
      "install the Debian package libjs-chart.js, or give --chart-js the path of chart.min.js";
  auto read = files::read_input(path);
  if (!read.ok() && read.error().code == ErrorCode::not_found) {
    return make_error(ErrorCode::unavailable,
                      fmt::format("chart library {}: cannot open file ({})", path, hint));
  }
  if (!read.ok()) return read.error().with_context("chart library");
  std::stringstream text;
  text << read.value();
  // The UMD build starts with its licence header ("Chart.js v3.9.1 ... MIT License"), kept in the page.
  if (text.str().find("Chart.js v") == std::string::npos) {
    return make_error(
        ErrorCode::invalid_input,
        fmt::format("chart library {}: not a Chart.js build (no 'Chart.js v' header; {})", path, hint));
  }
  return text.str();
}

std::string chart_version(const std::string& library) {
  const std::size_t at = library.find("Chart.js v");
  if (at == std::string::npos) return "";
  const std::size_t begin = at + 10;
  std::size_t end = begin;
  while (end < library.size() &&
         (std::isdigit(static_cast<unsigned char>(library[end])) || library[end] == '.')) {
    ++end;
  }
  return library.substr(begin, end - begin);
}

// The device memory of the simulated GPU, when a cluster preset has that GPU (the document names the GPU,
// not its memory): the preset of the document's cluster name first, then any preset with that GPU.
std::optional<double> preset_gpu_memory(const nlohmann::json& simulate_document) {
  const auto [cluster, gpu] = documents::simulated_cluster_names(simulate_document);
  if (gpu.empty()) return std::nullopt;
  if (!cluster.empty()) {
    auto preset = model::cluster_preset(cluster);
    if (preset.ok() && preset->gpu.name == gpu && preset->gpu.memory_gib > 0) return preset->gpu.memory_gib;
  }
  for (const auto& preset : model::cluster_presets()) {
    if (preset.gpu.name == gpu && preset.gpu.memory_gib > 0) return preset.gpu.memory_gib;
  }
  return std::nullopt;
}

void run_report(const ReportFlags& flags, const Context& context) {
  if (flags.inputs.empty() && flags.runs.empty()) {
    fail(ErrorCode::invalid_input, "report: no input (give documents, or --run ID with --db PATH)");
  }
  if (flags.top < 1) fail(ErrorCode::invalid_input, "report: --top: must be at least 1");
  // --db is read only for --run, --top only by an explore section: given where they cannot act, they are
  // refused as every flag without effect is (docs/cli.md#lagom-report).
  if (flags.db_given && flags.runs.empty()) {
    fail(ErrorCode::invalid_input,
         fmt::format("report: --db {}: it holds the profile runs of --run, and no --run is given: the flag "
                     "would have no effect",
                     flags.db_path));
  }
  // The library first: a missing package is the likeliest failure and needs no input read to be told.
  auto library_read = read_chart_library(flags.chart_js);
  if (!library_read.ok()) throw CommandFailed{library_read.error().with_context("report")};
  const std::string library = std::move(library_read).value();

  report::SectionOptions options;
  options.table_rows = static_cast<std::size_t>(flags.top);
  report::Page page;
  page.title = flags.title;
  std::vector<documents::ReportSectionRow> listing;
  auto add = [&](const nlohmann::json& document, const std::string& source) {
    auto kind = report::detect_kind(document);
    if (!kind.ok()) throw CommandFailed{kind.error().with_context("report: " + source)};
    report::SectionOptions these = options;
    if (*kind == report::Kind::simulate) these.gpu_memory_gib = preset_gpu_memory(document);
    auto section = report::build_section(document, *kind, source, these);
    if (!section.ok()) throw CommandFailed{section.error().with_context("report")};
    page.sections.push_back(std::move(section).value());
    listing.push_back({std::string(report::to_string(*kind)), source});
  };
  for (const auto& path : flags.inputs) {
    auto document = read_json_file(path);
    if (!document.ok()) throw CommandFailed{document.error().with_context("report")};
    add(*document, path);
  }
  for (const std::int64_t run : flags.runs) {
    const std::string source = fmt::format("{} run {}", flags.db_path, run);
    auto document = documents::export_run_document(flags.db_path, run);
    if (!document.ok()) throw CommandFailed{document.error().with_context("report: " + source)};
    add(*document, source);
  }
  std::string kinds;
  bool explored = false;
  for (const auto& entry : listing) {
    kinds += (kinds.empty() ? "" : ", ") + entry.kind;
    explored = explored || entry.kind == report::to_string(report::Kind::explore);
  }
  if (flags.top_given && !explored) {
    fail(ErrorCode::invalid_input,
         fmt::format("report: --top {}: it limits an explore section's table, and no input is an explore "
                     "document ({}): the flag would have no effect",
                     flags.top, kinds));
  }
  page.subtitle = fmt::format("{} section{}: {}", listing.size(), listing.size() == 1 ? "" : "s", kinds);
  page.footer = fmt::format(
      "Written by lagom {} ({}). Charts by Chart.js {} (MIT licence; the notice is at the end of this file), "
      "inlined from {}.",
      build::k_version, build::k_git_sha, chart_version(library), flags.chart_js);
  const std::string html = report::render_html(page, library);
  if (auto written = write_output_file(flags.out, html); !written.ok()) {
    throw CommandFailed{written.error().with_context("report: --out")};
  }
  if (context.json) {
    print_json(documents::to_json(documents::ReportDocument{flags.out, html.size(), std::move(listing)}));
  } else if (!context.quiet) {
    fmt::print("# lagom report: {} ({} bytes): {}\n", flags.out, html.size(), page.subtitle);
  }
}

}  // namespace

void add_report_command(CLI::App& app, Context& context) {
  auto flags = std::make_shared<ReportFlags>();
  auto* command =
      app.add_subcommand("report", "One self-contained HTML page from Lagom's JSON documents and profiles");
  command->add_option(
      "inputs", flags->inputs,
      "simulate/explore/tune/profile/validate/check --json documents, lagom-config.json, db exports");
  command->add_option("--out", flags->out, "The HTML file to write (never one of the inputs)")->required();
  command->add_option("--db", flags->db_path, "Profile database for --run")->capture_default_str();
  command->add_option("--run", flags->runs, "A profile run in --db to draw (repeatable: --run 3 --run 4)")
      ->allow_extra_args(false)  // one id per --run, so that documents may follow it
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_option("--title", flags->title, "The page's title")->capture_default_str();
  command->add_option("--top", flags->top, "Rows of the explore strategy table (the scatter shows all)")
      ->capture_default_str();
  command->add_option("--chart-js", flags->chart_js, "Chart.js UMD build to inline (Debian: libjs-chart.js)")
      ->capture_default_str();
  add_common_flags(*command, context);
  command->callback([flags, command, &context] {
    flags->db_given = command->count("--db") > 0;
    flags->top_given = command->count("--top") > 0;
    run_report(*flags, context);
  });
}

}  // namespace lagom::cli
