// The one JSON writer for profile data (runs, samples, fits), shared by `lagom profile --json` and the
// `lagom db` subcommands. Field names carry units (DESIGN.md "Units").
#pragma once

#include <nlohmann/json.hpp>

#include "db/database.h"

namespace lagom::profiler {

nlohmann::json to_json(const db::Run& run);
nlohmann::json to_json(const db::CommSample& sample);
nlohmann::json to_json(const db::ComputeSample& sample);
nlohmann::json to_json(const db::OverlapSample& sample);
// {"collectives": [...], "gemms": [...], "scalars": {name: {value, rel_error}}}
nlohmann::json to_json(const db::FitSet& fits);

// CSV of a run's collective and compute samples: one header, one row per sample, `kind` first
// ("comm", "gemm", "memory"); fields that do not apply to a kind are empty.
std::string samples_csv(const std::vector<db::CommSample>& comm, const std::vector<db::ComputeSample>& compute);

}  // namespace lagom::profiler
