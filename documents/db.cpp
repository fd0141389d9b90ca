// The `lagom db` documents.
#include "documents/db.h"

#include <utility>

#include "documents/kind.h"
#include "documents/profile.h"

namespace lagom::documents {

nlohmann::json to_json(const DbListDocument& document) {
  // An object, not the bare array of runs it was before documents carried kind and version.
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : document.runs) {
    runs.push_back({{"id", run.id},
                    {"status", run.status},
                    {"backend", run.backend},
                    {"suite", run.suite},
                    {"host", run.host},
                    {"ranks", run.ranks},
                    {"nodes", run.nodes},
                    {"started_at", run.started_at},
                    {"finished_at",
                     run.finished_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.finished_at)}});
  }
  return stamp(Kind::db_list, {{"runs", std::move(runs)}});
}

nlohmann::json to_json(const DbShowDocument& document) {
  return stamp(Kind::db_show, {{"run", to_json(document.run)},
                               {"samples",
                                {{"comm", document.comm},
                                 {"compute", document.compute},
                                 {"overlap", document.overlap},
                                 {"production_records", document.production_records}}},
                               {"fits", to_json(document.fits)}});
}

nlohmann::json to_json(const DbImportRecordsDocument& document) {
  return stamp(Kind::db_import,
               {{"run_id", document.run_id ? nlohmann::json(*document.run_id) : nlohmann::json(nullptr)},
                {"format", "records"},
                {"files", document.files},
                {"records", document.records},
                {"added", document.added},
                {"already", document.already},
                {"dropped_by_writer", document.dropped_by_writer},
                {"warnings", document.warnings}});
}

nlohmann::json to_json(const DbImportLogDocument& document) {
  return stamp(Kind::db_import, {{"run_id", document.run_id},
                                 {"format", document.format},
                                 {"collective", document.collective},
                                 {"ranks", document.ranks},
                                 {"nodes", document.nodes},
                                 {"samples", document.samples},
                                 {"skipped", document.skipped},
                                 {"fits_skipped", document.fits_skipped},
                                 {"fits", to_json(document.fits)}});
}

nlohmann::json to_json(const DbFitDocument& document) {
  nlohmann::json doc = to_json(document.fits);
  doc["run_id"] = document.run_id;
  doc["skipped"] = document.skipped;
  return stamp(Kind::db_fit, std::move(doc));
}

std::string profile_run_options(const profiler::ProfileOptions& options, const profiler::Sweep& sweep) {
  return nlohmann::json{{"backend", options.backend},
                        {"suite", options.suite == "overlap" ? std::string("interference") : options.suite},
                        {"quick", options.quick},
                        {"sizes_bytes", sweep.sizes_bytes},
                        {"collectives", sweep.collectives},
                        {"warmup_iters", sweep.warmup_iters},
                        {"min_iters", sweep.min_iters},
                        {"max_iters", sweep.max_iters},
                        {"target_us", sweep.target_us}}
      .dump();
}

std::string records_import_options(const std::string& path, const std::vector<std::string>& files) {
  return nlohmann::json{{"path", path}, {"files", files}, {"format", "records"}}.dump();
}

std::string log_import_options(const std::string& file, const std::string& format,
                               const std::string& collective) {
  return nlohmann::json{{"file", file}, {"format", format}, {"collective", collective}}.dump();
}

}  // namespace lagom::documents
