#include "cli/scenario.h"

#include <cmath>
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
  command.add_option_function<double>(
      "--memory-reserve-gib", [&flags](const double& v) { flags.memory_reserve_gib = v; },
      "GPU memory kept from the model's tensors (CUDA context, NCCL buffers, fragmentation), GiB "
      "[the cluster's]");
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
  int_flag("--cp", flags.cp, "Context parallelism (communication: --cp-comm-type) [1]");
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
      "none|slice:K (K 2..4096)|flash|te (Transformer Engine userbuffers) [none]");
  text_flag("--dp-overlap", flags.dp_overlap, "on|off [on]");
  command.add_option_function<std::string>(
      "--bucket-mb",
      [&flags](const std::string& v) {
        if (v == "chunk") {
          flags.bucket_per_chunk = true;
          flags.bucket_mb.reset();
          return;
        }
        std::size_t used = 0;
        double mb = 0;
        try {
          mb = std::stod(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != v.size())
          throw CLI::ValidationError("--bucket-mb", "'" + v + "' is not a number or chunk");
        flags.bucket_mb = mb;
        flags.bucket_per_chunk = false;
      },
      "DP gradient bucket, MB, or chunk (one bucket per model chunk) [25]");
  text_flag("--precision", flags.precision, "bf16|fp16|fp8|tf32|fp32 [bf16]");
  text_flag("--attention", flags.attention, "flash|flash2|flash1|standard [flash]");
  text_flag("--cp-comm-type", flags.cp_comm_type,
            "CP attention: a2a (Ulysses)|p2p (K/V ring)|allgather (K/V all-gather) [a2a]");
  text_flag("--moe-dispatcher", flags.moe_dispatcher, "MoE token dispatcher: alltoall|allgather [alltoall]");
  command.add_option_function<double>(
      "--moe-capacity-factor", [&flags](const double& v) { flags.moe_capacity_factor = v; },
      "MoE expert capacity factor (rows beyond capacity are dropped) [none: dropless]");
  text_flag("--moe-pad-to-capacity", flags.moe_pad_to_capacity,
            "on|off: pad every expert's input to its capacity [off]");
  text_flag("--moe-grouped-gemm", flags.moe_grouped_gemm,
            "on|off: one grouped GEMM for the local experts (off: one GEMM per expert in sequence) [on]");
  int_flag("--expert-tp", flags.expert_tp, "Expert tensor parallelism [= tp]");
  int_flag("--first-stage-layers", flags.first_stage_layers,
           "Layers on the first pipeline rank (the others share the rest) [even split]");
  int_flag("--last-stage-layers", flags.last_stage_layers,
           "Layers on the last pipeline rank (the others share the rest) [even split]");
  command.add_flag("--embedding-in-pipeline-split", flags.embedding_in_split,
                   "The embedding counts as one layer in the pipeline split");
  command.add_flag("--loss-in-pipeline-split", flags.loss_in_split,
                   "The output layer and loss count as one layer in the pipeline split");
  text_flag("--cross-entropy-fusion", flags.cross_entropy_fusion,
            "on|off: the vocabulary-parallel loss in Megatron's fused kernels [off]");
  text_flag(
      "--tp-overlap-fp8-rs", flags.tp_overlap_fp8_rs,
      "on|off: with --tp-overlap te and FP8, the pipelined reduce-scatters move FP8 (TE fp8_buf) [off]");
  text_flag("--p2p-overlap", flags.p2p_overlap,
            "on|off: interleaved schedule's sends/receives overlapped with compute [off]");
  text_flag("--param-gather-overlap", flags.param_gather_overlap,
            "on|off: ZeRO 1/2 parameter all-gathers overlapped with the next forward [off]");
  text_flag("--param-gather-with-optimizer", flags.param_gather_with_optimizer,
            "on|off: with --param-gather-overlap, chunk 0's all-gather starts in the optimizer step [off]");
  text_flag("--grad-reduce-dtype", flags.grad_reduce_dtype,
            "bf16|fp16|fp32: gradient buffer and reduction dtype [the parameters']");
  int_flag("--vocab-divisible-by", flags.vocab_divisible_by,
           "Pad the vocabulary to a multiple of N·tp [no padding]");
  int_flag("--defer-embedding-wgrad", flags.defer_embedding_wgrad,
           "Output-layer wgrad of the first N micro-batches computed in the pipeline flush (pp > 1) [0: off]",
           0, 1 << 20);
  text_flag("--fp8-params", flags.fp8_params, "FP8 primary weights with --precision fp8: true|false [false]");
  text_flag("--fp8-wgrad", flags.fp8_wgrad,
            "Weight-gradient GEMMs in FP8 with --precision fp8: true|false [true]");
  text_flag("--fp8-attention", flags.fp8_attention,
            "Core attention in FP8 with --precision fp8: true|false [false]");
  command.add_option_function<double>(
      "--dropout", [&flags](const double& v) { flags.dropout = v; },
      "Hidden and attention dropout probability [0]");
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
  LAGOM_TRY(ClusterSource source, resolve_cluster_source(flags.cluster, flags.db, flags.run, gpus));
  if (flags.memory_reserve_gib) {
    const double reserve = *flags.memory_reserve_gib;
    model::GpuSpec& gpu = source.cluster.gpu;
    const double usable = gpu.memory_budget_gib() + gpu.memory_reserve_gib;
    if (!std::isfinite(reserve) || reserve < 0 || reserve >= usable) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("memory-reserve-gib: {} must be at least 0 and less than the usable "
                                    "memory of {} ({:.2f} GiB)",
                                    reserve, gpu.name, usable));
    }
    gpu.memory_reserve_gib = reserve;
  }
  return source;
}

