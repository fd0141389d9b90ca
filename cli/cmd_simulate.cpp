// `lagom simulate`: one training iteration on the cost model (simulator/), as a human summary or --json,
// with an optional Chrome/Perfetto trace and a tuned communication config.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/output.h"
#include "cli/sim_options.h"
#include "model/presets.h"
#include "simulator/comm_config.h"
#include "simulator/model_costs.h"
#include "simulator/trace.h"

namespace lagom::cli {

namespace {

bool looks_like_file(const std::string& name) {
  return name.find('/') != std::string::npos || name.find(".json") != std::string::npos ||
         std::filesystem::exists(name);
}

Status write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) return make_error(ErrorCode::io, fmt::format("{}: cannot write", path));
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) return make_error(ErrorCode::io, fmt::format("{}: cannot write ({})", path, ec.message()));
  return {};
}

struct SimulateFlags {
  SpecFlags spec;
  StrategyFlags strategy;
  std::string comm_config;
  std::string trace;
  std::optional<std::string> issue_priority;
};

void run_simulate(const SimulateFlags& flags, const Context& context) {
  const model::WorkloadSpec workload = unwrap(load_workload(flags.spec));
  model::Strategy requested = unwrap(strategy_from_flags(flags.strategy));
  const ClusterSource source = unwrap(load_cluster(flags.spec, requested.gpus));
  const model::ClusterSpec& cluster = source.cluster;
  const model::Strategy strategy = unwrap(model::resolve_strategy(requested, workload, cluster));
  const model::CostModel cost_model(cluster, source.calibration);
  const simulator::ModelCosts costs(cost_model, workload, strategy);
  simulator::CommAssignment assignment;
  if (!flags.comm_config.empty()) {
    const nlohmann::json document = unwrap(read_json_file(flags.comm_config));
    assignment = unwrap(simulator::parse_comm_config(document, flags.comm_config));
    check(costs.validate(assignment));
  }
  if (flags.issue_priority) assignment.priority = unwrap(parse_issue_priority_flag(*flags.issue_priority));
  simulator::SimulateOptions options;
  options.timeline = !flags.trace.empty();
  const simulator::SimulationResult result =
      unwrap(simulator::simulate(workload, cluster, strategy, costs, assignment, options));
  if (!flags.trace.empty()) check(write_file_atomically(flags.trace, simulator::chrome_trace(result).dump()));
  if (context.json) {
    print_json(simulation_json(result, strategy, cluster, workload));
    return;
  }
  const double t = result.iteration_time_s;
  auto pct = [&](double part) { return t > 0 ? 100.0 * part / t : 0.0; };
  fmt::print("# lagom simulate: {} on {} GPUs of {} ({} nodes × {} {})\n", workload.name, strategy.gpus,
             cluster.name, cluster.nodes, cluster.gpus_per_node, cluster.gpu.name);
  fmt::print(
      "# strategy: tp {} pp {} dp {} cp {} ep {} sp {} vpp {} zero {} micro-batch {} global-batch {} "
      "recompute {} schedule {} tp-overlap {} dp-overlap {} bucket-mb {} precision {} attention {}\n",
      strategy.tp, strategy.pp, strategy.dp, strategy.cp, strategy.ep, strategy.sp ? "on" : "off",
      strategy.vpp, strategy.zero, strategy.micro_batch, strategy.global_batch,
      model::to_string(strategy.recompute), model::to_string(strategy.schedule),
      model::to_string(strategy.tp_overlap), strategy.dp_overlap ? "on" : "off", strategy.bucket_mb,
      model::to_string(strategy.precision), model::to_string(strategy.attention));
  fmt::print("iteration_time_s        {:.6f}\n", t);
  fmt::print("tokens_per_s            {:.1f}\n", result.tokens_per_s);
  fmt::print("model_tflops_per_gpu    {:.1f}\n", result.model_tflops_per_gpu);
  fmt::print("hardware_tflops_per_gpu {:.1f}\n", result.hardware_tflops_per_gpu);
  fmt::print("mfu                     {:.1f} %\n", 100.0 * result.mfu);
  fmt::print("hfu                     {:.1f} %\n", 100.0 * result.hfu);
  fmt::print("# breakdown (mean over {} pipeline stages; adds up to the iteration time)\n",
             result.stages.size());
  const auto& b = result.breakdown;
  fmt::print("compute_s               {:.6f}  {:5.1f} %\n", b.compute_s, pct(b.compute_s));
  fmt::print("exposed_comm_s          {:.6f}  {:5.1f} %\n", b.exposed_comm_s, pct(b.exposed_comm_s));
  fmt::print("pipeline_bubble_s       {:.6f}  {:5.1f} %\n", b.pipeline_bubble_s, pct(b.pipeline_bubble_s));
  fmt::print("optimizer_s             {:.6f}  {:5.1f} %\n", b.optimizer_s, pct(b.optimizer_s));
  fmt::print("# memory per GPU, GiB (most loaded stage; capacity {:.1f})\n", costs.memory_capacity_gib());
  const auto& m = result.memory;
  fmt::print("weights {:.2f}  grads {:.2f}  optimizer {:.2f}  activations {:.2f}  total {:.2f}\n", m.weights,
             m.grads, m.optimizer, m.activations, m.total);
  fmt::print("fits_in_memory          {}\n", result.fits_in_memory ? "yes" : "no");
  if (!flags.trace.empty()) fmt::print("# trace written to {}\n", flags.trace);
}

}  // namespace

