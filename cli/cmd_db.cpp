// `lagom db`: list, show, export, import and fit profile runs (db/database.h, profiler/).
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/output.h"
#include "db/database.h"
#include "documents/db.h"
#include "documents/profile.h"
#include "profiler/import.h"
#include "profiler/nccl_tests_format.h"

namespace lagom::cli {

std::string render_fits(const db::FitSet& fits) {
  std::string out;
  if (!fits.collectives.empty()) {
    TextTable table({{"collective", true},
                     {"algo", true},
                     {"proto", true},
                     {"channels"},
                     {"ranks"},
                     {"nodes"},
                     {"latency_us"},
                     {"bus_bw_GBps"},
                     {"rel_error"},
                     {"samples"},
                     {"min_bytes"},
                     {"max_bytes"}});
    for (const auto& f : fits.collectives) {
      table.add_row({f.collective, f.algo.empty() ? "-" : f.algo, f.proto.empty() ? "-" : f.proto,
                     f.channels > 0 ? std::to_string(f.channels) : "-", std::to_string(f.ranks),
                     std::to_string(f.nodes), fmt::format("{:.3f}", f.latency_us),
                     fmt::format("{:.4f}", f.bus_bw_GBps), fmt::format("{:.3f}", f.rel_error),
                     std::to_string(f.samples), std::to_string(f.min_bytes), std::to_string(f.max_bytes)});
    }
    out += "# collective fits: time_us = latency_us + bytes / (bus_bw_GBps / busbw_factor * 1e3)\n" +
           table.render();
  }
  if (!fits.gemms.empty()) {
    TextTable table({{"precision", true}, {"peak_tflops"}, {"half_flops"}, {"rel_error"}, {"samples"}});
    for (const auto& f : fits.gemms) {
      table.add_row({f.precision, fmt::format("{:.4f}", f.peak_tflops), fmt::format("{:.4g}", f.half_flops),
                     fmt::format("{:.3f}", f.rel_error), std::to_string(f.samples)});
    }
    out += "# gemm fits: tflops = peak_tflops * flops / (flops + half_flops)\n" + table.render();
  }
  if (!fits.scalars.empty()) {
    TextTable table({{"name", true}, {"value"}});
    for (const auto& f : fits.scalars) table.add_row({f.name, fmt::format("{:.4f}", f.value)});
    out += "# other fits\n" + table.render();
  }
  return out;
}

namespace {

struct DbFlags {
  std::string db_path = "lagom.db";
  std::int64_t run_id = 0;
  std::string format;
  std::string file;
  // db import's overrides of what a log says; each applies to nccl-tests logs and vTrain LUTs only.
  std::optional<std::string> collective;
  std::optional<int> ranks;
  std::optional<int> nodes;
};

db::Database open_db(const std::string& what, const std::string& path, db::Database::Mode mode) {
  auto database = db::Database::open(path, mode);
  if (!database.ok()) throw CommandFailed{database.error().with_context(what)};
  return std::move(database).value();
}

template <typename T>
T need(const std::string& what, Result<T> result) {
  if (!result.ok()) throw CommandFailed{result.error().with_context(what)};
  return std::move(result).value();
}

void list(const DbFlags& flags, const Context& context) {
  auto database = open_db("db list", flags.db_path, db::Database::Mode::read_only);
  const auto runs = need("db list", database.list_runs());
  if (context.json) {
    print_json(documents::to_json(documents::DbListDocument{runs}));
    return;
  }
  TextTable table({{"id"},
                   {"status", true},
                   {"backend", true},
                   {"suite", true},
                   {"host", true},
                   {"ranks"},
                   {"nodes"},
                   {"started_at", true},
                   {"finished_at", true}});
  for (const auto& run : runs) {
    table.add_row({std::to_string(run.id), run.status, run.backend, run.suite,
                   run.host.empty() ? "-" : run.host, std::to_string(run.ranks), std::to_string(run.nodes),
                   run.started_at, run.finished_at.empty() ? "-" : run.finished_at});
  }
  fmt::print("{}", table.render());
}

void show(const DbFlags& flags, const Context& context) {
  const std::string what = fmt::format("db show {}", flags.run_id);
  auto database = open_db(what, flags.db_path, db::Database::Mode::read_only);
  const auto run = need(what, database.run(flags.run_id));
  const auto comm = need(what, database.comm_samples(flags.run_id));
  const auto compute = need(what, database.compute_samples(flags.run_id));
  const auto overlap = need(what, database.overlap_samples(flags.run_id));
  const auto fits = need(what, database.fits(flags.run_id));
  const auto production = need(what, database.production_records(flags.run_id));
  if (context.json) {
    print_json(documents::to_json(documents::DbShowDocument{run, comm.size(), compute.size(), overlap.size(),
                                                            production.size(), fits}));
    return;
  }
  TextTable table({{"field", true}, {"value", true}});
  const nlohmann::json fields = documents::to_json(run);
  for (const auto& [key, value] : fields.items()) {
    if (key == documents::k_run_options_field) continue;  // printed below: too wide for the table
    table.add_row({key, value.is_string() ? value.get<std::string>() : value.dump()});
  }
  table.add_row({"comm_samples", std::to_string(comm.size())});
  table.add_row({"compute_samples", std::to_string(compute.size())});
  table.add_row({"overlap_samples", std::to_string(overlap.size())});
  table.add_row({"production_records", std::to_string(production.size())});
  fmt::print("{}# options: {}\n{}", table.render(), fields[documents::k_run_options_field].dump(),
             render_fits(fits));
}

void export_run(const DbFlags& flags, const Context& context) {
  const std::string what = fmt::format("db export {}", flags.run_id);
  if (flags.format != "json" && flags.format != "csv" && flags.format != "nccl-tests") {
    fail(ErrorCode::invalid_input,
         what + ": --format " + flags.format + ": expected json, csv or nccl-tests");
  }
  // --json promises one JSON document on stdout (docs/cli.md): with a text format that promise cannot hold,
  // and printing the text anyway would hand a JSON reader CSV.
  if (context.json && flags.format != "json") {
    fail(ErrorCode::invalid_input,
         what + ": --json and --format " + flags.format +
             " contradict each other: --json prints the JSON document (--format json); drop one");
  }
  auto database = open_db(what, flags.db_path, db::Database::Mode::read_only);
  const auto run = need(what, database.run(flags.run_id));
  const auto comm = need(what, database.comm_samples(flags.run_id));
  const auto compute = need(what, database.compute_samples(flags.run_id));
  if (flags.format == "csv") {
    fmt::print("{}", documents::samples_csv(comm, compute));
    return;
  }
  if (flags.format == "nccl-tests") {
    fmt::print("# Lagom run {} ({}, {}) on {}, {} ranks, {} nodes\n", run.id, run.backend, run.status,
               run.host.empty() ? "-" : run.host, run.ranks, run.nodes);
    fmt::print("{}", profiler::render_nccl_tests(comm));
    return;
  }
  auto doc = documents::export_run_document(flags.db_path, flags.run_id);
  if (!doc.ok()) throw CommandFailed{doc.error().with_context(what)};
  print_json(*doc);
}

// Whether `path` holds production records (docs/records.md): a folder, a *.jsonl file, or a file whose
// first non-blank character opens a JSON object (nccl-tests logs and vTrain LUTs never do).
bool is_records_path(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return true;
  if (std::filesystem::path(path).extension() == ".jsonl") return true;
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  while (in.get(c)) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return c == '{';
  }
  return false;
}

void import_records(const DbFlags& flags, const Context& context) {
  const std::string what = "db import " + flags.file;
  // Each record names its own collective, ranks and nodes: a flag would have nothing to act on.
  for (const auto& [flag, given] :
       {std::pair{"--collective", flags.collective.has_value()},
        std::pair{"--ranks", flags.ranks.has_value()}, std::pair{"--nodes", flags.nodes.has_value()}}) {
    if (given) {
      fail(ErrorCode::invalid_input,
           fmt::format("{}: {} cannot apply to production records, which name their own collective, ranks "
                       "and nodes (it is for nccl-tests logs and vTrain LUTs)",
                       what, flag));
    }
  }
  const auto files = need(what, profiler::read_record_files(flags.file));
  auto database = open_db(what, flags.db_path, db::Database::Mode::read_write);
  const auto stored =
      need(what, profiler::import_records(database, flags.file, files,
                                          documents::records_import_options(flags.file, files.files)));
  // The lines skipped, once the rest is stored: a failed store is told by its error alone, first.
  for (const auto& warning : files.warnings) context.progress().warn(what + ": " + warning);
  const auto& imported = stored.imported;
  if (context.json) {
    documents::DbImportRecordsDocument document;
    if (imported.run_id != 0) document.run_id = imported.run_id;
    document.files = files.files.size();
    document.records = files.records.size();
    document.added = imported.added;
    document.already = imported.already;
    document.dropped_by_writer = stored.dropped_by_writer;
    document.warnings = files.warnings;
    print_json(documents::to_json(document));
    return;
  }
  if (imported.run_id == 0) {
    fmt::print("# {} records in {} files, all already in {}: nothing added\n", files.records.size(),
               files.files.size(), flags.db_path);
    return;
  }
  fmt::print("# imported {} new records ({} already stored) from {} files as production run {} in {}\n",
             imported.added, imported.already, files.files.size(), imported.run_id, flags.db_path);
  if (stored.dropped_by_writer > 0)
    fmt::print("# the writer reported {} records it could not write (summary lines)\n",
               stored.dropped_by_writer);
}

void import_file(const DbFlags& flags, const Context& context) {
  if (is_records_path(flags.file)) {
    import_records(flags, context);
    return;
  }
  const std::string what = "db import " + flags.file;
  const std::string text = need(what, files::read_input(flags.file));
  profiler::ImportOptions options;
  options.collective = flags.collective;
  options.ranks = flags.ranks;
  options.nodes = flags.nodes;
  const auto log = need(what, profiler::parse_log(flags.file, text, options));
  auto database = open_db(what, flags.db_path, db::Database::Mode::read_write);
  const auto stored =
      need(what, profiler::import_log(database, flags.file, log,
                                      documents::log_import_options(flags.file, log.format, log.collective)));
  // The rows skipped, once the rest is stored: a failed store is told by its error alone, first.
  for (const auto& skipped : log.skipped) context.progress().warn(what + ": skipped " + skipped);
  const auto& outcome = stored.outcome;
  if (context.json) {
    print_json(documents::to_json(
        documents::DbImportLogDocument{stored.run_id, log.format, log.collective, log.ranks, log.nodes,
                                       log.samples.size(), log.skipped, outcome.skipped, outcome.fits}));
    return;
  }
  fmt::print("# imported {} samples ({}, {} over {} ranks) as run {} in {}\n", log.samples.size(), log.format,
             log.collective, log.ranks, stored.run_id, flags.db_path);
  fmt::print("{}", render_fits(outcome.fits));
  if (!log.skipped.empty()) fmt::print("# skipped {} rows (listed on stderr)\n", log.skipped.size());
  for (const auto& skipped : outcome.skipped) fmt::print("# not fitted: {}\n", skipped);
}

void fit(const DbFlags& flags, const Context& context) {
  const std::string what = fmt::format("db fit {}", flags.run_id);
  auto database = open_db(what, flags.db_path, db::Database::Mode::read_write);
  const auto outcome = need(what, profiler::refit_run(database, flags.run_id));
  for (const auto& skipped : outcome.skipped) context.progress().warn("db fit: " + skipped);
  if (context.json) {
    print_json(documents::to_json(documents::DbFitDocument{flags.run_id, outcome.skipped, outcome.fits}));
    return;
  }
  fmt::print("{}", render_fits(outcome.fits));
}

}  // namespace