namespace {

// A switch given as a value: on|off or true|false (runs files write either); `fallback` when not given.
Result<bool> on_off(const char* flag, const std::optional<std::string>& value, bool fallback) {
  if (!value) return fallback;
  if (*value == "on" || *value == "true") return true;
  if (*value == "off" || *value == "false") return false;
  return make_error(ErrorCode::invalid_input,
                    fmt::format("{}: '{}' is not on/off or true/false", flag, *value));
}

}  // namespace

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
  s.bucket_per_chunk = f.bucket_per_chunk;
  s.first_stage_layers = f.first_stage_layers.value_or(0);
  s.last_stage_layers = f.last_stage_layers.value_or(0);
  if (f.first_stage_layers && *f.first_stage_layers < 1) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("first-stage-layers={} must be a positive integer", *f.first_stage_layers));
  }
  if (f.last_stage_layers && *f.last_stage_layers < 1) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("last-stage-layers={} must be a positive integer", *f.last_stage_layers));
  }
  s.embedding_in_split = f.embedding_in_split;
  s.loss_in_split = f.loss_in_split;
  LAGOM_TRY(s.p2p_overlap, on_off("p2p-overlap", f.p2p_overlap, false));
  LAGOM_TRY(s.cross_entropy_fusion, on_off("cross-entropy-fusion", f.cross_entropy_fusion, false));
  LAGOM_TRY(s.tp_overlap_fp8_rs, on_off("tp-overlap-fp8-rs", f.tp_overlap_fp8_rs, false));
  LAGOM_TRY(s.param_gather_overlap, on_off("param-gather-overlap", f.param_gather_overlap, false));
  LAGOM_TRY(s.param_gather_with_optimizer,
            on_off("param-gather-with-optimizer", f.param_gather_with_optimizer, false));
  if (f.grad_reduce_dtype) {
    const auto v = model::parse_precision(*f.grad_reduce_dtype);
    if (!v ||
        (*v != model::Precision::bf16 && *v != model::Precision::fp16 && *v != model::Precision::fp32)) {
      return make_error(
          ErrorCode::invalid_input,
          fmt::format("grad-reduce-dtype: '{}' is not bf16, fp16 or fp32", *f.grad_reduce_dtype));
    }
    s.grad_reduce_dtype = *v;
  }
  if (f.vocab_divisible_by) {
    if (*f.vocab_divisible_by < 1) {
      return make_error(
          ErrorCode::invalid_input,
          fmt::format("vocab-divisible-by={} must be a positive integer", *f.vocab_divisible_by));
    }
    s.vocab_divisible_by = *f.vocab_divisible_by;
  }
  if (f.defer_embedding_wgrad) s.defer_embedding_wgrad = *f.defer_embedding_wgrad;
  if (f.precision) {
    const auto v = model::parse_precision(*f.precision);
    if (!v)
      return make_error(ErrorCode::invalid_input,
                        fmt::format("precision: '{}' is not bf16, fp16, fp8, tf32 or fp32", *f.precision));
    s.precision = *v;
  }
  LAGOM_TRY(s.fp8_params, on_off("fp8-params", f.fp8_params, false));
  LAGOM_TRY(s.fp8_wgrad, on_off("fp8-wgrad", f.fp8_wgrad, true));
  LAGOM_TRY(s.fp8_attention, on_off("fp8-attention", f.fp8_attention, false));
  if (f.dropout) s.dropout = *f.dropout;
  if (f.attention) {
    const auto v = model::parse_attention(*f.attention);
    if (!v)
      return make_error(
          ErrorCode::invalid_input,
          fmt::format("attention: '{}' is not flash, flash2, flash1 or standard", *f.attention));
    s.attention = *v;
  }
  if (f.cp_comm_type) {
    const auto v = model::parse_cp_comm_type(*f.cp_comm_type);
    if (!v) {
      return make_error(
          ErrorCode::invalid_input,
          fmt::format("cp-comm-type: '{}' is not a2a, p2p, allgather or a2a+p2p", *f.cp_comm_type));
    }
    s.cp_comm = *v;
  }
  if (f.moe_dispatcher) {
    const auto v = model::parse_moe_dispatcher(*f.moe_dispatcher);
    if (!v) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("moe-dispatcher: '{}' is not alltoall or allgather", *f.moe_dispatcher));
    }
    s.moe_dispatcher = *v;
  }
  if (f.moe_capacity_factor) {
    if (!(*f.moe_capacity_factor > 0) || !std::isfinite(*f.moe_capacity_factor)) {
      return make_error(
          ErrorCode::invalid_input,
          fmt::format("moe-capacity-factor: {} is not a positive number", *f.moe_capacity_factor));
    }
    s.moe_capacity_factor = *f.moe_capacity_factor;
  }
  LAGOM_TRY(s.moe_pad_to_capacity, on_off("moe-pad-to-capacity", f.moe_pad_to_capacity, false));
  LAGOM_TRY(s.moe_grouped_gemm, on_off("moe-grouped-gemm", f.moe_grouped_gemm, true));
  if (f.expert_tp) {
    if (*f.expert_tp < 1) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("expert-tp: {} is not a positive integer", *f.expert_tp));
    }
    s.expert_tp = *f.expert_tp;
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