void add_spec_flags(CLI::App& command, SpecFlags& flags) {
  command.add_option("--model", flags.model,
                     "Model: a preset name, a lagom workload JSON or a HuggingFace config.json");
  command.add_option("--layers", flags.layers,
                     "Layers (with --hidden --heads --vocab --seq instead of --model)");
  command.add_option("--hidden", flags.hidden, "Hidden size");
  command.add_option("--heads", flags.heads, "Attention heads");
  command.add_option("--kv-heads", flags.kv_heads, "Key/value heads [= heads]");
  command.add_option("--ffn-hidden", flags.ffn_hidden, "FFN width [= 4·hidden]");
  command.add_option("--vocab", flags.vocab, "Vocabulary size");
  command.add_option("--seq", flags.seq, "Sequence length");
  command.add_option("--cluster", flags.cluster, "Cluster: a preset name or a cluster JSON file");
  command.add_option("--db", flags.db,
                     "Profile database: its fits replace the model's defaults (localhost: ./lagom.db)");
  command.add_option("--run", flags.run, "Profile run id in --db [latest complete run]");
}

void add_strategy_flags(CLI::App& command, StrategyFlags& flags) {
  auto int_flag = [&](const char* name, std::optional<int>& target, const char* help) {
    command.add_option_function<int>(
        name, [&target](const int& value) { target = value; }, help);
  };
  auto text_flag = [&](const char* name, std::optional<std::string>& target, const char* help) {
    command.add_option_function<std::string>(
        name, [&target](const std::string& value) { target = value; }, help);
  };
  int_flag("--gpus", flags.gpus, "Total GPUs (nodes = ⌈N / GPUs per node⌉)");
  int_flag("--tp", flags.tp, "Tensor parallelism [1]");
  int_flag("--pp", flags.pp, "Pipeline parallelism [1]");
  int_flag("--dp", flags.dp, "Data parallelism [gpus/(tp·pp·cp)]");
  int_flag("--cp", flags.cp, "Context parallelism (Ulysses) [1]");
  int_flag("--ep", flags.ep, "Expert parallelism [1]");
  int_flag("--vpp", flags.vpp, "Virtual pipeline stages per rank (interleaved when > 1) [1]");
  int_flag("--zero", flags.zero, "ZeRO stage 0-3 (3 = FSDP) [0]");
  command.add_flag("--sp", flags.sp, "Sequence parallelism with TP");
  command.add_option_function<long>(
      "--global-batch", [&flags](const long& v) { flags.global_batch = v; }, "Sequences per iteration");
  command.add_option_function<long>(
      "--micro-batch", [&flags](const long& v) { flags.micro_batch = v; }, "Sequences per micro-batch [1]");
  text_flag("--recompute", flags.recompute, "none|selective|full [none]");
  text_flag("--schedule", flags.schedule, "1f1b|gpipe|interleaved [1f1b]");
  text_flag("--tp-overlap", flags.tp_overlap, "none|slice:K|flash [none]");
  text_flag("--dp-overlap", flags.dp_overlap, "on|off [on]");
  command.add_option_function<double>(
      "--bucket-mb", [&flags](const double& v) { flags.bucket_mb = v; }, "DP gradient bucket, MB [25]");
  text_flag("--precision", flags.precision, "bf16|fp16|fp8|tf32|fp32 [bf16]");
  text_flag("--attention", flags.attention, "flash|standard [flash]");
}

Result<simulator::IssuePriority> parse_issue_priority_flag(const std::string& value) {
  const auto priority = simulator::parse_issue_priority(value);
  if (!priority) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("issue-priority: '{}' is not as-scheduled or critical-first", value));
  }
  return *priority;
}

Result<model::WorkloadSpec> load_workload(const SpecFlags& flags) {
  if (!flags.model.empty()) {
    if (flags.layers || flags.hidden || flags.heads) {
      return make_error(ErrorCode::invalid_input, "model: give --model or --layers/--hidden/..., not both");
    }
    if (!looks_like_file(flags.model)) return model::workload_preset(flags.model);
    LAGOM_TRY(const nlohmann::json document, read_json_file(flags.model));
    return model::parse_workload_any(document, flags.model);
  }
  if (!flags.layers && !flags.hidden && !flags.heads) {
    return make_error(ErrorCode::invalid_input,
                      "model: required (--model PRESET|FILE, or --layers --hidden --heads --vocab --seq)");
  }
  nlohmann::json document = {{"name", "custom"},
                             {"layers", flags.layers},
                             {"hidden", flags.hidden},
                             {"heads", flags.heads},
                             {"vocab", flags.vocab},
                             {"seq", flags.seq},
                             {"kv_heads", flags.kv_heads ? flags.kv_heads : flags.heads},
                             {"ffn_hidden", flags.ffn_hidden ? flags.ffn_hidden : 4 * flags.hidden},
                             {"ffn_type", "gelu"}};
  return model::parse_workload(document, "flags");
}

