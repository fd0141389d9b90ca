#include "inputs/scenario.h"

#include <cmath>
#include <limits>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "core/failure.h"
#include "core/files.h"
#include "core/json_fields.h"
#include "core/units.h"
#include "inputs/flag_context.h"
#include "model/hf_config.h"
#include "model/presets.h"
#include "model/strategy_knobs.h"

namespace lagom::inputs {

namespace {
constexpr int k_int_max = std::numeric_limits<int>::max();
}  // namespace

void add_spec_flags(CLI::App& command, SpecFlags& flags) {
  command.add_option("--model", flags.model,
                     "Model: a preset name, a lagom workload JSON or a HuggingFace config.json");
  // A shape is a count of at least 1: 0 is the field's "not given", so a 0 on the command line would be
  // silently the model's value; bounded at the flag as every count is (core/failure.h).
  const auto shape = [&command](const std::string& flag, auto& field, const std::string& help) {
    using T = std::remove_reference_t<decltype(field)>;
    command.add_option_function<long>(
        flag,
        [&field, flag](const long& v) { field = static_cast<T>(bounded(flag, v, 1L, long{k_int_max})); },
        help);
  };
  shape("--layers", flags.layers, "Layers (with --hidden --heads --vocab --seq instead of --model)");
  shape("--hidden", flags.hidden, "Hidden size");
  shape("--heads", flags.heads, "Attention heads");
  shape("--kv-heads", flags.kv_heads, "Key/value heads [= heads]");
  shape("--ffn-hidden", flags.ffn_hidden, "FFN width [= 4·hidden]");
  shape("--vocab", flags.vocab, "Vocabulary size");
  shape("--seq", flags.seq, "Sequence length");
  command.add_option("--cluster", flags.cluster, "Cluster: a preset name or a cluster JSON file");
  command.add_option("--db", flags.db,
                     "Profile database: its fits replace the model's defaults (localhost: ./lagom.db)");
  command.add_option("--run", flags.run, "Profile run id in --db [latest complete run]");
  command.add_option_function<double>(
      "--memory-reserve-gib",
      [&flags](const double& v) { flags.memory_reserve_gib = bounded("--memory-reserve-gib", v, 0.0, 1e6); },
      "GPU memory kept from the model's tensors (CUDA context, NCCL buffers, fragmentation), GiB "
      "[the cluster's]");
  command.add_option(
      "--nccl-version", flags.nccl_version,
      "NCCL version whose defaults to emulate, X.Y[.Z] [the cluster's nccl_version, else 2.28.9]");
}

namespace {

// A switch's value: the one vocabulary of booleans (units::parse_boolean: on/off, true/false, yes/no, 1/0).
Result<bool> on_off(std::string_view value) {
  if (const auto b = units::parse_boolean(value)) return *b;
  return make_error(ErrorCode::invalid_input, fmt::format("'{}' is not {}", value, units::k_boolean_words));
}

// add_strategy_flags: one CLI11 option per knob of model/strategy_knobs.h, parsing and bounding its value at
// the flag into its field of flags.values (the callbacks hold pointers into `flags`, which outlives the
// parse) and recording its key in flags.given.
struct FlagAdder {
  CLI::App& command;
  StrategyFlags& flags;

