// The profile documents (kind "profile"): the one JSON writer for profile data (runs, samples, fits), shared
// by `lagom profile --json` and the `lagom db` subcommands. Field names carry units (docs/cli.md#units).
#pragma once

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "db/database.h"

namespace lagom::documents {

nlohmann::json to_json(const db::Run& run);
nlohmann::json to_json(const db::CommSample& sample);
nlohmann::json to_json(const db::ComputeSample& sample);
nlohmann::json to_json(const db::OverlapSample& sample);
// {"collectives": [...], "gemms": [...], "scalars": {name: {value, rel_error}}}
nlohmann::json to_json(const db::FitSet& fits);

// A run's whole export, as `lagom db export RUN --format json` prints it and `lagom check` reads it:
// {"kind": "profile", "version", "run", "fits", "comm": [...], "compute": [...], "overlap": [...]}. Opens the
// database read-only.
Result<nlohmann::json> export_run_document(const std::string& db_path, std::int64_t run_id);

// CSV of a run's collective and compute samples: one header, one row per sample, `kind` first
// ("comm", "gemm", "memory"); fields that do not apply to a kind are empty.
std::string samples_csv(const std::vector<db::CommSample>& comm,
                        const std::vector<db::ComputeSample>& compute);

}  // namespace lagom::documents
