// lagom-config.json (kind "lagom-config", docs/shim.md and docs/cli.md#lagom-tune): every decision of a
// tune: ops[] (also what `lagom simulate --comm-config` reads), the communicators' CTAs (shim:
// min_ctas/max_ctas; simulator: ctas), overlap knobs, per-process knobs, predicted times and search
// statistics, the tune's inputs (`tune`, documents/tune_inputs.h, what `lagom adapt` re-tunes with); under a
// framework profile also `framework` (search/framework.h: torch's keyword arguments among them).
//
// write_tune_outputs writes it with the text files of search/outputs.h (nccl_tuner.conf, lagom.env, the
// framework's file) to temporary names in the folder and renames them only when all of them were written,
// so a failure leaves no half-written file (and no new file at all); a framework file this tune does not
// write is removed afterwards, so the folder never mixes two tunes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/specs.h"
#include "search/outputs.h"
#include "search/search.h"

namespace lagom::documents {

// The fields of one ops[] entry, written by ops_json and read by read_ops (and by check, report and adapt
// through them), named once.
namespace op_field {
inline constexpr const char* k_name = "name";  // the op class, e.g. "dp.allreduce.25165824"
inline constexpr const char* k_collective = "collective";
inline constexpr const char* k_group = "group";
inline constexpr const char* k_bytes = "bytes";  // nccl-tests' size of one call
inline constexpr const char* k_ranks = "ranks";
inline constexpr const char* k_nodes = "nodes";
inline constexpr const char* k_count = "count";  // calls per iteration
inline constexpr const char* k_algo = "algo";
inline constexpr const char* k_proto = "proto";
inline constexpr const char* k_channels = "channels";
inline constexpr const char* k_threads = "threads";
inline constexpr const char* k_chunk_bytes = "chunk_bytes";
inline constexpr const char* k_scope = "scope";
inline constexpr const char* k_predicted_time_us = "predicted_time_us";
inline constexpr const char* k_default = "default";  // NCCL's own choice: algo, proto, channels, time_us
inline constexpr const char* k_time_us = "time_us";
}  // namespace op_field
// The field of the document holding them.
inline constexpr const char* k_ops_field = "ops";

// One ops[] entry as read back: the op class, the knobs the tune chose (defaults resolved) and its
// predicted time.
struct OpClassEntry {
  std::string name, collective, group;
  std::int64_t bytes = 0;    // >= 0
  int ranks = 0, nodes = 0;  // >= 1
  std::string algo, proto;
  int channels = 0;              // >= 0
  double predicted_time_us = 0;  // > 0
};
// The ops[] of a lagom-config.json or a tune --json document (any version), each integer range-checked;
// invalid_input "<origin>: ops[2].ranks: ..." (a document without ops[] is "<origin>: ops: required").
Result<std::vector<OpClassEntry>> read_ops(const nlohmann::json& document, const std::string& origin);

// A lagom-config.json that tune wrote names the model, cluster and strategy it was tuned for (`model`,
// `cluster`, `strategy`); its op classes are keyed by their sizes, which another model or strategy does not
// have, so applying it there would silently fall back to NCCL's defaults. invalid_input naming `origin` and
// the field when one differs from the run's (the strategy's structural fields only: tp_overlap and bucket_mb
// are knobs the config itself sets); a hand-written config without these fields passes.
Status check_tuned_for(const nlohmann::json& config, const std::string& origin,
                       const model::WorkloadSpec& workload, const model::ClusterSpec& cluster,
                       const model::Strategy& strategy);

// The `ops[]` array of `tune --json` and lagom-config.json: one object per op class (the fields of
// docs/cli.md#lagom-tune).
nlohmann::json ops_json(const search::Problem& problem, const search::TuneResult& result);

// The document, stamped with its kind and version (without `framework`, which write_tune_outputs adds).
nlohmann::json config_json(const search::Problem& problem, const search::TuneResult& result,
                           const search::OutputContext& context);

// Writes the files into context.out_dir (created if missing). io naming the path on failure.
Status write_tune_outputs(const search::Problem& problem, const search::TuneResult& result,
                          const search::OutputContext& context);

}  // namespace lagom::documents
