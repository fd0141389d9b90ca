// `lagom profile`: runs a backend's suites, writes every measurement to the profile database as it
// goes (rank 0 only) and fits the cost model's parameters at the end.
//
// Backends: cpu (Eigen GEMMs per precision, a streaming memory kernel), mpi (collectives across MPI
// ranks with nccl-tests' semantics; a GEMM beside a nonblocking collective for overlap), nccl (cuBLAS
// GEMMs and NCCL collectives per algorithm/protocol/channels through the dlopen'ed liblagom-nccl.so).
// Suites: compute, comm, overlap, all (= every suite the backend has).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/progress.h"
#include "db/database.h"

namespace lagom::profiler {

struct ProfileOptions {
  std::string backend = "auto";  // "auto" | "cpu" | "mpi" | "nccl"
  std::string suite =
      "all";           // "all" | "compute" | "comm" | "interference" ("overlap": the same, its earlier name)
  bool quick = false;  // a small sweep (seconds, for CI and smoke tests)
  std::int64_t min_bytes = 0;            // smallest collective size, bytes; 0 = the backend's default
  std::int64_t max_bytes = 0;            // largest collective size, bytes; 0 = the backend's default
  double step_factor = 0;                // size multiplier between steps (> 1); 0 = default (2)
  std::vector<std::string> collectives;  // empty = all seven
  // The exact sizes to measure (`--replay`: a tune's op classes), bytes; empty = min_bytes..max_bytes by
  // step_factor. Not with min_bytes, max_bytes or step_factor.
  std::vector<std::int64_t> sizes_bytes;
  std::string db_path = "lagom.db";  // written by rank 0 only
  // mpi backend, comm suite: every rank also writes one production record per timed call to
  // <records_dir>/<host>-<pid>.jsonl (docs/records.md); "" = none.
  std::string records_dir;
};

// Sizes and iteration policy after defaults are applied.
struct Sweep {
  std::vector<std::int64_t> sizes_bytes;
  std::vector<std::string> collectives;
  int warmup_iters = 0;  // untimed calls before timing (nccl-tests -w)
  int min_iters = 0;     // timed calls per size at least ...
  int max_iters = 0;     // ... and at most; between them, as many as fit target_us
  double target_us = 0;  // time budget per size and placement
};

// Validates options and resolves the sweep (invalid_input on bad sizes, factor or collective names).
Result<Sweep> resolve_sweep(const ProfileOptions& options, const std::string& backend);

// Resolves "auto": nccl when the nccl module finds a GPU, mpi under an MPI launcher, else cpu.
std::string resolve_backend(const std::string& requested);

// What a profile measured. Samples are present on rank 0 only (other ranks get is_root = false).
struct ProfileReport {
  bool is_root = true;
  std::int64_t run_id = 0;
  std::string backend;
  std::string suite;
  int ranks = 1;
  int nodes = 1;
  std::vector<db::CommSample> comm;
  std::vector<db::ComputeSample> compute;
  std::vector<db::OverlapSample> overlap;
  db::FitSet fits;
  std::vector<std::string> warnings;
};

// Called on rank 0 after each finished series, so the CLI can print tables as they complete.
using SeriesCallback = std::function<void(const std::vector<db::CommSample>&)>;

// The run's options as the database stores them (db::Run::options_json): the caller's document writer
// (documents::profile_run_options) says them, as the profiler names no document's fields.
using RunOptionsWriter = std::function<std::string(const ProfileOptions&, const Sweep&)>;

// Runs the profile. Errors: invalid_input (options, --db not a Lagom database), unavailable (backend
// missing: no GPU, module not built), failure (a collective failed).
Result<ProfileReport> run_profile(const ProfileOptions& options, Progress& progress,
                                  const RunOptionsWriter& describe, const SeriesCallback& on_series = {});

}  // namespace lagom::profiler
