// `lagom plan`: capacity planning for a whole training run (plan/plan.h, docs/plan.md): per cluster and GPU
// count, explore's best strategy and the run around it (time, goodput, dollars, energy), and the choice.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/interval_text.h"
#include "cli/output.h"
#include "documents/nccl.h"
#include "documents/plan.h"
#include "inputs/cluster_source.h"
#include "inputs/scenario.h"
#include "plan/plan.h"
#include "plan/quantities.h"

namespace lagom::cli {

using inputs::ClusterSource;
using inputs::load_workload;
using inputs::resolve_cluster_source;
using inputs::SpecFlags;

namespace {

struct PlanFlags {
  std::string model;
  long seq = 0;
  std::vector<std::string> clusters;
  std::string db;
  std::string gpus, tokens, deadline, budget, batch_tokens;
  std::optional<long> global_batch;
  std::vector<std::string> prices;  // "X" (every cluster) or "CLUSTER=X"
  std::optional<double> failures_per_gpu_hour, restart_s, checkpoint_GBps_per_node, step_time_cv, pue;
  std::string framework = "any";
  std::string precision = "bf16";
  std::string stack;  // empty: the framework's default stack (megatron-core; pytorch-eager for torch-fsdp)
  int threads = 0;
  std::optional<std::string> nccl_version;  // --nccl-version (every cluster)
};

// The flags' overrides of the clusters' operations fields (model::OperationsSpec), bounded as the file's.
void apply_operations_flags(const PlanFlags& flags, const plan::Prices& prices, const std::string& name,
                            model::OperationsSpec& o) {
  if (const auto price = prices.for_cluster(name)) o.price_per_gpu_hour = *price;
  if (flags.failures_per_gpu_hour) o.failures_per_gpu_hour = *flags.failures_per_gpu_hour;
  if (flags.restart_s) o.restart_s = *flags.restart_s;
  if (flags.checkpoint_GBps_per_node) o.checkpoint_GBps_per_node = *flags.checkpoint_GBps_per_node;
  if (flags.step_time_cv) o.step_time_cv = *flags.step_time_cv;
  if (flags.pue) o.pue = *flags.pue;
}

std::string days(double s) {
  return fmt::format("{:.1f}", s / 86400);
}

// Three significant figures at least, whole numbers from 100 up.
std::string figure(double x) {
  return x >= 100 ? fmt::format("{:.0f}", x) : fmt::format("{:.3g}", x);
}

std::string money(std::optional<double> usd) {
  if (!usd) return "-";
  if (*usd >= 1e6) return fmt::format("{:.2f}M", *usd / 1e6);
  if (*usd >= 1e3) return fmt::format("{:.2f}K", *usd / 1e3);
  return fmt::format("{:.0f}", *usd);
}

std::string strategy_text(const model::Strategy& s) {
  return fmt::format("tp{} pp{} dp{}{}{} mb{}{}", s.tp, s.pp, s.dp,
                     s.cp > 1 ? fmt::format(" cp{}", s.cp) : "",
                     s.vpp > 1 ? fmt::format(" vpp{}", s.vpp) : "", s.micro_batch,
                     s.zero > 0 ? fmt::format(" z{}", s.zero) : "");
}

void print_plan(const plan::PlanResult& result) {
  const plan::PlanOptions& o = result.options;
  fmt::print("# lagom plan: {} ({:.1f} B parameters), {:.3g} tokens, global batch {} × {} tokens\n",
             result.workload_name, result.parameters / 1e9, o.tokens, o.explore.base.global_batch,
             result.seq);
  if (o.deadline_s) fmt::print("# deadline {:.1f} days\n", *o.deadline_s / 86400);
  if (o.budget_usd) fmt::print("# budget ${:.0f}\n", *o.budget_usd);
  TextTable table({{"cluster", true},
                   {"gpus"},
                   {"strategy", true},
                   {"step_s"},
                   {"p50_s"},
                   {"p99_s"},
                   {"goodput_%"},
                   {"ckpt_min"},
                   {"days"},
                   {"days_90%", true},
                   {"gpu_hours"},
                   {"cost_$"},
                   {"gpu_w"},
                   {"mwh"},
                   {"j/token"}});
  for (const plan::PlanRow& r : result.rows) {
    if (!r.feasible() && r.iteration_s <= 0) {
      table.add_row({r.cluster_name, std::to_string(r.gpus), "-", "-", "-", "-", "-", "-", "-", "-", "-", "-",
                     "-", "-", "-"});
      continue;
    }
    const bool run = r.feasible();
    table.add_row(
        {r.cluster_name, std::to_string(r.gpus), strategy_text(r.strategy),
         fmt::format("{:.3f}", r.step.mean_s), fmt::format("{:.3f}", r.step.p50_s),
         fmt::format("{:.3f}", r.step.p99_s), fmt::format("{:.1f}", 100 * r.goodput.useful),
         std::isfinite(r.goodput.interval_s) ? fmt::format("{:.0f}", r.goodput.interval_s / 60) : "-",
         run ? days(r.wall_s) : "-", run ? interval_range(r.interval, r.wall_s, 1, 86400.0) : "-",
         run ? fmt::format("{:.0f}", r.gpu_hours) : "-", money(r.cost_usd),
         r.gpu_power_w ? fmt::format("{:.0f}", *r.gpu_power_w) : "-",
         r.energy ? figure(r.energy->facility_j / 3.6e9) : "-",
         r.joules_per_token ? fmt::format("{:.2f}", *r.joules_per_token) : "-"});
  }
  fmt::print("{}", table.render());
  std::vector<std::string> notes;  // the intervals' sources, each once
  for (const plan::PlanRow& r : result.rows) {
    if (r.iteration_s <= 0) continue;
    const std::string note = interval_note(r.interval);
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
  }
  for (const std::string& note : notes) fmt::print("{}", note);
  std::vector<std::string> named;  // each cluster's NCCL once
  for (const plan::PlanRow& r : result.rows) {
    if (std::find(named.begin(), named.end(), r.cluster_name) != named.end()) continue;
    named.push_back(r.cluster_name);
    fmt::print("# nccl on {}: {}\n", r.cluster_name, documents::nccl_description(r.has_nccl, r.nccl_version));
  }
  for (const plan::PlanRow& r : result.rows) {
    if (!r.feasible()) fmt::print("# {} × {} GPUs: {}\n", r.cluster_name, r.gpus, r.infeasible);
    if (r.feasible() && !r.energy)
      fmt::print("# {} × {} GPUs: no energy (GPU or node power unknown: the cluster file's operations)\n",
                 r.cluster_name, r.gpus);
  }
  const plan::Selection& s = result.selection;
  const char* unit = s.by_dollars ? "cost" : "GPU-hours (no price for every cluster)";
  auto name = [&](std::size_t i) {
    const plan::PlanRow& r = result.rows[i];
    return fmt::format("{} GPUs of {} ({} days, {})", r.gpus, r.cluster_name, days(r.wall_s),
                       s.by_dollars ? "$" + money(r.cost_usd) : fmt::format("{:.0f} GPU-hours", r.gpu_hours));
  };
  if (s.cheapest) fmt::print("# cheapest by {}: {}\n", unit, name(*s.cheapest));
  if (s.fastest) fmt::print("# fastest: {}\n", name(*s.fastest));
  if (s.cheapest_in_deadline)
    fmt::print("# cheapest within the deadline: {}\n", name(*s.cheapest_in_deadline));
  if (s.fastest_in_budget) fmt::print("# fastest within the budget: {}\n", name(*s.fastest_in_budget));
  if (s.chosen && (o.deadline_s || o.budget_usd)) fmt::print("# chosen: {}\n", name(*s.chosen));
  // The selection reads the predicted time; a plan that only meets its deadline when the prediction is
  // not optimistic says so (the interval's upper end is what a planner who must not be late reads).
  if (s.chosen && o.deadline_s) {
    const plan::PlanRow& r = result.rows[*s.chosen];
    if (const auto range = r.interval.of(r.wall_s); range && range->second > *o.deadline_s) {
      fmt::print(
          "# caution: at the 90% interval's upper end the chosen plan takes {} days, past the deadline\n",
          days(range->second));
    }
  }
  std::string front;
  for (const std::size_t i : s.pareto) {
    front +=
        (front.empty() ? "" : ", ") + fmt::format("{}×{}", result.rows[i].cluster_name, result.rows[i].gpus);
  }
  fmt::print("# time–{} front (fastest first): {}\n", s.by_dollars ? "cost" : "GPU-hours", front);
  if (!s.why.empty()) fmt::print("# {}\n", s.why);
  fmt::print("# {} strategies evaluated, {} simulated, in {:.1f} s\n", result.strategies_evaluated,
             result.strategies_simulated, result.elapsed_s);
}

void run_plan(const PlanFlags& flags, const Context& context) {
  if (flags.model.empty()) fail(ErrorCode::invalid_input, "--model: required");
  if (flags.clusters.empty()) fail(ErrorCode::invalid_input, "--cluster: required (one or more)");
  // A cluster named twice would be planned twice as one row set and its second --price lost.
  for (std::size_t i = 0; i < flags.clusters.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (flags.clusters[i] == flags.clusters[j])
        fail(ErrorCode::invalid_input, fmt::format("--cluster {}: given twice", flags.clusters[i]));
    }
  }
  if (flags.gpus.empty())
    fail(ErrorCode::invalid_input, "--gpus: required (a list 1024,2048 or a range 256..16384)");
  if (flags.tokens.empty()) fail(ErrorCode::invalid_input, "--tokens: required (e.g. 15T)");
  if (flags.global_batch && !flags.batch_tokens.empty())
    fail(ErrorCode::invalid_input, "--global-batch and --batch-tokens: give one of them");
  const plan::Prices prices = flag_value("--price", plan::parse_prices(flags.prices, flags.clusters));
  const std::vector<int> counts = flag_value("--gpus", plan::parse_gpu_counts(flags.gpus, k_max_gpus));
  SpecFlags spec;
  spec.model = flags.model;
  spec.seq = flags.seq;
  const model::WorkloadSpec workload = unwrap(load_workload(spec, &context.progress()));
  plan::PlanOptions options;
  options.tokens = flag_value("--tokens", plan::parse_tokens(flags.tokens));
  if (!flags.deadline.empty())
    options.deadline_s = flag_value("--deadline", plan::parse_duration_s(flags.deadline));
  if (!flags.budget.empty()) options.budget_usd = flag_value("--budget", plan::parse_quantity(flags.budget));
  if (options.budget_usd && *options.budget_usd <= 0)
    fail(ErrorCode::invalid_input, "--budget: must be positive");
  model::Strategy& base = options.explore.base;
  base.precision = flag_value("--precision", model::k_precision_names.parse_or_error(flags.precision));
  const search::Framework framework = unwrap(search::parse_framework_flag(flags.framework));
  base.stack = flags.stack.empty() ? search::framework_profile(framework).default_stack
                                   : flag_value("--stack", model::k_stack_names.parse_or_error(flags.stack));
  if (flags.global_batch) {
    base.global_batch = *flags.global_batch;
  } else if (!flags.batch_tokens.empty()) {
    const double tokens = flag_value("--batch-tokens", plan::parse_quantity(flags.batch_tokens));
    base.global_batch = std::lround(tokens / static_cast<double>(workload.seq));
    if (base.global_batch < 1 ||
        std::abs(static_cast<double>(base.global_batch * workload.seq) - tokens) > 0.5)
      fail(ErrorCode::invalid_input,
           fmt::format("--batch-tokens: {:g} is not a whole number of sequences of {} tokens (K, M, T are "
                       "powers of 10: or give --global-batch)",
                       tokens, workload.seq));
  } else if (workload.global_batch) {
    base.global_batch = *workload.global_batch;
  } else {
    fail(ErrorCode::invalid_input,
         "--global-batch or --batch-tokens: required (the model has no global_batch)");
  }
  options.explore.framework = framework;
  options.explore.threads = flags.threads;
  std::vector<plan::PlanPoint> points;
  for (const std::string& name : flags.clusters) {
    for (const int gpus : counts) {
      // A version outside the emulated releases is said once per cluster, not once per GPU count.
      Progress* warnings = gpus == counts.front() ? &context.progress() : nullptr;
      ClusterSource source =
          unwrap(resolve_cluster_source(name, flags.db, std::nullopt, gpus, flags.nccl_version, warnings));
      apply_operations_flags(flags, prices, name, source.cluster.operations);
      points.push_back({name, std::move(source.cluster), std::move(source.calibration), gpus});
    }
  }
  const plan::PlanResult result = unwrap(plan::make_plan(workload, points, options, context.progress()));
  if (context.json) {
    print_json(documents::plan_json(result));
    return;
  }
  print_plan(result);
}

}  // namespace

