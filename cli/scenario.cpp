#include "cli/scenario.h"

#include <limits>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/output.h"
#include "model/hf_config.h"
#include "model/presets.h"

namespace lagom::cli {

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
  // Counts are bounded at the flag (cli/app.h k_max_gpus), so a typo never reaches the model as an
  // overflow.
  auto int_flag = [&](const char* name, std::optional<int>& target, const char* help, int lo = 1,
                      int hi = k_max_gpus) {
    command.add_option_function<int>(
        name, [&target, name, lo, hi](const int& value) { target = bounded(name, value, lo, hi); }, help);
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
  int_flag("--zero", flags.zero, "ZeRO stage 0-3 (3 = FSDP) [0]", 0, 3);
  command.add_flag("--sp", flags.sp, "Sequence parallelism with TP");
  constexpr long k_max_batch = std::numeric_limits<int>::max();
  command.add_option_function<long>(
      "--global-batch",
      [&flags](const long& v) { flags.global_batch = bounded("--global-batch", v, 1L, k_max_batch); },
      "Sequences per iteration");
  command.add_option_function<long>(
      "--micro-batch",
      [&flags](const long& v) { flags.micro_batch = bounded("--micro-batch", v, 1L, k_max_batch); },
      "Sequences per micro-batch [1]");
  text_flag("--recompute", flags.recompute, "none|selective|full [none]");
  text_flag("--schedule", flags.schedule, "1f1b|gpipe|interleaved [1f1b]");
  command.add_option_function<std::string>(
      "--tp-overlap",
      [&flags](const std::string& v) {
        flags.tp_overlap = flag_value("--tp-overlap", model::parse_overlap_method(v));
      },
      "none|slice:K (K 2..4096)|flash [none]");
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

Result<model::WorkloadSpec> load_workload(const SpecFlags& flags, Progress* warnings) {
  auto warn = [&](const std::string& message) {
    if (warnings != nullptr) warnings->warn(message);
  };
  if (!flags.model.empty()) {
    model::WorkloadSpec loaded;
    std::optional<model::HfReading> hf;
    if (!names_a_file(flags.model)) {
      LAGOM_TRY(loaded, model::workload_preset(flags.model));
    } else {
      LAGOM_TRY(const nlohmann::json document, read_json_file(flags.model));
      if (model::is_hf_config(document)) {
        LAGOM_TRY(hf, model::read_hf_config(document, flags.model));
        loaded = hf->workload;
        if (loaded.seq == 0 && flags.seq == 0) return model::missing_hf_seq(*hf, flags.model);
        if (!hf->ignored.empty()) {
          std::string keys;
          for (const auto& key : hf->ignored) keys += (keys.empty() ? "" : ", ") + key;
          warn(fmt::format("{}: keys not modelled, which may change compute or memory, were ignored: {}",
                           flags.model, keys));
        }
      } else {
        LAGOM_TRY(loaded, model::parse_workload(document, flags.model));
      }
    }
    // Shape flags given with --model override the model's values (a shorter sequence, a proxy depth);
    // the result is checked like any workload file.
    nlohmann::json document = model::to_json(loaded);
    bool overridden = hf.has_value();  // a HuggingFace reading is checked as a workload file below
    auto override_field = [&](const char* flag, const char* field, long value) {
      if (value == 0) return;
      const long before = document.value(field, 0L);
      if (before != 0) {
        warn(fmt::format("--{} {} overrides {}'s {} = {}", flag, value, loaded.name, field, before));
      }
      document[field] = value;
      overridden = true;
    };
    override_field("layers", "layers", flags.layers);
    override_field("hidden", "hidden", flags.hidden);
    override_field("heads", "heads", flags.heads);
    override_field("kv-heads", "kv_heads", flags.kv_heads);
    override_field("ffn-hidden", "ffn_hidden", flags.ffn_hidden);
    override_field("vocab", "vocab", flags.vocab);
    override_field("seq", "seq", flags.seq);
    if (!overridden) return loaded;
    const bool shape_flags = flags.layers || flags.hidden || flags.heads || flags.kv_heads ||
                             flags.ffn_hidden || flags.vocab || flags.seq;
    LAGOM_TRY(
        model::WorkloadSpec workload,
        model::parse_workload(document, shape_flags ? flags.model + " with the shape flags" : flags.model));
    if (hf && hf->sliding_window > 0 && hf->sliding_window < workload.seq) {
      warn(
          fmt::format("{}: sliding_window {} < seq {}: attention is priced over the whole sequence (full "
                      "causal attention), which overestimates its time",
                      flags.model, hf->sliding_window, workload.seq));
    }
    return workload;
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

Status check_required_flags(const SpecFlags& spec, const StrategyFlags& strategy) {
  std::vector<std::string> missing;
  if (spec.model.empty() && !spec.layers && !spec.hidden && !spec.heads)
    missing.emplace_back("--model PRESET|FILE (or --layers --hidden --heads --vocab --seq)");
  if (spec.cluster.empty()) missing.emplace_back("--cluster PRESET|FILE|localhost");
  if (!strategy.gpus) missing.emplace_back("--gpus N");
  if (missing.empty()) return {};
  std::string list;
  for (const auto& flag : missing) list += (list.empty() ? "" : ", ") + flag;
  return make_error(ErrorCode::invalid_input, fmt::format("required: {}", list));
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
    // vpp > 1 runs the interleaved schedule: another schedule named with it is a contradiction, not a
    // request to quietly ignore.
    if (s.vpp > 1 && s.schedule != model::Schedule::interleaved) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("schedule {} with vpp={}: vpp > 1 runs the interleaved schedule (give "
                                    "--schedule interleaved or leave it out)",
                                    *f.schedule, s.vpp));
    }
  }
  if (f.tp_overlap) s.tp_overlap = *f.tp_overlap;
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

Result<std::unique_ptr<simulator::Scenario>> load_scenario(const SpecFlags& spec,
                                                           const StrategyFlags& strategy,
                                                           Progress* warnings) {
  LAGOM_TRY_STATUS(check_required_flags(spec, strategy));
  LAGOM_TRY(model::WorkloadSpec workload, load_workload(spec, warnings));
  LAGOM_TRY(const model::Strategy requested, strategy_from_flags(strategy));
  LAGOM_TRY(ClusterSource source, load_cluster(spec, requested.gpus));
  return simulator::Scenario::make(std::move(workload), std::move(source.cluster), requested,
                                   std::move(source.calibration));
}

}  // namespace lagom::cli
