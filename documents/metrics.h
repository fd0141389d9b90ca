// The metrics of a document: the numbers `lagom check` compares, each with the direction that is better. A
// property of each document kind, next to its writer: a field added to a writer that check should compare
// is added here, in the same module.
//   simulate      iteration_time_s, tokens_per_s, mfu, model_tflops_per_gpu, breakdown_s.<part>,
//                 memory_gib_per_gpu.<part>, fits_in_memory (1 or 0)
//   tune          predicted_iteration_time_s, speedup, predicted_time_us per op class (lagom-config.json too)
//   profile       busbw_GBps per collective sample, tflops per GEMM sample (averaged per identity)
// Other kinds have none.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "documents/kind.h"

namespace lagom::documents {

enum class Better { lower, higher };

// One comparable number: `field` is the JSON field name users give per-metric tolerances by
// (e.g. "busbw_GBps"); `name` identifies this instance (e.g. "busbw_GBps allreduce 8r 64M").
struct Metric {
  std::string name;
  std::string field;
  Better better = Better::lower;
  double value = 0;
};

// The field names a tolerance may name for documents of `kind`; empty when the kind has no metrics.
std::vector<std::string> metric_fields(Kind kind);
// What a document says it describes, for `lagom check` to warn when the baseline and the current describe
// different runs: (what, value) in a fixed order: the model, the cluster's name, the backend of a profile
// export's run, a `profile --json`'s own backend, an export run's host. The value is "" where the document
// does not say; an export and a `profile --json` name the backend in different places, and each is compared
// with its own.
std::vector<std::pair<std::string, std::string>> described_run(const nlohmann::json& document);

// The metrics of a document of `kind`. invalid_input when one is negative (no result Lagom writes is) or
// none is found.
Result<std::vector<Metric>> extract_metrics(const nlohmann::json& document, Kind kind);

}  // namespace lagom::documents