void add_plan_command(CLI::App& app, Context& context) {
  auto* command = app.add_subcommand(
      "plan", "Plan a whole training run: GPUs, time, goodput, dollars and energy per cluster and GPU count");
  add_common_flags(*command, context);
  auto flags = std::make_shared<PlanFlags>();
  command->add_option("--model", flags->model,
                      "Model: a preset name, a lagom workload JSON or a HuggingFace config.json");
  command->add_option_function<long>(
      "--seq", [flags](const long& v) { flags->seq = bounded("--seq", v, 1L, 1L << 24); },
      "Sequence length [the model's]");
  command->add_option("--cluster", flags->clusters,
                      "Cluster: a preset or a cluster JSON file (repeat to compare)");
  command->add_option("--db", flags->db, "Profile database: its fits replace the model's defaults");
  command->add_option("--nccl-version", flags->nccl_version,
                      "NCCL version whose defaults to emulate on every --cluster, X.Y[.Z] [each cluster's]");
  command->add_option("--gpus", flags->gpus, "GPU counts: a list 1024,2048 or a range 256..16384 (doubling)");
  command->add_option("--tokens", flags->tokens, "Training tokens, e.g. 15T (suffixes K M B T P)");
  command->add_option("--deadline", flags->deadline, "Wall-clock time the run must finish in: 60d, 36h, 2w");
  command->add_option("--budget", flags->budget, "Dollars the run may cost, e.g. 2.5M (needs a price)");
  command->add_option_function<long>(
      "--global-batch",
      [flags](const long& v) { flags->global_batch = bounded("--global-batch", v, 1L, 1L << 30); },
      "Sequences per iteration [the model's]");
  command->add_option("--batch-tokens", flags->batch_tokens, "Tokens per iteration instead, e.g. 16M");
  command->add_option("--price", flags->prices,
                      "Dollars per GPU-hour: X for every cluster or CLUSTER=X [the cluster file's]");
  auto number_flag = [&](const char* name, std::optional<double>& target, double lo, double hi,
                         const char* help) {
    command->add_option_function<double>(
        name, [&target, name, lo, hi](const double& v) { target = bounded(name, v, lo, hi); }, help);
  };
  number_flag("--failure-rate", flags->failures_per_gpu_hour, 0, 1,
              "Interruptions per GPU-hour [the cluster's; Llama 3: 1.97e-5]");
  number_flag("--restart", flags->restart_s, 0, 1e6, "Seconds to restart after one [the cluster's; 600]");
  number_flag("--checkpoint-gbps", flags->checkpoint_GBps_per_node, 1e-6, 1e6,
              "Checkpoint write bandwidth per node, GB/s [the cluster's; 0.977]");
  number_flag("--step-cv", flags->step_time_cv, 0, 1,
              "Per-GPU step-time spread (std/mean) [the cluster's; 0.01]");
  number_flag("--pue", flags->pue, 1, 10, "Power usage effectiveness [the cluster's; 1.10]");
  command->add_option("--framework", flags->framework,
                      "Only strategies this framework runs: megatron-lm|torch-fsdp|deepspeed|any [any]");
  command->add_option("--precision", flags->precision, "bf16|fp16|fp8|tf32|fp32 [bf16]");
  command->add_option(
      "--stack", flags->stack,
      fmt::format("The software stack's host costs and elementwise kernels: {} [megatron-core; pytorch-eager "
                  "under --framework torch-fsdp]",
                  model::k_stack_names.choices()));
  command->add_option_function<int>(
      "--threads", [flags](const int& v) { flags->threads = bounded("--threads", v, 1, 4096); },
      "Worker threads [all cores]");
  command->callback([flags, &context] { run_plan(*flags, context); });
}

}  // namespace lagom::cli
