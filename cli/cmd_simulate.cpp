// `lagom simulate`: one training iteration on the cost model (simulator/), as a human summary or --json,
// with an optional Chrome/Perfetto trace and a tuned communication config.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/interval_text.h"
#include "cli/output.h"
#include "cli/simulate_run.h"
#include "documents/comm_config.h"
#include "documents/lagom_config.h"
#include "documents/model.h"
#include "documents/nccl.h"
#include "documents/simulate.h"
#include "inputs/scenario.h"
#include "model/presets.h"
#include "simulator/model_costs.h"
#include "simulator/trace.h"

namespace lagom::cli {

using inputs::add_spec_flags;
using inputs::add_strategy_flags;
using inputs::load_scenario;
using inputs::parse_issue_priority_flag;
using inputs::SpecFlags;
using inputs::StrategyFlags;

namespace {

struct SimulateFlags {
  SpecFlags spec;
  StrategyFlags strategy;
  std::string comm_config;
  std::string trace;
  std::optional<std::string> issue_priority;
  SimulateRunFlags run;  // --tokens, --price (cli/simulate_run.h)
};

// A --comm-config entry for an op class or communicator the run never issues changes nothing: said, naming
// it, rather than applied silently (docs/simulator.md#--comm-config-file).
void warn_unused_entries(const simulator::CommAssignment& assignment,
                         const simulator::SimulationResult& result, const std::string& file,
                         Progress& progress) {
  std::string classes, groups;
  for (const auto& entry : assignment.per_class) {
    const auto& key = entry.first;
    const bool issued = std::any_of(result.op_classes.begin(), result.op_classes.end(),
                                    [&key](const simulator::OpClass& c) { return c.key == key; });
    if (!issued) classes += (classes.empty() ? "" : ", ") + simulator::op_class_name(key);
  }
  for (const auto& [group, ctas] : assignment.comm_ctas) {
    const bool issued =
        std::any_of(result.op_classes.begin(), result.op_classes.end(),
                    [group = group](const simulator::OpClass& c) { return c.key.group == group; });
    if (!issued) groups += (groups.empty() ? "" : ", ") + std::string(model::to_string(group));
  }
  if (!classes.empty()) {
    progress.warn(
        fmt::format("{}: ops: this run issues no op class {}: those entries have no effect", file, classes));
  }
  if (!groups.empty()) {
    progress.warn(
        fmt::format("{}: communicators: this run issues no collective on {}: those entries have no "
                    "effect",
                    file, groups));
  }
}

void run_simulate(const SimulateFlags& flags, const Context& context) {
  const auto scenario = unwrap(load_scenario(flags.spec, flags.strategy, &context.progress()));
  const model::WorkloadSpec& workload = scenario->workload;
  const model::ClusterSpec& cluster = scenario->cluster;
  const model::Strategy& strategy = scenario->strategy;
  const simulator::ModelCosts& costs = *scenario->costs;
  simulator::CommAssignment assignment;
  if (!flags.comm_config.empty()) {
    const nlohmann::json document = unwrap(read_json_file(flags.comm_config));
    assignment = unwrap(documents::parse_comm_config(document, flags.comm_config));
    check(documents::check_tuned_for(document, flags.comm_config, workload, cluster, strategy));
    check(costs.validate(assignment));
  }
  if (flags.issue_priority) assignment.priority = unwrap(parse_issue_priority_flag(*flags.issue_priority));
  simulator::SimulateOptions options;
  options.timeline = !flags.trace.empty() || wants_run(flags.run);
  const simulator::SimulationResult result =
      unwrap(simulator::simulate(workload, cluster, strategy, costs, assignment, options));
  if (!flags.comm_config.empty())
    warn_unused_entries(assignment, result, flags.comm_config, context.progress());
  const std::optional<plan::PlanRow> run = unwrap(simulate_run(flags.run, *scenario, result));
  if (!flags.trace.empty()) {
    check(write_output_file(flags.trace, simulator::chrome_trace(result).dump()));
  }
  // What the run used: a --comm-config's overlap knobs replace the strategy's.
  const model::OverlapMethod tp_overlap = assignment.tp_overlap.value_or(strategy.tp_overlap);
  const double bucket_mb = assignment.bucket_mb.value_or(strategy.bucket_mb);
  if (context.json) {
    documents::SimulateExtras extras;
    if (!flags.comm_config.empty()) {
      extras.comm_config = documents::SimulateCommConfig{flags.comm_config,
                                                         tp_overlap,
                                                         bucket_mb,
                                                         assignment.fsdp_prefetch,
                                                         assignment.per_class.size(),
                                                         assignment.comm_ctas.size()};
    }
    extras.run = run;
    print_json(documents::simulation_json(result, strategy, cluster, workload, extras));
    return;
  }
  const double t = result.iteration_time_s;
  auto pct = [&](double part) { return t > 0 ? 100.0 * part / t : 0.0; };
  fmt::print("# lagom simulate: {} on {} GPUs of {} ({} node{} × {} {})\n", workload.name, strategy.gpus,
             cluster.name, cluster.nodes, cluster.nodes == 1 ? "" : "s", cluster.gpus_per_node,
             cluster.gpu.name);
  fmt::print("{}\n", documents::model_shape_text(workload));
  fmt::print("{}\n", documents::nccl_text(cluster));
  fmt::print(
      "# strategy: tp {} pp {} dp {} cp {} ep {} sp {} vpp {} zero {} micro-batch {} global-batch {} "
      "recompute {} schedule {} tp-overlap {} dp-overlap {} bucket-mb {} precision {} attention {} stack "
      "{}{}{}{}{}\n",
      strategy.tp, strategy.pp, strategy.dp, strategy.cp, strategy.ep, strategy.sp ? "on" : "off",
      strategy.vpp, strategy.zero, strategy.micro_batch, strategy.global_batch,
      model::recompute_text(strategy), model::to_string(strategy.schedule), model::to_string(tp_overlap),
      strategy.dp_overlap ? "on" : "off", bucket_mb, model::to_string(strategy.precision),
      model::to_string(strategy.attention), model::to_string(strategy.stack),
      strategy.dp_shard > 0 ? fmt::format(" dp-shard {}", strategy.dp_shard) : std::string(),
      strategy.zero == 2 ? fmt::format(" zero2 {}", model::to_string(strategy.zero2)) : std::string(),
      model::gathers_per_layer(strategy) ? fmt::format(" sharding {}", model::to_string(strategy.sharding))
                                         : std::string(),
      strategy.recompute_early_stop ? " recompute-early-stop on" : "");
  if (!flags.comm_config.empty()) {
    fmt::print(
        "# comm-config {}: tp-overlap {}, bucket-mb {:g}, fsdp-prefetch {}, {} op classes, {} "
        "communicators\n",
        flags.comm_config, model::to_string(tp_overlap), bucket_mb, assignment.fsdp_prefetch,
        assignment.per_class.size(), assignment.comm_ctas.size());
  }
  fmt::print("iteration_time_s        {:.6f}\n", t);
  const model::PredictionInterval interval =
      model::interval_for(model::regime_of(cluster, strategy, workload), strategy.gpus);
  fmt::print("iteration_90%_s         {}\n", interval_range(interval, t, 6));
  fmt::print("{}", interval_note(interval));
  fmt::print("tokens_per_s            {:.1f}\n", result.tokens_per_s);
  fmt::print("model_tflops_per_gpu    {:.1f}\n", result.model_tflops_per_gpu);
  fmt::print("hardware_tflops_per_gpu {:.1f}\n", result.hardware_tflops_per_gpu);
  fmt::print("mfu                     {:.1f} %\n", 100.0 * result.mfu);
  fmt::print("hfu                     {:.1f} %\n", 100.0 * result.hfu);
  if (result.hfu < result.mfu) {
    // The FLOPs conventions (docs/model.md "FLOPs convention"): a reader expects HFU >= MFU.
    fmt::print(
        "# hfu < mfu: a causal fused attention kernel runs about half the score matrix that model\n"
        "# FLOPs count in full, more than recomputation adds (docs/model.md \"FLOPs convention\")\n");
  }
  fmt::print("# breakdown (mean over {} pipeline stages; adds up to the iteration time)\n",
             result.stages.size());
  const auto& b = result.breakdown;
  fmt::print("compute_s               {:.6f}  {:5.1f} %\n", b.compute_s, pct(b.compute_s));
  fmt::print("exposed_comm_s          {:.6f}  {:5.1f} %\n", b.exposed_comm_s, pct(b.exposed_comm_s));
  fmt::print("pipeline_bubble_s       {:.6f}  {:5.1f} %\n", b.pipeline_bubble_s, pct(b.pipeline_bubble_s));
  fmt::print("optimizer_s             {:.6f}  {:5.1f} %\n", b.optimizer_s, pct(b.optimizer_s));
  const model::GpuSpec& gpu = cluster.gpu;
  fmt::print(
      "# memory per GPU, GiB (most loaded stage: {}; budget {:.2f} = usable {:.2f} − reserve {:.2f})\n",
      result.memory.stage, result.memory_budget_gib, result.memory_budget_gib + gpu.memory_reserve_gib,
      gpu.memory_reserve_gib);
  const auto& m = result.memory;
  fmt::print(
      "weights {:.2f}  grads {:.2f}  optimizer {:.2f}  activations {:.2f}  optimizer_step {:.2f}  total "
      "{:.2f}\n",
      m.weights, m.grads, m.optimizer, m.activations, m.optimizer_step, m.total);
  fmt::print("memory_margin_gib       {:.2f}\n", result.memory_budget_gib - m.total);
  fmt::print("fits_in_memory          {}\n", result.fits_in_memory ? "yes" : "no");
  if (!flags.trace.empty()) fmt::print("# trace written to {}\n", flags.trace);
  if (run) print_simulate_run(*run);
}

}  // namespace

void add_simulate_command(CLI::App& app, Context& context) {
  auto* command =
      app.add_subcommand("simulate", "Simulate one training iteration (time, MFU, breakdown, memory)");
  add_common_flags(*command, context);
  auto flags = std::make_shared<SimulateFlags>();
  add_spec_flags(*command, flags->spec);
  add_strategy_flags(*command, flags->strategy);
  command->add_option("--comm-config", flags->comm_config,
                      "Communication config (lagom-config.json from tune)");
  command->add_option("--trace", flags->trace, "Write a Chrome/Perfetto trace to FILE");
  command->add_option_function<std::string>(
      "--issue-priority", [flags](const std::string& v) { flags->issue_priority = v; },
      "Concurrent collectives on one link: as-scheduled (share it) | critical-first [as-scheduled; overrides "
      "--comm-config]");
  add_simulate_run_flags(*command, flags->run);
  command->callback([flags, &context] { run_simulate(*flags, context); });
}

}  // namespace lagom::cli
