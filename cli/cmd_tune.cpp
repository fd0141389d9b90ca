// `lagom tune`: searches the communication knobs of one training iteration on the cost model (search/)
// and writes nccl_tuner.conf, lagom.env and lagom-config.json into --out (docs/search.md, docs/shim.md).
#include <filesystem>
#include <map>
#include <unistd.h>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/explore_options.h"
#include "cli/interval_text.h"
#include "cli/output.h"
#include "documents/comm_config.h"
#include "documents/lagom_config.h"
#include "documents/model.h"
#include "documents/nccl.h"
#include "documents/tune.h"
#include "inputs/scenario.h"
#include "model/presets.h"
#include "search/outputs.h"
#include "search/search.h"
#include "simulator/model_costs.h"

namespace lagom::cli {

using inputs::add_spec_flags;
using inputs::add_strategy_flags;
using inputs::load_scenario;
using inputs::parse_issue_priority_flag;
using inputs::SpecFlags;
using inputs::StrategyFlags;

namespace {

namespace fs = std::filesystem;

struct TuneFlags {
  SpecFlags spec;
  StrategyFlags strategy;
  std::string search = "lagom";
  std::string runtime = "nccl";
  std::string out = "./lagom-out";
  bool explain = false;
  std::optional<std::string> issue_priority;
  std::string framework = "any";
};

// The plugin built next to this binary (<build>/bin/lagom → <build>/lib/libnccl-tuner-lagom.so), else
// "lagom" (NCCL then looks for libnccl-tuner-lagom.so on the library path).
std::string plugin_path() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path plugin = exe.parent_path().parent_path() / "lib" / "libnccl-tuner-lagom.so";
    if (fs::exists(plugin, ec)) return fs::weakly_canonical(plugin, ec).string();
  }
  return "lagom";
}

std::string fmt_us(double us) {
  return fmt::format("{:.1f}", us);
}

void print_explain(const search::TuneResult& r, const std::vector<search::OpReport>& reports) {
  fmt::print("# explain: the grid (docs/search.md); Σ options {:.0f}, exhaustive cross product {:.3g}\n",
             r.grid_options, r.oracle_evaluations);
  auto print_decision = [](const search::Decision& d) {
    std::string labels;
    for (std::size_t i = 0; i < d.options.size(); ++i) {
      if (i == 12 && d.options.size() > 14) {
        labels += fmt::format(" ... ({} more)", d.options.size() - 12);
        break;
      }
      labels += (i ? ", " : "") + d.options[i].label;
    }
    fmt::print("grid {} [{}] {} options: {}\n", d.name, d.scope, d.options.size(), labels);
  };
  for (const auto& d : r.structural) print_decision(d);
  for (const auto& d : r.decisions) print_decision(d);
  // Trials per decision, in the order they were made.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const search::Trial*>> by_decision;
  for (const auto& t : r.trials) {
    if (by_decision.find(t.decision) == by_decision.end()) order.push_back(t.decision);
    by_decision[t.decision].push_back(&t);
  }
  fmt::print("# explain: what was tried (iteration, Y = compute, x = Σ communication, µs)\n");
  for (const auto& name : order) {
    const auto& trials = by_decision[name];
    long skipped = 0;
    fmt::print("## {}\n", name);
    for (const auto* t : trials) {
      if (t->note.rfind("skipped", 0) == 0) {
        ++skipped;
        continue;
      }
      fmt::print(
          "  {:<34} iteration {:>12}  Y {:>12}  x {:>12}{}  {}\n", t->option, fmt_us(t->iteration_us),
          fmt_us(t->compute_us), fmt_us(t->comm_us),
          t->class_comm_us > 0 ? fmt::format("  class {:>10}", fmt_us(t->class_comm_us)) : std::string(),
          t->note);
    }
    if (skipped > 0)
      fmt::print("  ({} options skipped: their price is dominated by another option's)\n", skipped);
  }
  fmt::print("# explain: winners\n");
  for (const auto& rep : reports) {
    fmt::print("{}: {}/{} ch {} thr {} chunk {} [{}], {} µs per call alone\n",
               simulator::op_class_name(rep.op.key), model::to_string(rep.config.algo),
               model::to_string(rep.config.proto), rep.config.channels, rep.config.threads,
               search::format_bytes(rep.config.chunk_bytes), rep.scope, fmt_us(rep.op.time_us));
  }
  for (const auto& note : r.notes) fmt::print("note: {}\n", note);
  fmt::print(
      "why: the winner of every decision is the option with the fastest simulated iteration among those "
      "tried ({} search); the iteration went from {} µs (NCCL defaults) to {} µs\n",
      search::to_string(r.search), fmt_us(r.baseline_iteration_us), fmt_us(r.predicted_iteration_us));
}

