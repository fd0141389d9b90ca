// `lagom explore`: every valid strategy for N GPUs, simulated in parallel, the best K that fit in memory.
#include <algorithm>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/explore_options.h"
#include "cli/interval_text.h"
#include "cli/output.h"
#include "documents/explore.h"
#include "documents/model.h"
#include "documents/nccl.h"
#include "inputs/scenario.h"
#include "search/explore.h"

namespace lagom::cli {

using inputs::add_spec_flags;
using inputs::add_strategy_flags;
using inputs::check_required_flags;
using inputs::ClusterSource;
using inputs::load_cluster;
using inputs::load_workload;
using inputs::SpecFlags;
using inputs::StrategyFlags;

namespace {

struct ExploreFlags {
  SpecFlags spec;
  StrategyFlags strategy;
  int top = 10;
  int threads = 0;
  std::string framework = "any";
};

void run_explore(const ExploreFlags& flags, const Context& context) {
  check(check_required_flags(flags.spec, flags.strategy));
  const model::WorkloadSpec workload = unwrap(load_workload(flags.spec, &context.progress()));
  // The base strategy carries gpus, global batch and the fixed knobs; the searched dimensions are pins.
  search::ExploreOptions options = unwrap(
      explore_options(flags.strategy, workload, unwrap(search::parse_framework_flag(flags.framework))));
  const model::Strategy& base = options.base;
  const ClusterSource source = unwrap(load_cluster(flags.spec, base.gpus, &context.progress()));
  const model::ClusterSpec& cluster = source.cluster;
  options.top = flags.top;
  options.threads = flags.threads;
  const search::FrameworkProfile& profile = search::framework_profile(options.framework);
  const model::CostModel cost_model(cluster, source.calibration, options.base.stack);
  const search::ExploreResult result =
      unwrap(search::explore(workload, cluster, cost_model, options, context.progress()));
  if (result.evaluated == 0) {
    fail(ErrorCode::invalid_input,
         fmt::format("explore: no valid strategy for {} GPUs with the pinned flags", options.base.gpus));
  }
  if (context.json) {
    print_json(documents::explore_json(result, options.base, cluster, workload, options.framework));
    return;
  }
  fmt::print("# lagom explore: {} on {} GPUs of {}, global batch {}\n", workload.name, base.gpus,
             cluster.name, options.base.global_batch);
  fmt::print("{}\n", documents::model_shape_text(workload));
  fmt::print("{}\n", documents::nccl_text(cluster));
  fmt::print("# evaluated {} strategies ({} simulated, {} pruned of which {} out of memory) in {:.3f} s\n",
             result.evaluated, result.simulated, result.pruned, result.out_of_memory, result.elapsed_s);
  fmt::print("# memory budget per GPU {:.2f} GiB (usable {:.2f} − reserve {:.2f})\n",
             cluster.gpu.memory_budget_gib(),
             cluster.gpu.memory_budget_gib() + cluster.gpu.memory_reserve_gib,
             cluster.gpu.memory_reserve_gib);
  TextTable table({{"rank"},
                   {"tp"},
                   {"pp"},
                   {"dp"},
                   {"cp"},
                   {"cp_comm", true},
                   {"ep"},
                   {"sp"},
                   {"vpp"},
                   {"mb"},
                   {"recompute", true},
                   {"zero"},
                   {"tp_overlap", true},
                   {"iteration_s"},
                   {"90%_s", true},
                   {"tokens/s"},
                   {"mfu_%"},
                   {"mem_gib"}});
  int rank = 1;
  std::vector<std::string> notes;  // the intervals' sources, each once
  for (const auto& e : result.results) {
    const auto& s = e.strategy;
    const model::PredictionInterval interval =
        model::interval_for(model::regime_of(cluster, s, workload), s.gpus);
    if (std::find(notes.begin(), notes.end(), interval_note(interval)) == notes.end()) {
      notes.push_back(interval_note(interval));
    }
    table.add_row(
        {std::to_string(rank++), std::to_string(s.tp), std::to_string(s.pp), std::to_string(s.dp),
         std::to_string(s.cp), s.cp > 1 ? std::string(model::to_string(s.cp_comm)) : "-",
         std::to_string(s.ep), s.sp ? "on" : "off", std::to_string(s.vpp), std::to_string(s.micro_batch),
         model::recompute_text(s),
         // zero/N: ZeRO within shard groups of N DP ranks (hybrid sharding)
         std::to_string(s.zero) + (s.hybrid_shard() ? fmt::format("/{}", s.dp_shard) : std::string()),
         model::to_string(s.tp_overlap), fmt::format("{:.4f}", e.result.iteration_time_s),
         interval_range(interval, e.result.iteration_time_s, 4), fmt::format("{:.0f}", e.result.tokens_per_s),
         fmt::format("{:.1f}", 100 * e.result.mfu), fmt::format("{:.1f}", e.result.memory.total)});
  }
  fmt::print("{}", table.render());
  for (const std::string& note : notes) fmt::print("{}", note);
  if (result.results.empty()) fmt::print("# no strategy fits in memory\n");
  if (options.framework != search::Framework::any) {
    fmt::print("# framework {} ({}): only what it runs\n", profile.name, profile.version);
  } else if (std::any_of(result.results.begin(), result.results.end(), [](const search::ExploreEntry& e) {
               const auto kind = e.strategy.tp_overlap.kind;
               return kind == model::OverlapMethodKind::slice || kind == model::OverlapMethodKind::flash;
             })) {
    fmt::print(
        "# tp_overlap slice:K and flash run only with Lagom's kernels; --framework megatron-lm|torch-fsdp|"
        "deepspeed keeps to what that framework runs\n");
  }
}

}  // namespace

void add_explore_command(CLI::App& app, Context& context) {
  auto* command = app.add_subcommand("explore", "Search every valid strategy for N GPUs (capacity planning)");
  add_common_flags(*command, context);
  auto flags = std::make_shared<ExploreFlags>();
  add_spec_flags(*command, flags->spec);
  add_strategy_flags(*command, flags->strategy);
  command->add_option_function<int>(
      "--top", [flags](const int& v) { flags->top = bounded("--top", v, 1, 1000000); },
      "Strategies to report [10]");
  // More workers than candidates or cores only costs memory; a refused thread falls back to fewer.
  command->add_option_function<int>(
      "--threads", [flags](const int& v) { flags->threads = bounded("--threads", v, 1, 4096); },
      "Worker threads [all cores]");
  command->add_option("--framework", flags->framework,
                      "Only strategies this framework runs: megatron-lm|torch-fsdp|deepspeed|any [any]");
  command->callback([flags, &context] { run_explore(*flags, context); });
}

}  // namespace lagom::cli