void add_db_command(CLI::App& app, Context& context) {
  auto flags = std::make_shared<DbFlags>();
  auto* command = app.add_subcommand("db", "List, show, export, import and fit profile runs");
  add_common_flags(*command, context);
  command->add_option("--db", flags->db_path, "Profile database")->default_val("lagom.db");
  command->require_subcommand(1);

  auto* list_cmd = command->add_subcommand("list", "List the runs (id, status, backend, host, times)");
  auto* show_cmd = command->add_subcommand("show", "Show a run's environment, sample counts and fits");
  show_cmd->add_option("RUN", flags->run_id, "Run id")->required();
  auto* export_cmd = command->add_subcommand("export", "Export a run's samples");
  export_cmd->add_option("RUN", flags->run_id, "Run id")->required();
  export_cmd->add_option("--format", flags->format, "json | csv | nccl-tests")->required();
  auto* import_cmd = command->add_subcommand(
      "import", "Import nccl-tests output, a vTrain LUT CSV or production records as a run");
  import_cmd
      ->add_option(
          "FILE", flags->file,
          "nccl-tests stdout log, vTrain LUT (e.g. AR_GPU8_1M_1024M_LUT), or a production records file "
          "(*.jsonl) or folder")
      ->required();
  import_cmd->add_option("--collective", flags->collective,
                         "The collective (nccl-tests, vTrain; overrides the file name or log)");
  import_cmd->add_option("--ranks", flags->ranks,
                         "Ranks (nccl-tests, vTrain; overrides the file name or log)");
  import_cmd->add_option("--nodes", flags->nodes,
                         "Nodes the ranks spanned, dividing them (nccl-tests, vTrain) [the log's, else 1]");
  auto* fit_cmd =
      command->add_subcommand("fit", "Fit the cost model's parameters from a complete run and store them");
  fit_cmd->add_option("RUN", flags->run_id, "Run id")->required();
  for (CLI::App* sub : {list_cmd, show_cmd, export_cmd, import_cmd, fit_cmd}) {
    // --db, --json and --quiet may follow the subcommand too.
    sub->fallthrough();
  }
  list_cmd->callback([flags, &context] { list(*flags, context); });
  show_cmd->callback([flags, &context] { show(*flags, context); });
  export_cmd->callback([flags, &context] { export_run(*flags, context); });
  import_cmd->callback([flags, &context] { import_file(*flags, context); });
  fit_cmd->callback([flags, &context] { fit(*flags, context); });
}

}  // namespace lagom::cli
