// Fuzz target: a workload file (`--model FILE`, docs/model.md), either format (Lagom's workload JSON or a
// HuggingFace config.json), read as `lagom model FILE` reads it: parsed, written back and read again, its
// parameters and FLOPs per token counted, and resolved against a strategy that divides it (tp 8 on
// dgx-a100, where SIGFPE and endless loops on odd shapes were found before).
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "documents/model.h"
#include "fuzz_input.h"
#include "model/presets.h"
#include "model/specs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto document = nlohmann::json::parse(lagom::fuzz::text_of(data, size), nullptr, false);
  if (document.is_discarded()) return 0;
  auto workload = lagom::model::parse_workload_any(document, "fuzz.json");
  if (!workload) return 0;
  lagom::model::WorkloadSpec w = workload.value();
  if (w.seq == 0) w.seq = 2048;  // an HF config without `seq` (the command line gives --seq)
  // What `lagom model` does with an accepted file: its JSON must read back as the same workload.
  auto again = lagom::model::parse_workload(lagom::model::to_json(w), "fuzz.json");
  if (!again || !(again.value() == w)) std::abort();
  (void)w.parameters();
  (void)lagom::documents::flops_per_token(w);
  static const auto cluster = lagom::model::cluster_preset("dgx-a100").value();
  for (const int tp : {1, 8}) {
    lagom::model::Strategy strategy;
    strategy.gpus = 8;
    strategy.tp = tp;
    strategy.global_batch = 8;
    auto resolved = lagom::model::resolve_strategy(strategy, w, cluster);
    if (resolved) (void)lagom::model::padded_vocab(w, resolved.value());
  }
  return 0;
}
