// `lagom profile`: measures this machine or cluster (profiler/profile.h) into the profile database.
// Human output: one nccl-tests table per collective series as it completes, then compute, overlap and
// fit tables; --json: one document at the end. Under mpirun only rank 0 prints.
#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "check/predicted.h"
#include "cli/app.h"
#include "cli/output.h"
#include "core/units.h"
#include "documents/db.h"
#include "documents/profile.h"
#include "profiler/nccl_tests_format.h"
#include "profiler/profile.h"

namespace lagom::cli {

namespace {

struct ProfileFlags {
  profiler::ProfileOptions options;
  std::string min_bytes, max_bytes, collectives, replay;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::string fmt_double(double value, int digits = 2) {
  return fmt::format("{:.{}f}", value, digits);
}

void print_tables(const profiler::ProfileReport& report) {
  if (!report.compute.empty()) {
    TextTable gemm({{"kind", true},
                    {"precision", true},
                    {"m"},
                    {"n"},
                    {"k"},
                    {"bytes"},
                    {"time_us"},
                    {"tflops"},
                    {"bw_GBps"}});
    for (const auto& s : report.compute) {
      const bool is_gemm = s.kind == "gemm";
      gemm.add_row({s.kind, is_gemm ? s.precision : "-", is_gemm ? std::to_string(s.m) : "-",
                    is_gemm ? std::to_string(s.n) : "-", is_gemm ? std::to_string(s.k) : "-",
                    is_gemm ? "-" : std::to_string(s.bytes), fmt_double(s.time_us),
                    is_gemm ? fmt::format("{:.4f}", s.tflops) : "-", is_gemm ? "-" : fmt_double(s.bw_GBps)});
    }
    fmt::print("# compute\n{}", gemm.render());
  }
  if (!report.overlap.empty()) {
    TextTable overlap({{"case", true},
                       {"bytes"},
                       {"gemm"},
                       {"gemm_alone_us"},
                       {"gemm_overlap_us"},
                       {"gemm_slowdown"},
                       {"comm_alone_us"},
                       {"comm_overlap_us"},
                       {"comm_slowdown"}});
    for (const auto& s : report.overlap) {
      overlap.add_row(
          {s.name, std::to_string(s.bytes), fmt::format("{}x{}x{} {}", s.m, s.n, s.k, s.precision),
           fmt_double(s.gemm_alone_us), fmt_double(s.gemm_overlap_us),
           fmt::format("{:.3f}", s.gemm_overlap_us / s.gemm_alone_us), fmt_double(s.comm_alone_us),
           fmt_double(s.comm_overlap_us), fmt::format("{:.3f}", s.comm_overlap_us / s.comm_alone_us)});
    }
    fmt::print("# overlap\n{}", overlap.render());
  }
}

}  // namespace

// Shared with cmd_db.cpp (declared there): renders a fit set as tables.
std::string render_fits(const db::FitSet& fits);

void add_profile_command(CLI::App& app, Context& context) {
  auto flags = std::make_shared<ProfileFlags>();
  auto* command =
      app.add_subcommand("profile", "Measure GEMMs, collectives and their overlap into the profile database");
  add_common_flags(*command, context);
  command->add_option("--backend", flags->options.backend, "auto | cpu | mpi | nccl")->default_val("auto");
  command->add_option("--suite", flags->options.suite, "all | compute | comm | interference (alias: overlap)")
      ->default_val("all");
  command->add_flag("--quick", flags->options.quick, "A small sweep (seconds)");
  command->add_option("--min-bytes", flags->min_bytes, "Smallest collective size (K/M/G suffixes)");
  command->add_option("--max-bytes", flags->max_bytes, "Largest collective size (K/M/G suffixes)");
  command->add_option("--step-factor", flags->options.step_factor,
                      "Size multiplier between steps (> 1, default 2)");
  command->add_option("--collectives", flags->collectives,
                      "Comma-separated collectives (default: all seven)");
  command->add_option("--db", flags->options.db_path, "Profile database (written by rank 0)")
      ->default_val("lagom.db");
  command->add_option("--records", flags->options.records_dir,
                      "mpi backend: every rank also writes one production record per timed call to "
                      "DIR/<host>-<pid>.jsonl (docs/records.md)");
  command->add_option("--replay", flags->replay,
                      "mpi or nccl backend: measure the collectives and sizes of a tune's op classes "
                      "(its lagom-config.json) instead of a sweep: the job's collectives replayed, whose "
                      "--records `lagom adapt` judges against the tune");
  command->callback([flags, command, &context] {
    auto options = flags->options;
    options.collectives = split_list(flags->collectives);
    if (!flags->replay.empty()) {
      if (!flags->min_bytes.empty() || !flags->max_bytes.empty() || !flags->collectives.empty() ||
          command->count("--step-factor") > 0) {
        fail(ErrorCode::invalid_input,
             "profile: --replay measures the config's op classes: not with --min-bytes, --max-bytes, "
             "--step-factor or --collectives");
      }
      auto classes = check::read_predictions(flags->replay);
      if (!classes.ok()) throw CommandFailed{classes.error().with_context("profile: --replay")};
      for (const auto& c : classes.value()) {
        if (std::find(options.collectives.begin(), options.collectives.end(), c.collective) ==
            options.collectives.end()) {
          options.collectives.push_back(c.collective);
        }
        options.sizes_bytes.push_back(static_cast<std::int64_t>(c.bytes));
      }
      if (options.sizes_bytes.empty())
        fail(ErrorCode::invalid_input, "profile: --replay: the config has no op class");
    }
    if (!flags->min_bytes.empty()) {
      auto bytes = units::parse_size(flags->min_bytes);
      if (!bytes.ok()) fail(ErrorCode::invalid_input, "profile: --min-bytes: " + bytes.error().message);
      options.min_bytes = bytes.value();
    }
    if (!flags->max_bytes.empty()) {
      auto bytes = units::parse_size(flags->max_bytes);
      if (!bytes.ok()) fail(ErrorCode::invalid_input, "profile: --max-bytes: " + bytes.error().message);
      options.max_bytes = bytes.value();
    }
    const bool json = context.json;
    profiler::SeriesCallback on_series;
    if (!json) {
      on_series = [](const std::vector<db::CommSample>& series) {
        fmt::print("{}", profiler::render_nccl_tests(series));
        std::fflush(stdout);
      };
    }
    auto result =
        profiler::run_profile(options, context.progress(), documents::profile_run_options, on_series);
    if (!result.ok()) throw CommandFailed{result.error().with_context("profile")};
    const auto& report = result.value();
    if (!report.is_root) return;
    if (json) {
      print_json(documents::to_json(documents::ProfileDocument{
          report.run_id, report.backend, report.suite, report.ranks, report.nodes, options.db_path,
          report.warnings, report.comm, report.compute, report.overlap, report.fits}));
      return;
    }
    print_tables(report);
    fmt::print("{}", render_fits(report.fits));
    fmt::print("# run {} ({} backend, {} ranks, {} nodes) complete in {}\n", report.run_id, report.backend,
               report.ranks, report.nodes, options.db_path);
  });
}

}  // namespace lagom::cli