// What tune's human output reports, besides the op reports.
struct TunePrinted {
  const model::WorkloadSpec& workload;
  const model::Strategy& strategy;
  const model::ClusterSpec& cluster;
  const search::TuneResult& result;
  const documents::SpeedupSplit& split;
  const std::string& no_nccl_note;
  const std::string& out_dir;
  search::Framework framework;
  const search::FrameworkProfile& profile;
};

void print_tune(const TunePrinted& t, const std::vector<search::OpReport>& reports) {
  const auto& [workload, strategy, cluster, result, split, no_nccl_note, out_dir, framework, profile] = t;
  fmt::print("# lagom tune: {} on {} GPUs of {} (search {}, runtime {})\n", workload.name, strategy.gpus,
             cluster.name, search::to_string(result.search), model::to_string(result.runtime));
  fmt::print("{}\n", documents::model_shape_text(workload));
  fmt::print("{}\n", documents::nccl_text(cluster));
  if (!no_nccl_note.empty()) fmt::print("# {}\n", no_nccl_note);
  TextTable table({{"op", true},
                   {"count"},
                   {"algo", true},
                   {"proto", true},
                   {"channels"},
                   {"threads"},
                   {"chunk"},
                   {"time_us"},
                   {"scope", true}});
  for (const auto& r : reports) {
    table.add_row({simulator::op_class_name(r.op.key), fmt::format("{:g}", r.op.count),
                   std::string(model::to_string(r.config.algo)),
                   std::string(model::to_string(r.config.proto)), std::to_string(r.config.channels),
                   std::to_string(r.config.threads), search::format_bytes(r.config.chunk_bytes),
                   fmt_us(r.op.time_us), r.scope});
  }
  fmt::print("{}", table.render());
  fmt::print("# overlap: tp-overlap {}, bucket-mb {:g}, fsdp-prefetch {}, issue-priority {}\n",
             model::to_string(result.choice.tp_overlap), result.choice.bucket_mb, result.choice.prefetch,
             simulator::to_string(result.choice.priority));
  if (result.comm_knobs_searched && result.runtime == model::Runtime::nccl) {
    fmt::print("# per process: threads {}, chunk {}\n",
               result.choice.threads > 0 ? std::to_string(result.choice.threads) : "default",
               search::format_bytes(result.choice.chunk_bytes));
  }
  fmt::print("op_classes                  {}\n", result.result.op_classes.size());
  fmt::print("evaluations                 {}\n", result.evaluations);
  fmt::print("search_time_s               {:.3f}\n", result.search_time_s);
  fmt::print("baseline_iteration_time_s   {:.6f}\n", result.baseline_iteration_s());
  fmt::print("predicted_iteration_time_s  {:.6f}\n", result.predicted_iteration_s());
  const model::PredictionInterval interval =
      model::interval_for(model::regime_of(cluster, strategy, workload), strategy.gpus);
  fmt::print("predicted_90%_s             {}\n", interval_range(interval, result.predicted_iteration_s(), 6));
  fmt::print("{}", interval_note(interval));
  fmt::print("speedup                     {:.4f}\n", result.speedup());
  fmt::print(
      "speedup_nccl                {:.4f}  (NCCL knobs alone: what nccl_tuner.conf and lagom.env carry)\n",
      split.nccl);
  fmt::print(
      "speedup_framework           {:.4f}  (framework knobs alone: tp-overlap, bucket-mb, prefetch, "
      "issue-priority)\n",
      split.framework);
  fmt::print("memory_margin_gib           {:.2f}\n",
             result.result.memory_budget_gib - result.result.memory.total);
  const std::string framework_file = search::framework_file_name(framework);
  fmt::print("# wrote {}/nccl_tuner.conf, lagom.env, lagom-config.json{}\n", out_dir,
             framework_file.empty() ? std::string() : ", " + framework_file);
  if (framework == search::Framework::any &&
      result.choice.tp_overlap.kind != model::OverlapMethodKind::none &&
      result.choice.tp_overlap.kind != model::OverlapMethodKind::te) {
    fmt::print(
        "# tp-overlap {} runs only with Lagom's kernels; --framework megatron-lm|torch-fsdp|deepspeed "
        "searches what that framework runs\n",
        model::to_string(result.choice.tp_overlap));
  } else if (framework == search::Framework::any &&
             result.choice.tp_overlap.kind == model::OverlapMethodKind::te) {
    fmt::print(
        "# tp-overlap te is Transformer Engine's userbuffers overlap: Megatron-LM's --tp-comm-overlap "
        "(--framework megatron-lm writes it into megatron.args)\n");
  } else if (framework != search::Framework::any) {
    fmt::print("# framework {} ({}): its settings in {}\n", profile.name, profile.version,
               framework_file.empty() ? "lagom-config.json (framework.torch)" : framework_file);
  }
}

