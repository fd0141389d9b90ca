// The profile documents (kind "profile"): the one JSON writer for profile data (runs, samples, fits), shared
// by `lagom profile --json` and the `lagom db` subcommands. Field names carry units (docs/cli.md#units).
#pragma once

#include <cstdint>
#include <optional>
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

// ---- reading a profile document back (what `lagom report` draws) ----------------------------------------

// The run a profile document is of: an export holds its record (run{id, backend, host, status, ...}),
// `lagom profile --json` run_id, backend and status at the top, and no host.
struct ProfileRun {
  std::int64_t id = 0;
  std::string backend, status;  // status: "complete" or "incomplete"
  std::optional<std::string> host;
};
// A collective sample (comm[]), of the fields that tell its series and its bandwidth.
struct ProfileCommSample {
  std::string collective, algo, proto;  // algo, proto: "" for the library's own choice
  int channels = 0, ranks = 0, nodes = 1;
  std::int64_t bytes = 0;
  double busbw_GBps = 0;
  std::int64_t wrong = 0;  // elements that failed the data check; -1 not checked (production records)
  bool in_place = false;
};
// A compute sample (compute[]) of kind "gemm".
struct ProfileGemmSample {
  std::string precision;
  std::int64_t m = 0, n = 0, k = 0;
  double tflops = 0;
};
// A compute sample of any other kind ("memory"): bytes moved per call and the bandwidth.
struct ProfileMemorySample {
  std::int64_t bytes = 0;
  double bw_GBps = 0;
};
// A profile document (an export or `lagom profile --json`, every version) as read back. The fits are the
// records to_json(FitSet) writes (without the scalars); the samples the fields a reader shows.
struct ProfileView {
  ProfileRun run;
  std::vector<db::CollectiveFitRecord> collective_fits;
  std::vector<db::GemmFitRecord> gemm_fits;
  std::vector<ProfileCommSample> comm;
  std::vector<ProfileGemmSample> gemms;     // compute[] of kind "gemm", in order
  std::vector<ProfileMemorySample> memory;  // compute[] of the other kinds, in order
  [[nodiscard]] std::size_t compute_samples() const { return gemms.size() + memory.size(); }
};
// Every field is checked by the one field reader: invalid_input "<source>: <path>: <why>" (e.g.
// "lagom.db run 3: comm[2].busbw_GBps: must be a finite number"); fields it does not read are left alone.
Result<ProfileView> read_profile(const nlohmann::json& document, const std::string& source);

}  // namespace lagom::documents
