// `lagom model PRESET|FILE [--seq N]`: how a model was read — every resolved field, the parameter count,
// the FLOPs per token and, for a HuggingFace config, the keys read, ignored and how they were mapped.
#include <optional>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/output.h"
#include "documents/model.h"
#include "model/hf_config.h"
#include "model/hf_families.h"
#include "model/presets.h"

namespace lagom::cli {

namespace {

struct ModelFlags {
  std::string model;
  long seq = 0;
};

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out.empty() ? "-" : out;
}

void run_model(const ModelFlags& flags, const Context& context) {
  std::optional<model::HfReading> hf;
  model::WorkloadSpec workload;
  std::string format = "preset";
  if (!files::names_a_file(flags.model)) {
    workload = unwrap(model::workload_preset(flags.model));
  } else {
    const nlohmann::json document = unwrap(read_json_file(flags.model));
    if (model::is_hf_config(document)) {
      hf = unwrap(model::read_hf_config(document, flags.model));
      workload = hf->workload;
      format = "huggingface";
    } else {
      workload = unwrap(model::parse_workload(document, flags.model));
      format = "lagom";
    }
  }
  if (flags.seq > 0) workload.seq = flags.seq;
  {
    // Checked as a workload file (a HuggingFace reading is not checked yet), with a stand-in sequence when
    // none is known: the shapes and the limits of docs/simulator.md#limits do not depend on it.
    nlohmann::json document = model::to_json(workload);
    if (workload.seq == 0) document["seq"] = 1;
    const model::WorkloadSpec checked = unwrap(model::parse_workload(document, flags.model));
    if (workload.seq > 0) workload = checked;
  }
  if (context.json) {
    documents::ModelDocument document{workload, flags.model, format, std::nullopt};
    if (hf) {
      document.huggingface = documents::ModelHfFields{
          hf->family,  hf->config_class, hf->context_length, hf->sliding_window, hf->read,
          hf->ignored, hf->unread,       hf->defaulted,      hf->notes};
    }
    print_json(documents::to_json(document));
    return;
  }
  const nlohmann::json shape = documents::model_command_shape_json(workload);
  fmt::print("# lagom model: {} ({}{})\n", flags.model, format,
             hf ? fmt::format(" config, model_type {}", hf->family) : std::string());
  TextTable table({{"field", true}, {"value"}});
  for (const auto& [key, value] : shape.items()) {
    if (value.is_object()) {
      for (const auto& [sub, v] : value.items()) table.add_row({key + "." + sub, v.dump()});
    } else {
      table.add_row({key, value.dump()});
    }
  }
  fmt::print("{}", table.render());
  fmt::print("# parameters {:.4f} B", workload.parameters() / 1e9);
  if (workload.seq > 0) {
    fmt::print(", {:.4g} FLOPs per token (forward and backward) at seq {}\n",
               documents::flops_per_token(workload), workload.seq);
  } else {
    fmt::print("; seq not set: give --seq N (a config's context length is not a training sequence length)\n");
  }
  if (hf) {
    fmt::print("# context length (max_position_embeddings) {}\n", hf->context_length);
    if (hf->sliding_window > 0) {
      fmt::print(
          "# sliding_window {}: priced as full causal attention over seq (an overestimate when seq > "
          "{})\n",
          hf->sliding_window, hf->sliding_window);
    }
    fmt::print("# read: {}\n", joined(hf->read));
    fmt::print("# defaults of {} (transformers {}), keys absent: {}\n", hf->config_class,
               model::hf::k_transformers_version, joined(hf->defaulted));
    fmt::print("# not read by {}: {}\n", hf->config_class, joined(hf->unread));
    fmt::print("# ignored (may change compute or memory): {}\n", joined(hf->ignored));
    for (const auto& note : hf->notes) fmt::print("# note: {}\n", note);
  }
}

}  // namespace

void add_model_command(CLI::App& app, Context& context) {
  auto flags = std::make_shared<ModelFlags>();
  auto* command = app.add_subcommand(
      "model",
      "Show how a model preset or file is read: its fields, parameters, FLOPs per token, ignored keys");
  add_common_flags(*command, context);
  command
      ->add_option("MODEL", flags->model, "A preset name, a Lagom workload JSON or a HuggingFace config.json")
      ->required();
  command->add_option_function<long>(
      "--seq", [flags](const long& v) { flags->seq = bounded("--seq", v, 1L, 2147483647L); },
      "Sequence length (required to price a HF config)");
  command->callback([flags, &context] { run_model(*flags, context); });
}

}  // namespace lagom::cli
