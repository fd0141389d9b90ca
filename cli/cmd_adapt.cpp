// `lagom adapt --watch DIR --config OUT`: the runtime half of `lagom tune` (adapt/adapt.h, docs/adapt.md).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "adapt/adapt.h"
#include "adapt/watch.h"
#include "cli/app.h"
#include "cli/output.h"
#include "core/units.h"
#include "documents/adapt.h"

namespace lagom::cli {

using adapt::Adapter;
using adapt::AdaptOptions;
using adapt::Event;
using adapt::k_max_interval_ms;
using adapt::k_max_window;
using adapt::k_min_interval_ms;
using adapt::k_min_window;
using adapt::RecordsFollower;

namespace {

namespace fs = std::filesystem;

struct AdaptFlags {
  std::string watch;
  std::string config;
  std::string tolerance = "10";
  std::size_t window = 16;
  long interval_ms = 1000;
  bool once = false;
  bool explain = false;
};

double parse_tolerance(const std::string& text) {
  const std::optional<double> value = units::parse_percentage(text);
  if (!value || !(*value > 0) || *value > 1000) {
    fail(ErrorCode::invalid_input,
         "adapt: --tolerance " + text + ": one percentage above 0, at most 1000 (e.g. 10 or 10%)");
  }
  return *value;
}

documents::AdaptEventRow event_row(const Event& e) {
  return {e.kind, e.op_class, e.message, e.data};
}

// Without --explain only the decisions that change something, or explain why nothing could, are printed.
bool shown(const Event& e, bool explain) {
  return explain || e.kind == "drift" || e.kind == "rule" || e.kind == "replaced" || e.kind == "failed" ||
         e.kind == "skip" || e.kind == "unchanged";
}

void print_events(const std::vector<Event>& events, bool json, bool explain) {
  for (const auto& e : events) {
    if (json) {
      fmt::print("{}\n", documents::to_json(event_row(e)).dump());
    } else if (shown(e, explain)) {
      fmt::print("adapt: {}{}: {}\n", e.kind, e.op_class.empty() ? "" : " " + e.op_class, e.message);
    }
  }
  std::fflush(stdout);
}

void run_adapt(const AdaptFlags& flags, const Context& context) {
  AdaptOptions options;
  options.tolerance_pct = parse_tolerance(flags.tolerance);
  options.window = bounded("--window", flags.window, k_min_window, k_max_window);
  const long interval_ms = bounded("--interval-ms", flags.interval_ms, k_min_interval_ms, k_max_interval_ms);
  // --config names the folder `lagom tune --out` wrote, or its lagom-config.json.
  std::error_code ec;
  std::string config_dir = flags.config;
  if (fs::is_regular_file(config_dir, ec)) config_dir = fs::path(config_dir).parent_path().string();
  if (config_dir.empty()) config_dir = ".";
  if (!fs::is_directory(config_dir, ec)) {
    fail(ErrorCode::invalid_input,
         fmt::format("adapt: --config {}: no such folder (the --out of lagom tune)", flags.config));
  }
  Adapter adapter = unwrap(Adapter::open(config_dir, options));
  RecordsFollower follower(flags.watch);

  std::vector<Event> events;
  events.push_back(
      {"start", "",
       fmt::format("{} op classes of {}/lagom-config.json; window {} records, tolerance {}%{}",
                   adapter.classes().size(), config_dir, options.window, options.tolerance_pct,
                   flags.once ? ", one pass" : fmt::format(", polling every {} ms", interval_ms)),
       documents::to_json(
           documents::AdaptStartData{adapter.classes().size(), options.window, options.tolerance_pct})});
  const bool json_lines = context.json && !flags.once;
  auto pass = [&] {
    auto batch = follower.poll();
    if (!batch.ok()) throw CommandFailed{batch.error().with_context("adapt")};
    for (const auto& warning : batch->warnings) context.progress().warn("adapt: " + warning);
    adapter.feed(batch->records, events);
  };

  if (flags.once) {
    pass();
    if (follower.partial_lines() > 0) {
      context.progress().warn(
          fmt::format("adapt: {} file(s) end in a line without its newline (still being written): left out",
                      follower.partial_lines()));
    }
    if (context.json) {
      documents::AdaptDocument document{
          config_dir, adapter.records_seen(), adapter.unmatched(), adapter.retunes(), {}};
      for (const auto& e : events) document.events.push_back(event_row(e));
      print_json(documents::to_json(document));
    } else {
      print_events(events, false, flags.explain);
      fmt::print("# adapt: {} records, {} matched no op class, {} re-tune(s)\n", adapter.records_seen(),
                 adapter.unmatched(), adapter.retunes());
    }
    return;
  }

  adapt::watch_until_stopped(interval_ms, [&] {
    pass();
    print_events(events, json_lines, flags.explain);
    events.clear();
  });
  const std::string summary =
      fmt::format("stopped by a signal after {} records ({} matched no op class), {} re-tune(s)",
                  adapter.records_seen(), adapter.unmatched(), adapter.retunes());
  print_events({{"stop", "", summary,
                 documents::to_json(documents::AdaptStopData{adapter.records_seen(), adapter.unmatched(),
                                                             adapter.retunes()})}},
               json_lines, true);
}

}  // namespace

void add_adapt_command(CLI::App& app, Context& context) {
  auto* command = app.add_subcommand(
      "adapt", "Follow a job's production records and re-tune its config when the collectives drift");
  add_common_flags(*command, context);
  auto flags = std::make_shared<AdaptFlags>();
  command->add_option("--watch", flags->watch, "Folder of production records (LAGOM_PROFILE_DIR)")
      ->required();
  command
      ->add_option("--config", flags->config, "The folder lagom tune --out wrote (or its lagom-config.json)")
      ->required();
  command->add_option("--tolerance", flags->tolerance, "Drift beyond this percentage of the prediction [10]");
  command->add_option("--window", flags->window, "Records per op class in the moving window [16]");
  command->add_option("--interval-ms", flags->interval_ms, "Milliseconds between polls of the folder [1000]");
  command->add_flag("--once", flags->once, "One pass over the records there, then exit (CI, cron)");
  command->add_flag("--explain", flags->explain, "Print every decision with its reason");
  command->callback([flags, &context] { run_adapt(*flags, context); });
}

}  // namespace lagom::cli