// One-step tuning: given no layout (no --tp, --pp, --dp, --zero, --micro-batch, ...), tune tunes the strategy
// explore ranks first under the same framework and flags (docs/cli.md "lagom tune"). The flags with that
// strategy's values; `note` says where it came from.
StrategyFlags explored_strategy(const TuneFlags& flags, search::Framework framework, const Context& context,
                                std::string& note) {
  check(inputs::check_required_flags(flags.spec, flags.strategy));
  const model::WorkloadSpec workload = unwrap(inputs::load_workload(flags.spec, &context.progress()));
  search::ExploreOptions options = unwrap(explore_options(flags.strategy, workload, framework));
  options.top = 1;
  const inputs::ClusterSource source =
      unwrap(inputs::load_cluster(flags.spec, options.base.gpus, &context.progress()));
  const model::CostModel cost_model(source.cluster, source.calibration, options.base.stack);
  const search::ExploreResult explored =
      unwrap(search::explore(workload, source.cluster, cost_model, options, context.progress()));
  if (explored.results.empty()) {
    fail(ErrorCode::invalid_input,
         fmt::format("tune: no layout given and no strategy for {} GPUs fits in memory ({} evaluated by "
                     "explore; give --tp, --pp, --zero, ... to tune one)",
                     options.base.gpus, explored.evaluated));
  }
  StrategyFlags out = flags.strategy;
  out.values = explored.results.front().strategy;
  note = fmt::format("# no layout given: tuning explore's best of {} strategies under --framework {}\n",
                     explored.evaluated, search::framework_profile(framework).name);
  return out;
}

