// The Lagom profile database: one SQLite file (default ./lagom.db) holding profile runs with their
// environment, the samples they measured (compute, communication, overlap) and the parameters fitted
// from them. This is the only code in Lagom that talks SQLite.
//
// Contract:
// - Safety of foreign files: open() first opens an existing, non-empty file read-only and verifies that
//   it is a Lagom database (SQLite header, Lagom application_id, migrations table, quick_check ok, schema
//   not newer than this build). Anything else is an invalid_input error and the file is never written.
//   A missing or zero-length file becomes a new database (read_write mode only), and so does an SQLite file
//   with no table and no other application's id (what a second writer sees while the first
//   creates the schema; nothing in it can be lost).
// - Two writers: the schema is created (or migrated) in one BEGIN IMMEDIATE transaction that reads the
//   version inside it, so a second writer waits (busy timeout, 30 s) and then finds the schema whole.
// - Durability: WAL journal, every write method is one transaction. A run is created "incomplete" and
//   only finish_run() marks it "complete"; a process killed mid-run leaves earlier runs intact and its
//   own run listed as incomplete. Fits are never computed from incomplete runs (profiler/ checks status).
// - Schema: versioned by PRAGMA user_version and the lagom_migrations table; the pending migrations run in
//   order, in that one transaction, when a read_write handle opens an older database.
// - Errors name the call and SQLite's reason: "not a database" and "damaged" are invalid_input (exit 2);
//   every other SQLite failure (a full disk, an I/O error, no memory, a lock held too long) is the
//   environment's, failure (exit 1, docs/cli.md#exit-codes).
// - Threading: one Database per thread; the handle is movable, not copyable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "records/record.h"

struct sqlite3;

namespace lagom::db {

// Schema version this build writes (PRAGMA user_version).
inline constexpr int k_schema_version = 2;
// PRAGMA application_id of a Lagom database: ASCII "LGOM".
inline constexpr std::int32_t k_application_id = 0x4C474F4D;

inline constexpr const char* k_status_complete = "complete";
inline constexpr const char* k_status_incomplete = "incomplete";
// Run::backend of a run imported from production records (docs/records.md).
inline constexpr const char* k_backend_production = "production";

// One profile (or import) run and the environment it ran in. Times are ISO 8601 UTC
// ("2025-06-01T12:00:00Z"); finished_at is empty while the run is incomplete.
struct Run {
  std::int64_t id = 0;
  std::string status = k_status_incomplete;  // "complete" | "incomplete"
  std::string backend;        // "cpu", "mpi", "nccl", "import" for imported logs, "production" for records
  std::string suite;          // "compute", "comm", "overlap", "all", or the imported file's name
  std::string host;           // host name of rank 0
  std::string cpu;            // CPU model of rank 0
  std::string gpu;            // GPU model ("" without GPUs)
  std::string driver;         // GPU driver version ("" without GPUs)
  std::string cuda_version;   // CUDA runtime version ("" when unused)
  std::string nccl_version;   // NCCL version ("" when unused)
  std::string mpi_version;    // MPI library version ("" when unused)
  std::string git_sha;        // Lagom's git SHA (lagom/build_info.h)
  std::string lagom_version;  // Lagom's version
  int ranks = 1;              // processes that took part
  int nodes = 1;              // distinct nodes they ran on
  std::string options_json;   // the profile options, as JSON text
  std::string started_at;
  std::string finished_at;
};

// One collective measurement with nccl-tests' meaning (docs/cli.md#units): `bytes` is nccl-tests' size,
// time_us the mean time of one call over the timed iterations, algbw = bytes / time, busbw = algbw ×
// busbw factor, `wrong` the number of wrong elements found by the data check (-1 = not checked).
struct CommSample {
  std::string collective;  // model/collective_factors.h names
  std::string algo;        // "ring", "tree", ... or "" (MPI's or NCCL's own choice / unknown)
  std::string proto;       // "simple", "ll", "ll128" or ""
  int channels = 0;        // channels forced via NCCL_MIN/MAX_NCHANNELS; 0 = library's choice
  int ranks = 0;
  int nodes = 1;
  std::int64_t bytes = 0;
  std::int64_t count = 0;  // elements per call, as nccl-tests prints it
  std::string dtype = "float";
  std::string redop = "sum";  // "sum", or "none" for data movement collectives
  int root = -1;              // root rank for broadcast/reduce, -1 otherwise
  bool in_place = false;
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::int64_t wrong = 0;
};

// A compute measurement: a GEMM (kind "gemm": m, n, k, precision, tflops) or a streaming memory
// kernel (kind "memory": bytes moved per call, bw_GBps).
struct ComputeSample {
  std::string kind;       // "gemm" | "memory"
  std::string precision;  // "fp32", "fp64", "bf16", ...; "" for memory
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t bytes = 0;  // memory: bytes read + written per call
  double time_us = 0;      // mean time of one call
  double tflops = 0;       // gemm: 2·m·n·k / time
  double bw_GBps = 0;      // memory: bytes / time
};

// A GEMM and a collective run together vs alone: slowdown = together / alone (>= ~1).
struct OverlapSample {
  std::string name;  // the overlap case ("gemm+allreduce", ...)
  std::string collective;
  std::int64_t bytes = 0;
  std::string precision;
  std::int64_t m = 0, n = 0, k = 0;
  double gemm_alone_us = 0, comm_alone_us = 0;
  double gemm_overlap_us = 0, comm_overlap_us = 0;
};

// Fitted parameters of one run (see model/calibration.h for their meaning).
struct CollectiveFitRecord {
  std::string collective, algo, proto;
  int ranks = 0, nodes = 1, channels = 0;
  double latency_us = 0, bus_bw_GBps = 0, rel_error = 0;
  int samples = 0;
  std::int64_t min_bytes = 0, max_bytes = 0;
};
struct GemmFitRecord {
  std::string precision;
  double peak_tflops = 0, half_flops = 0, rel_error = 0;
  int samples = 0;
};
// Named scalar fits: "memory_bw_GBps", "compute_slowdown", "comm_slowdown", ...
struct ScalarFitRecord {
  std::string name;
  double value = 0, rel_error = 0;
};
struct FitSet {
  std::vector<CollectiveFitRecord> collectives;
  std::vector<GemmFitRecord> gemms;
  std::vector<ScalarFitRecord> scalars;
  [[nodiscard]] bool empty() const { return collectives.empty() && gemms.empty() && scalars.empty(); }
};

// The current time as ISO 8601 UTC with seconds.
std::string utc_now();

class Database {
 public:
  enum class Mode {
    read_only,   // the file must exist and be a Lagom database; nothing is ever written
    read_write,  // creates a missing or empty file; migrates an older schema
  };

