#include "profiler/calibration.h"

#include <algorithm>
#include <vector>

#include "db/database.h"
#include "profiler/fit.h"

namespace lagom::profiler {

namespace {

Result<model::Calibration> run_calibration(db::Database& database, const db::Run& run) {
  LAGOM_TRY(db::FitSet fits, database.fits(run.id));
  if (fits.empty()) {
    LAGOM_TRY(const auto comm, database.comm_samples(run.id));
    LAGOM_TRY(const auto compute, database.compute_samples(run.id));
    LAGOM_TRY(const auto overlap, database.overlap_samples(run.id));
    fits = fit_run(comm, compute, overlap).fits;
  }
  return to_calibration(fits, run.id, run.host);
}

}  // namespace

Result<model::Calibration> load_machine_calibration(const std::string& db_path, const std::string& host) {
  LAGOM_TRY(db::Database database, db::Database::open(db_path, db::Database::Mode::read_only));
  LAGOM_TRY(std::vector<db::Run> runs, database.list_runs());
  std::sort(runs.begin(), runs.end(), [](const db::Run& a, const db::Run& b) { return a.id > b.id; });
  std::optional<model::Calibration> merged;
  for (const auto& run : runs) {
    if (run.status != db::k_status_complete || run.host != host || run.backend == "import") continue;
    LAGOM_TRY(const model::Calibration c, run_calibration(database, run));
    if (!merged) {
      merged = c;
      continue;
    }
    // Each kind of fit from the newest run that has it.
    if (merged->collectives.empty()) merged->collectives = c.collectives;
    if (merged->gemms.empty()) merged->gemms = c.gemms;
    if (!merged->memory_bw_GBps) merged->memory_bw_GBps = c.memory_bw_GBps;
    if (!merged->memory_gib) merged->memory_gib = c.memory_gib;
    auto& mi = merged->interference;
    if (!mi.compute_slowdown_per_channel && !mi.memory_contention && !mi.comm_slowdown &&
        !mi.compute_slowdown) {
      mi = c.interference;
    }
  }
  if (!merged) {
    return make_error(ErrorCode::not_found, "--db " + db_path + ": no complete profile run of host " + host +
                                                " (run lagom profile first)");
  }
  return *merged;
}

Result<model::Calibration> load_calibration(const std::string& db_path, std::optional<std::int64_t> run_id,
                                            const std::optional<std::string>& host) {
  LAGOM_TRY(db::Database database, db::Database::open(db_path, db::Database::Mode::read_only));
  if (!run_id) {
    LAGOM_TRY(const auto latest, database.latest_complete_run(host));
    if (!latest) {
      return make_error(ErrorCode::not_found, "--db " + db_path + ": no complete profile run" +
                                                  (host ? " of host " + *host : std::string()) +
                                                  " (run lagom profile first)");
    }
    run_id = latest;
  }
  LAGOM_TRY(const db::Run run, database.run(*run_id));
  if (run.status != db::k_status_complete) {
    return make_error(ErrorCode::invalid_input,
                      "run " + std::to_string(*run_id) + " is incomplete: its samples are not used");
  }
  return run_calibration(database, run);
}

}  // namespace lagom::profiler