  // An option taking a T, stored through `set(value)`; the knob's key recorded as given.
  template <typename T, typename Set>
  void option(const model::KnobName& name, std::string help, Set set) {
    command.add_option_function<T>(
        std::string(name.flag),
        [given = &flags.given, key = std::string(name.key), set](const T& value) {
          set(value);
          given->insert(key);
        },
        std::move(help));
  }
  template <typename T>
  void operator()(const model::CountKnob<T>& knob, T& field) {
    option<T>(knob.name, std::string(knob.name.help),
              [target = &field, flag = std::string(knob.name.flag), lo = knob.flag_min,
               hi = knob.flag_max](const T& value) { *target = bounded(flag, value, lo, hi); });
  }
  void on_off_option(const model::KnobName& name, bool& field) {
    option<std::string>(name, std::string(name.help),
                        [target = &field, flag = std::string(name.flag)](const std::string& value) {
                          *target = flag_value(flag, on_off(value));
                        });
  }
  void operator()(const model::SwitchKnob& knob, bool& field) {
    on_off_option({knob.name.key, knob.name.flag, fmt::format("on|off: {}", knob.name.help)}, field);
  }
  void operator()(const model::BooleanKnob& knob, bool& field) { on_off_option(knob.name, field); }
  void operator()(const model::ToggleKnob& knob, bool& field) {
    if (knob.name.flag.empty())
      return;  // set by another knob's flag (bucket_mb_per_chunk: --bucket-mb chunk)
    command.add_flag_callback(
        std::string(knob.name.flag),
        [target = &field, given = &flags.given, key = std::string(knob.name.key)] {
          *target = true;
          given->insert(key);
        },
        std::string(knob.name.help));
  }
  template <typename E, std::size_t N>
  void operator()(const model::ChoiceKnob<E, N>& knob, E& field) {
    option<std::string>(
        knob.name, fmt::format("{}: {}", knob.table.choices(), knob.name.help),
        [target = &field, flag = std::string(knob.name.flag), table = &knob.table](const std::string& value) {
          *target = flag_value(flag, table->parse_or_error(value));
        });
  }
  void operator()(const model::NumberKnob& knob, double& field) {
    option<double>(knob.name, std::string(knob.name.help), [target = &field, knob](const double& value) {
      const bool positive = knob.flag_positive || !knob.zero_allowed;
      if (!std::isfinite(value) || value < 0 || (positive && value == 0) || value > knob.max) {
        fail(ErrorCode::invalid_input, fmt::format("{}: {} is not a {} number (at most {:g})", knob.name.flag,
                                                   value, positive ? "positive" : "non-negative", knob.max));
      }
      *target = value;
    });
  }
  void operator()(const model::MethodKnob& knob, model::OverlapMethod& field) {
    option<std::string>(knob.name, std::string(knob.name.help),
                        [target = &field, flag = std::string(knob.name.flag)](const std::string& value) {
                          *target = flag_value(flag, model::parse_overlap_method(value));
                        });
  }
  void operator()(const model::DtypeKnob& knob, std::optional<model::Precision>& field) {
    option<std::string>(knob.name, std::string(knob.name.help),
                        [target = &field, flag = std::string(knob.name.flag)](const std::string& value) {
                          const auto dtype = model::k_precision_names.parse(value);
                          if (!dtype || *dtype == model::Precision::fp8 || *dtype == model::Precision::tf32) {
                            fail(ErrorCode::invalid_input,
                                 fmt::format("{}: '{}' is not bf16, fp16 or fp32", flag, value));
                          }
                          *target = *dtype;
                        });
  }
  // A number of MB, or `chunk`: one bucket per model chunk (bucket_mb_per_chunk given instead).
  void operator()(const model::BucketKnob& knob, double& field) {
    command.add_option_function<std::string>(
        std::string(knob.name.flag),
        [target = &field, f = &flags, flag = std::string(knob.name.flag)](const std::string& value) {
          const bool chunk = value == "chunk";
          std::size_t used = 0;
          double mb = model::Strategy{}.bucket_mb;
          if (!chunk) {
            try {
              mb = std::stod(value, &used);
            } catch (const std::exception&) {
              used = 0;
            }
            if (used != value.size() || !std::isfinite(mb) || !(mb > 0) || mb > 1e6) {
              fail(ErrorCode::invalid_input,
                   fmt::format("{}: '{}' is not a positive number of MB or chunk", flag, value));
            }
          }
          *target = mb;
          f->values.bucket_per_chunk = chunk;
          f->given.erase(chunk ? "bucket_mb" : "bucket_mb_per_chunk");
          f->given.insert(chunk ? "bucket_mb_per_chunk" : "bucket_mb");
        },
        std::string(knob.name.help));
  }
};

}  // namespace

void add_strategy_flags(CLI::App& command, StrategyFlags& flags) {
  model::for_each_knob(flags.values, FlagAdder{command, flags});
}

Result<simulator::IssuePriority> parse_issue_priority_flag(const std::string& value) {
  auto priority = simulator::k_issue_priority_names.parse_or_error(value);
  if (!priority.ok()) return priority.error().with_context("issue-priority");
  return priority;
}

Result<model::WorkloadSpec> load_workload(const SpecFlags& flags, Progress* warnings) {
  auto warn = [&](const std::string& message) {
    if (warnings != nullptr) warnings->warn(message);
  };
  if (!flags.model.empty()) {
    model::WorkloadSpec loaded;
    std::optional<model::HfReading> hf;
    if (!names_a_spec_file(flags.model, flags.presets_unless_path)) {
      LAGOM_TRY(loaded, model::workload_preset(flags.model));
    } else {
      LAGOM_TRY(const nlohmann::json document, read_json_file(flags.model));
      if (model::is_hf_config(document)) {
        LAGOM_TRY(hf, model::read_hf_config(document, flags.model));
        loaded = hf->workload;
        if (loaded.seq == 0 && flags.seq == 0) return model::missing_hf_seq(*hf, flags.model);
        for (const std::string& message : model::hf_warnings(*hf, flags.model)) warn(message);
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

Result<ClusterSource> load_cluster(const SpecFlags& flags, int gpus, Progress* warnings) {
  LAGOM_TRY(ClusterSource source,
            resolve_cluster_source(flags.cluster, flags.db, flags.run, gpus, flags.nccl_version, warnings,
                                   flags.presets_unless_path));
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

Status check_required_flags(const SpecFlags& spec, const StrategyFlags& strategy) {
  std::vector<std::string> missing;
  if (spec.model.empty() && !spec.layers && !spec.hidden && !spec.heads)
    missing.emplace_back("--model PRESET|FILE (or --layers --hidden --heads --vocab --seq)");
  if (spec.cluster.empty()) missing.emplace_back("--cluster PRESET|FILE|localhost");
  if (!strategy.has("gpus")) missing.emplace_back("--gpus N");
  if (missing.empty()) return {};
  std::string list;
  for (const auto& flag : missing) list += (list.empty() ? "" : ", ") + flag;
  return make_error(ErrorCode::invalid_input, fmt::format("required: {}", list));
}

Result<model::Strategy> strategy_from_flags(const StrategyFlags& f) {
  if (!f.has("gpus")) return make_error(ErrorCode::invalid_input, "gpus: required (--gpus N)");
  const model::Strategy& s = f.values;
  // vpp > 1 runs the interleaved schedule: another schedule named with it is a contradiction, not a request
  // to quietly ignore.
  if (f.has("schedule") && s.vpp > 1 && s.schedule != model::Schedule::interleaved) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("schedule {} with vpp={}: vpp > 1 runs the interleaved schedule (give "
                                  "--schedule interleaved or leave it out)",
                                  to_string(s.schedule), s.vpp));
  }
  return s;
}

Result<std::unique_ptr<simulator::Scenario>> load_scenario(const SpecFlags& spec,
                                                           const StrategyFlags& strategy,
                                                           Progress* warnings) {
  LAGOM_TRY_STATUS(check_required_flags(spec, strategy));
  LAGOM_TRY(model::WorkloadSpec workload, load_workload(spec, warnings));
  LAGOM_TRY(const model::Strategy requested, strategy_from_flags(strategy));
  LAGOM_TRY(ClusterSource source, load_cluster(spec, requested.gpus, warnings));
  LAGOM_TRY(auto scenario, simulator::Scenario::make(std::move(workload), std::move(source.cluster),
                                                     requested, std::move(source.calibration)));
  LAGOM_TRY_STATUS(check_flag_contexts(strategy, scenario->workload, scenario->strategy));
  return scenario;
}

}  // namespace lagom::inputs