Result<ClusterSource> load_cluster(const SpecFlags& flags, int gpus) {
  return resolve_cluster_source(flags.cluster, flags.db, flags.run, gpus);
}

Result<model::Strategy> strategy_from_flags(const StrategyFlags& f) {
  model::Strategy s;
  if (!f.gpus) return make_error(ErrorCode::invalid_input, "gpus: required (--gpus N)");
  s.gpus = *f.gpus;
  s.tp = f.tp.value_or(1);
  s.pp = f.pp.value_or(1);
  s.dp = f.dp.value_or(0);
  s.cp = f.cp.value_or(1);
  s.ep = f.ep.value_or(1);
  s.vpp = f.vpp.value_or(1);
  s.zero = f.zero.value_or(0);
  s.sp = f.sp;
  s.global_batch = f.global_batch.value_or(0);
  s.micro_batch = f.micro_batch.value_or(1);
  if (f.recompute) {
    const auto v = model::parse_recompute(*f.recompute);
    if (!v)
      return make_error(ErrorCode::invalid_input,
                        fmt::format("recompute: '{}' is not none, selective or full", *f.recompute));
    s.recompute = *v;
  }
  if (f.schedule) {
    const auto v = model::parse_schedule(*f.schedule);
    if (!v)
      return make_error(ErrorCode::invalid_input,
                        fmt::format("schedule: '{}' is not 1f1b, gpipe or interleaved", *f.schedule));
    s.schedule = *v;
  }
  if (f.tp_overlap) {
    LAGOM_TRY(s.tp_overlap, model::parse_tp_overlap(*f.tp_overlap));
  }
  if (f.dp_overlap) {
    if (*f.dp_overlap != "on" && *f.dp_overlap != "off") {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("dp-overlap: '{}' is not on or off", *f.dp_overlap));
    }
    s.dp_overlap = *f.dp_overlap == "on";
  }
  if (f.bucket_mb) s.bucket_mb = *f.bucket_mb;
  if (f.precision) {
    const auto v = model::parse_precision(*f.precision);
    if (!v)
      return make_error(ErrorCode::invalid_input,
                        fmt::format("precision: '{}' is not bf16, fp16, fp8, tf32 or fp32", *f.precision));
    s.precision = *v;
  }
  if (f.attention) {
    const auto v = model::parse_attention(*f.attention);
    if (!v)
      return make_error(ErrorCode::invalid_input,
                        fmt::format("attention: '{}' is not flash or standard", *f.attention));
    s.attention = *v;
  }
  return s;
}

nlohmann::json simulation_json(const simulator::SimulationResult& r, const model::Strategy& strategy,
                               const model::ClusterSpec& cluster, const model::WorkloadSpec& workload) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& b : r.stages) {
    stages.push_back({{"compute", b.compute_s},
                      {"exposed_comm", b.exposed_comm_s},
                      {"pipeline_bubble", b.pipeline_bubble_s},
                      {"optimizer", b.optimizer_s}});
  }
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& c : r.op_classes) {
    ops.push_back({{"name", simulator::op_class_name(c.key)},
                   {"collective", std::string(model::to_string(c.key.collective))},
                   {"group", std::string(simulator::to_string(c.key.group))},
                   {"bytes", c.key.bytes},
                   {"ranks", c.shape.ranks},
                   {"nodes", c.shape.nodes},
                   {"count", c.count},
                   {"time_us", c.time_us}});
  }
  return {{"model", workload.name},
          {"iteration_time_s", r.iteration_time_s},
          {"tokens_per_s", r.tokens_per_s},
          {"model_tflops_per_gpu", r.model_tflops_per_gpu},
          {"hardware_tflops_per_gpu", r.hardware_tflops_per_gpu},
          {"mfu", r.mfu},
          {"hfu", r.hfu},
          {"breakdown_s",
           {{"compute", r.breakdown.compute_s},
            {"exposed_comm", r.breakdown.exposed_comm_s},
            {"pipeline_bubble", r.breakdown.pipeline_bubble_s},
            {"optimizer", r.breakdown.optimizer_s}}},
          {"stage_breakdown_s", std::move(stages)},
          {"memory_gib_per_gpu",
           {{"weights", r.memory.weights},
            {"grads", r.memory.grads},
            {"optimizer", r.memory.optimizer},
            {"activations", r.memory.activations},
            {"total", r.memory.total}}},
          {"fits_in_memory", r.fits_in_memory},
          {"strategy", model::to_json(strategy)},
          {"cluster",
           {{"name", cluster.name},
            {"nodes", cluster.nodes},
            {"gpus_per_node", cluster.gpus_per_node},
            {"gpu", cluster.gpu.name}}},
          {"op_classes", std::move(ops)},
          {"tasks", r.tasks}};
}

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
  command->callback([flags, &context] { run_simulate(*flags, context); });
}

}  // namespace lagom::cli
