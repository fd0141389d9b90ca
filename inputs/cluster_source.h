// Where a command's cluster comes from: a preset, a cluster JSON file, or `localhost` (this machine,
// from its latest complete profile); and the fitted parameters that replace the cost model's defaults
// when --db is given. Shared by cost, simulate, explore and tune so that all four read profiles alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/error.h"
#include "core/progress.h"
#include "model/calibration.h"
#include "model/specs.h"

namespace lagom::inputs {

inline constexpr const char* k_default_db = "lagom.db";

struct ClusterSource {
  model::ClusterSpec cluster;                     // nodes set from the GPU count when one was given
  std::optional<model::Calibration> calibration;  // fits from --db (always set for localhost)
};

// Whether a --model or --cluster value names a file rather than a preset (files::names_a_file: it has
// '/' or ".json", or a file of that name is in the working directory); with `presets_unless_path`, only
// by its '/' or ".json" (a runs file's row, whose paths were made its folder's).
bool names_a_spec_file(const std::string& value, bool presets_unless_path);

// `cluster`: a preset name, a cluster JSON file, or "localhost". `db_path`: the explicit --db ("" = none;
// localhost then reads ./lagom.db). `run`: --run (default: the latest complete run; for localhost, of
// this host). `gpus` > 0 sets the node count (⌈gpus / GPUs per node⌉). Presets never read a database
// unless --db is given. `nccl_version`: --nccl-version (unset: not given), see apply_nccl_version_flag;
// a version outside the releases Lagom emulates is a warning on `warnings`. `presets_unless_path`: a name
// without '/' or ".json" is a preset even when the working directory has a file of that name
// (SpecFlags::presets_unless_path).
Result<ClusterSource> resolve_cluster_source(const std::string& cluster, const std::string& db_path,
                                             std::optional<std::int64_t> run, int gpus,
                                             const std::optional<std::string>& nccl_version,
                                             Progress* warnings = nullptr, bool presets_unless_path = false);

// --nccl-version X.Y[.Z]: replaces the cluster's nccl_version (model/nccl_topology.h nccl_emulation says
// which release that emulates). Refuses a value that is no such version, and any value for a cluster
// without NCCL (it would be silently unused). Unset leaves the cluster as it is.
Status apply_nccl_version_flag(model::ClusterSpec& cluster, const std::optional<std::string>& nccl_version);

}  // namespace lagom::inputs
