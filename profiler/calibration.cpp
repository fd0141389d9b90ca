#include "profiler/calibration.h"

#include "db/database.h"
#include "profiler/fit.h"

namespace lagom::profiler {

Result<model::Calibration> load_calibration(const std::string& db_path, std::optional<std::int64_t> run_id,
                                            const std::optional<std::string>& host) {
  LAGOM_TRY(db::Database database, db::Database::open(db_path, db::Database::Mode::read_only));
  if (!run_id) {
    LAGOM_TRY(const auto latest, database.latest_complete_run(host));
    if (!latest) {
      return make_error(ErrorCode::not_found, "--db " + db_path + ": no complete profile run" +
                                                  (host ? " of host " + *host : std::string()) + " (run lagom profile first)");
    }
    run_id = latest;
  }
  LAGOM_TRY(const db::Run run, database.run(*run_id));
  if (run.status != db::k_status_complete) {
    return make_error(ErrorCode::invalid_input, "run " + std::to_string(*run_id) + " is incomplete: its samples are not used");
  }
  LAGOM_TRY(db::FitSet fits, database.fits(*run_id));
  if (fits.empty()) {
    LAGOM_TRY(const auto comm, database.comm_samples(*run_id));
    LAGOM_TRY(const auto compute, database.compute_samples(*run_id));
    LAGOM_TRY(const auto overlap, database.overlap_samples(*run_id));
    fits = fit_run(comm, compute, overlap).fits;
  }
  return to_calibration(fits, *run_id, run.host);
}

}  // namespace lagom::profiler
