// The profile documents (kind "profile"): the one JSON writer for profile data (runs, samples, fits), shared
// by `lagom profile --json` and the `lagom db` subcommands. Field names carry units (docs/cli.md#units).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "db/database.h"

namespace lagom::documents {

// A run's `options` (what the profile or import was asked for: db::Run::options_json), an object.
inline constexpr const char* k_run_options_field = "options";

nlohmann::json to_json(const db::Run& run);
nlohmann::json to_json(const db::CommSample& sample);
nlohmann::json to_json(const db::ComputeSample& sample);
nlohmann::json to_json(const db::OverlapSample& sample);
// {"collectives": [...], "gemms": [...], "scalars": {name: {value, rel_error}}}
nlohmann::json to_json(const db::FitSet& fits);

// `lagom profile --json` (kind "profile"): the run just measured (status "complete"), its samples and fits.
struct ProfileDocument {
  std::int64_t run_id = 0;
  std::string backend, suite;
  int ranks = 1, nodes = 1;
  std::string db;  // the database it was stored in
  std::vector<std::string> warnings;
  std::vector<db::CommSample> comm;
  std::vector<db::ComputeSample> compute;
  std::vector<db::OverlapSample> overlap;
  db::FitSet fits;
};
// Stamped with its kind and version.
nlohmann::json to_json(const ProfileDocument& document);

// A run's whole export, as `lagom db export RUN --format json` prints it and `lagom check` reads it:
// {"kind": "profile", "version", "run", "fits", "comm": [...], "compute": [...], "overlap": [...]}. Opens the
// database read-only.
Result<nlohmann::json> export_run_document(const std::string& db_path, std::int64_t run_id);

// CSV of a run's collective and compute samples: one header, one row per sample, `kind` first
// ("comm", "gemm", "memory"); fields that do not apply to a kind are empty.
std::string samples_csv(const std::vector<db::CommSample>& comm,
                        const std::vector<db::ComputeSample>& compute);

}  // namespace lagom::documents
