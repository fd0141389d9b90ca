#include "profiler/import.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

namespace lagom::profiler {

Result<RecordsImport> import_records(db::Database& database, const std::string& path,
                                     const RecordFiles& files, const std::string& options_json) {
  std::set<std::string> hosts;
  std::set<std::pair<std::string, std::int64_t>> processes;
  int max_nodes = 1;
  for (const auto& r : files.records) {
    hosts.insert(std::string(r.host.view()));
    processes.insert({std::string(r.host.view()), r.pid});
    max_nodes = std::max(max_nodes, r.n_nodes);
  }
  RecordsImport out;
  for (const auto& s : files.summaries)
    out.dropped_by_writer += s.dropped_full + s.dropped_slots + s.write_failed;
  db::Run run;
  run.suite = std::filesystem::path(path).filename().string();
  run.host = hosts.size() == 1 ? *hosts.begin() : std::string();
  run.ranks = static_cast<int>(std::max<std::size_t>(processes.size(), 1));
  run.nodes = std::max(static_cast<int>(hosts.size()), max_nodes);
  run.options_json = options_json;
  LAGOM_TRY(out.imported, database.import_production(run, files.records));
  return out;
}

Result<LogImport> import_log(db::Database& database, const std::string& file, const ImportedLog& log,
                             const std::string& options_json) {
  db::Run run;
  run.backend = "import";
  run.suite = std::filesystem::path(file).filename().string();
  run.host = log.host;
  run.ranks = log.ranks;
  run.nodes = log.nodes;
  run.options_json = options_json;
  LogImport out;
  LAGOM_TRY(out.run_id, database.begin_run(run));
  LAGOM_TRY_STATUS(database.add_comm_samples(out.run_id, log.samples));
  out.outcome = fit_run(log.samples, {}, {});
  LAGOM_TRY_STATUS(database.store_fits(out.run_id, out.outcome.fits));
  LAGOM_TRY_STATUS(database.finish_run(out.run_id));
  return out;
}

Result<FitOutcome> refit_run(db::Database& database, std::int64_t run_id) {
  LAGOM_TRY(const db::Run run, database.run(run_id));
  if (run.status != db::k_status_complete) {
    return make_error(ErrorCode::invalid_input,
                      "the run is incomplete (interrupted); incomplete runs are never fitted");
  }
  std::vector<db::CommSample> comm;
  if (run.backend == db::k_backend_production) {
    LAGOM_TRY(const auto records, database.production_records(run_id));
    comm = comm_samples_from_records(records);
  } else {
    LAGOM_TRY(comm, database.comm_samples(run_id));
  }
  LAGOM_TRY(const auto compute, database.compute_samples(run_id));
  LAGOM_TRY(const auto overlap, database.overlap_samples(run_id));
  FitOutcome outcome = fit_run(comm, compute, overlap);
  if (outcome.fits.empty()) return make_error(ErrorCode::invalid_input, "nothing to fit (no usable samples)");
  LAGOM_TRY_STATUS(database.store_fits(run_id, outcome.fits));
  return outcome;
}

}  // namespace lagom::profiler
