// The text files of what `lagom tune --out DIR` writes (docs/shim.md defines the formats; the shim parses
// them strictly), and the typed data of the rest: lagom-config.json is the documents module's
// (documents/lagom_config.h: its JSON, and the writing of all the files, atomically):
//   nccl_tuner.conf    NVIDIA's example-plugin CSV: per (tuner collective, nNodes, nRanks), one line per
//                      op class with a size range: contiguous bins split at the midpoints between the
//                      classes' sizes (as NCCL's tuner sees them), the first from 0, the last open-ended;
//   lagom.env          per-process variables (`export NAME=VALUE`, bare words or single-quoted);
//   lagom-config.json  every decision: ops[] (also what `lagom simulate --comm-config` reads), the
//                      communicators' CTAs (shim: min_ctas/max_ctas; simulator: ctas), overlap knobs,
//                      per-process knobs, predicted times and search statistics; under a framework profile
//                      also `framework` (documents/framework.h: torch's keyword arguments among them);
//   megatron.args      (--framework megatron-lm) Megatron-LM's flags, one per line;
//   deepspeed.json     (--framework deepspeed) a DeepSpeed config fragment (documents/framework.h).
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "search/search.h"

namespace lagom::search {

// Everything the files say about where they came from.
struct OutputContext {
  std::string model;        // workload name
  std::string cluster;      // cluster name
  nlohmann::json strategy;  // model::to_json(strategy)
  std::string plugin_path;  // NCCL_TUNER_PLUGIN: the plugin's absolute path, or "lagom"
  std::string out_dir;      // absolute directory the files go to
};

// One op class as the outputs show it: effective knobs (defaults resolved) and its predicted time.
struct OpReport {
  simulator::OpClass op;
  model::CollConfig config;  // resolved: what the calls run with
  std::string scope;         // "per call (tuner)", "per communicator (ctas)", ...
  // The chunk the tuner plugin sets for the class's calls (search/space.h per_call_chunk: NCCL 2.30+'s
  // getChunkSize), as NCCL applies it (clamped to its buffer's ceiling); 0 = the tuner sets none.
  std::int64_t tuner_chunk = 0;
  // NCCL's own choice for the class (defaults resolved) and its time alone under it, from the tune's
  // baseline simulation; absent when the baseline did not issue the class.
  std::optional<model::CollConfig> default_config;
  double default_time_us = 0;
};
std::vector<OpReport> op_reports(const Problem& problem, const TuneResult& result);
std::string tuner_conf_text(const Problem& problem, const TuneResult& result);
// invalid_input when a value cannot be written in the grammar of docs/shim.md (a path with a quote).
Result<std::string> env_text(const Problem& problem, const TuneResult& result, const OutputContext& context);

// The framework knobs of a tune's choice (search/framework.h).
FrameworkKnobs framework_knobs(const TuneResult& result);
// The file a framework reads beside the NCCL files: "megatron.args", "deepspeed.json", or "" (torch-fsdp:
// lagom-config.json's framework.torch; any: none).
std::string framework_file_name(Framework framework);

}  // namespace lagom::search