void run_tune(const TuneFlags& flags, const Context& context) {
  const auto kind = flag_value("search", search::k_search_kind_names.parse_or_error(flags.search));
  const auto runtime = flag_value("runtime", model::k_runtime_names.parse_or_error(flags.runtime));

  const search::Framework framework = unwrap(search::parse_framework_flag(flags.framework));
  const search::FrameworkProfile& profile = search::framework_profile(framework);
  std::string explored_note;
  StrategyFlags strategy_flags = names_layout(flags.strategy)
                                     ? flags.strategy
                                     : explored_strategy(flags, framework, context, explored_note);
  // The framework's stack from the start: what the strategy is checked against (--recompute-early-stop
  // needs a PyTorch one) is the stack it runs.
  if (framework != search::Framework::any && !flags.strategy.has("stack"))
    strategy_flags.values.stack = profile.default_stack;
  auto scenario = unwrap(load_scenario(flags.spec, strategy_flags, &context.progress()));
  // The baseline is the framework's defaults: its own bucket size unless --bucket-mb pins one, its own
  // pipeline transfers unless --pp-tp-split does, its ZeRO-2 unless --zero2 does (its stack is set above).
  if (framework != search::Framework::any) {
    StrategyFlags with_defaults = strategy_flags;
    if (!flags.strategy.has("bucket_mb"))
      with_defaults.values.bucket_mb =
          search::default_bucket_mb(profile, scenario->workload, scenario->strategy);
    const model::Strategy framework_defaults = search::with_framework_defaults(profile, scenario->strategy);
    with_defaults.values.pp_tp_split = framework_defaults.pp_tp_split;
    with_defaults.values.zero2 = framework_defaults.zero2;
    if (with_defaults.values.bucket_mb != strategy_flags.values.bucket_mb ||
        with_defaults.values.pp_tp_split != strategy_flags.values.pp_tp_split ||
        with_defaults.values.zero2 != strategy_flags.values.zero2)
      scenario = unwrap(load_scenario(flags.spec, with_defaults));
  }
  check(search::check_strategy(profile, scenario->strategy));
  const model::WorkloadSpec& workload = scenario->workload;
  const model::ClusterSpec& cluster = scenario->cluster;
  const model::Strategy& strategy = scenario->strategy;
  const model::CostModel& cost_model = *scenario->model;
  const simulator::ModelCosts& costs = *scenario->costs;
  const simulator::MemoryGib memory = costs.memory();
  if (memory.total > costs.memory_capacity_gib()) {
    fail(ErrorCode::invalid_input,
         fmt::format(
             "tune: the strategy does not fit in memory: {:.1f} GiB per GPU needed, {:.1f} GiB available "
             "(usable memory − reserve)",
             memory.total, costs.memory_capacity_gib()));
  }

  search::Problem problem;
  problem.workload = &workload;
  problem.cluster = &cluster;
  problem.costs = &costs;
  problem.space.model = &cost_model;
  problem.space.strategy = strategy;
  problem.space.runtime = runtime;
  problem.space.pins.tp_overlap = flags.strategy.has("tp_overlap");
  problem.space.pins.bucket_mb = flags.strategy.has("bucket_mb");
  problem.space.pins.priority = flags.issue_priority.has_value();
  if (flags.issue_priority) problem.space.priority = unwrap(parse_issue_priority_flag(*flags.issue_priority));
  check(search::check_priority(profile, problem.space.priority));
  problem.space.framework = framework;

  context.progress().begin(fmt::format("tune ({} search)", flags.search), 0);
  const search::TuneResult result = unwrap(search::run_search(kind, problem));
  // The speedup split against the same baseline: the NCCL knobs alone (every framework knob held at the
  // strategy's value), the framework knobs alone (NCCL's defaults), both (the result above).
  search::Problem nccl_only = problem;
  nccl_only.space.pins = {true, true, true, true};
  search::Problem framework_only = problem;
  framework_only.space.search_nccl_knobs = false;
  documents::SpeedupSplit split;
  split.nccl = unwrap(search::run_search(kind, nccl_only)).speedup();
  split.framework = unwrap(search::run_search(kind, framework_only)).speedup();
  context.progress().end();

  search::OutputContext out;
  out.model = workload.name;
  out.cluster = cluster.name;
  out.strategy = model::to_json(strategy);
  out.plugin_path = plugin_path();
  std::error_code ec;
  out.out_dir = fs::absolute(flags.out, ec).lexically_normal().string();
  if (ec) fail(ErrorCode::io, fmt::format("out {}: {}", flags.out, ec.message()));
  // An existing file is a usage error (exit 2), not a failed write.
  if (fs::exists(out.out_dir, ec) && !fs::is_directory(out.out_dir, ec)) {
    fail(ErrorCode::invalid_input, fmt::format("--out {}: is a file, not a directory", flags.out));
  }
  check(as_write_failure(documents::write_tune_outputs(problem, result, out)));

  const std::vector<search::OpReport> reports = search::op_reports(problem, result);
  const std::string no_nccl_note =
      result.comm_knobs_searched
          ? std::string()
          : fmt::format("cluster {} has no NCCL: only the overlap knobs were searched", cluster.name);
  if (context.json) {
    print_json(documents::tune_json(problem, result, split, out.out_dir, no_nccl_note, flags.explain));
    return;
  }
  fmt::print("{}", explored_note);
  print_tune(
      TunePrinted{workload, strategy, cluster, result, split, no_nccl_note, out.out_dir, framework, profile},
      reports);
  if (flags.explain) print_explain(result, reports);
}

}  // namespace

void add_tune_command(CLI::App& app, Context& context) {
  auto* command = app.add_subcommand(
      "tune", "Search the communication knobs and write configs for NCCL and the framework");
  add_common_flags(*command, context);
  auto flags = std::make_shared<TuneFlags>();
  add_spec_flags(*command, flags->spec);
  add_strategy_flags(*command, flags->strategy);
  command->add_option("--search", flags->search, "lagom|autoccl|exhaustive|default [lagom]");
  command->add_option("--runtime", flags->runtime, "nccl|nccl-extended [nccl]");
  command->add_option("--out", flags->out, "Output directory, created if missing [./lagom-out]");
  command->add_option_function<std::string>(
      "--issue-priority", [flags](const std::string& v) { flags->issue_priority = v; },
      "Pin the issue priority of concurrent collectives: as-scheduled|critical-first [searched]");
  command->add_option("--framework", flags->framework,
                      "Search only what this framework runs and write its settings: "
                      "megatron-lm|torch-fsdp|deepspeed|any [any]");
  command->add_flag("--explain", flags->explain,
                    "Print the grid and, decision by decision, what was tried and why");
  command->callback([flags, &context] { run_tune(*flags, context); });
}

}  // namespace lagom::cli