  // Opens `path` (see the contract above). Errors: not_found (read_only, no such file), invalid_input
  // (not SQLite, foreign SQLite, corrupt, newer schema, a file or folder not writable), failure (the
  // environment: cannot be read or written for lack of space, an I/O error, no memory).
  static Result<Database> open(const std::string& path, Mode mode);

  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  [[nodiscard]] const std::string& path() const { return m_path; }
  Result<int> schema_version();

  // Inserts `run` as incomplete (its id, status and finished_at are ignored); returns the new id.
  Result<std::int64_t> begin_run(const Run& run);
  Status add_comm_samples(std::int64_t run_id, const std::vector<CommSample>& samples);
  Status add_compute_samples(std::int64_t run_id, const std::vector<ComputeSample>& samples);
  Status add_overlap_samples(std::int64_t run_id, const std::vector<OverlapSample>& samples);
  // Marks the run complete with finished_at = now.
  Status finish_run(std::int64_t run_id);

  // Every run, oldest first.
  Result<std::vector<Run>> list_runs();
  // not_found when there is no such run.
  Result<Run> run(std::int64_t run_id);
  // The newest complete run (optionally only of `host`); nullopt when there is none.
  Result<std::optional<std::int64_t>> latest_complete_run(const std::optional<std::string>& host = {});

  Result<std::vector<CommSample>> comm_samples(std::int64_t run_id);
  Result<std::vector<ComputeSample>> compute_samples(std::int64_t run_id);
  Result<std::vector<OverlapSample>> overlap_samples(std::int64_t run_id);

  // Production records (docs/records.md). import_production stores, in one transaction, a new complete
  // run (`run`, backend forced to "production") holding every record whose records::record_key no run
  // holds yet; when there is none, nothing is written and run_id is 0. So importing the same files twice
  // adds nothing, and a killed import leaves no partial run.
  struct ProductionImport {
    std::int64_t run_id = 0;
    std::size_t added = 0;    // records stored
    std::size_t already = 0;  // records some run already held (or repeated within `records`)
  };
  Result<ProductionImport> import_production(const Run& run, const std::vector<records::Record>& records);
  // The run's records in the order they were imported.
  Result<std::vector<records::Record>> production_records(std::int64_t run_id);

  // Replaces the run's fits in one transaction.
  Status store_fits(std::int64_t run_id, const FitSet& fits);
  Result<FitSet> fits(std::int64_t run_id);

  // PRAGMA integrity_check's answer: "ok" when the file is sound.
  Result<std::string> integrity_check();

 private:
  Database(sqlite3* handle, std::string path);
  Status exec(const std::string& sql);
  Status migrate();
  sqlite3* m_db = nullptr;
  std::string m_path;
};

}  // namespace lagom::db
