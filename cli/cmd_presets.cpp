// `lagom presets [--json] [--show NAME]`: the cluster and model presets; --show prints one as a spec file.
#include <fmt/format.h>

#include "cli/app.h"
#include "cli/output.h"
#include "documents/presets.h"
#include "model/presets.h"

namespace lagom::cli {

namespace {

constexpr const char* k_localhost_description =
    "this machine, from its latest complete profile (run 'lagom profile')";

struct PresetsOptions {
  std::string show;
};

void run_presets(const PresetsOptions& options, const Context& context) {
  using namespace lagom::model;
  if (!options.show.empty()) {
    nlohmann::json spec;
    bool found = false;
    for (const auto& c : cluster_presets()) {
      if (c.name == options.show) spec = to_json(c), found = true;
    }
    for (const auto& w : workload_presets()) {
      if (w.name == options.show) spec = to_json(w), found = true;
    }
    if (!found && options.show == k_localhost) unwrap(cluster_preset(options.show));
    if (!found)
      fail(ErrorCode::not_found, fmt::format("preset {}: unknown (see 'lagom presets')", options.show));
    if (context.json) {
      print_json(spec);
    } else {
      fmt::print("{}\n", spec.dump(2));
    }
    return;
  }
  if (context.json) {
    documents::PresetsDocument document;
    for (const auto& c : cluster_presets()) {
      document.clusters.push_back({c.name, c.description, c.gpus_per_node, c.gpu.name});
    }
    document.clusters.push_back({k_localhost, k_localhost_description, std::nullopt, std::nullopt});
    for (const auto& w : workload_presets()) {
      document.models.push_back(
          {w.name, w.layers, w.hidden, w.heads, w.kv_heads, w.parameters(), w.moe.has_value()});
    }
    print_json(documents::to_json(document));
    return;
  }
  TextTable clusters({{"cluster", true}, {"description", true}});
  for (const auto& c : cluster_presets()) clusters.add_row({c.name, c.description});
  clusters.add_row({k_localhost, k_localhost_description});
  fmt::print("{}\n", clusters.render());
  TextTable models({{"model", true},
                    {"layers"},
                    {"hidden"},
                    {"heads"},
                    {"kv_heads"},
                    {"ffn"},
                    {"vocab"},
                    {"seq"},
                    {"params_B"},
                    {"moe", true}});
  for (const auto& w : workload_presets()) {
    const std::string moe =
        w.moe
            ? fmt::format("{}x top-{}{}", w.moe->experts, w.moe->top_k,
                          w.moe->shared_experts > 0 ? fmt::format(" +{} shared", w.moe->shared_experts) : "")
            : "-";
    models.add_row({w.name, std::to_string(w.layers), std::to_string(w.hidden), std::to_string(w.heads),
                    std::to_string(w.kv_heads), fmt::format("{} {}", w.ffn_hidden, to_string(w.ffn_type)),
                    std::to_string(w.vocab), std::to_string(w.seq),
                    fmt::format("{:.2f}", w.parameters() / 1e9), moe});
  }
  fmt::print("{}", models.render());
}

}  // namespace

void add_presets_command(CLI::App& app, Context& context) {
  auto options = std::make_shared<PresetsOptions>();
  auto* command =
      app.add_subcommand("presets", "List cluster and model presets; --show NAME prints one as a spec file");
  add_common_flags(*command, context);
  command->add_option("--show", options->show, "Print preset NAME in the spec file format");
  command->callback([options, &context] { run_presets(*options, context); });
}

}  // namespace lagom::cli
