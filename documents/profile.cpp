#include "documents/profile.h"

#include <utility>

#include <fmt/format.h>

#include "documents/kind.h"

namespace lagom::documents {

nlohmann::json to_json(const db::Run& run) {
  return {
      {"id", run.id},
      {"status", run.status},
      {"backend", run.backend},
      {"suite", run.suite},
      {"host", run.host},
      {"cpu", run.cpu},
      {"gpu", run.gpu},
      {"driver", run.driver},
      {"cuda_version", run.cuda_version},
      {"nccl_version", run.nccl_version},
      {"mpi_version", run.mpi_version},
      {"git_sha", run.git_sha},
      {"lagom_version", run.lagom_version},
      {"ranks", run.ranks},
      {"nodes", run.nodes},
      {k_run_options_field,
       nlohmann::json::parse(run.options_json.empty() ? "{}" : run.options_json, nullptr, false)},
      {"started_at", run.started_at},
      {"finished_at", run.finished_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.finished_at)}};
}

nlohmann::json to_json(const db::CommSample& s) {
  return {{"collective", s.collective},
          {"algo", s.algo},
          {"proto", s.proto},
          {"channels", s.channels},
          {"ranks", s.ranks},
          {"nodes", s.nodes},
          {"bytes", s.bytes},
          {"count", s.count},
          {"type", s.dtype},
          {"redop", s.redop},
          {"root", s.root},
          {"in_place", s.in_place},
          {"time_us", s.time_us},
          {"algbw_GBps", s.algbw_GBps},
          {"busbw_GBps", s.busbw_GBps},
          {"wrong", s.wrong}};
}

nlohmann::json to_json(const db::ComputeSample& s) {
  nlohmann::json j{{"kind", s.kind}, {"time_us", s.time_us}};
  if (s.kind == "gemm") {
    j["precision"] = s.precision;
    j["m"] = s.m;
    j["n"] = s.n;
    j["k"] = s.k;
    j["tflops"] = s.tflops;
  } else {
    j["bytes"] = s.bytes;
    j["bw_GBps"] = s.bw_GBps;
  }
  return j;
}

nlohmann::json to_json(const db::OverlapSample& s) {
  return {{"name", s.name},
          {"collective", s.collective},
          {"bytes", s.bytes},
          {"precision", s.precision},
          {"m", s.m},
          {"n", s.n},
          {"k", s.k},
          {"gemm_alone_us", s.gemm_alone_us},
          {"comm_alone_us", s.comm_alone_us},
          {"gemm_overlap_us", s.gemm_overlap_us},
          {"comm_overlap_us", s.comm_overlap_us},
          {"gemm_slowdown", s.gemm_alone_us > 0 ? s.gemm_overlap_us / s.gemm_alone_us : 0.0},
          {"comm_slowdown", s.comm_alone_us > 0 ? s.comm_overlap_us / s.comm_alone_us : 0.0}};
}

nlohmann::json to_json(const db::FitSet& fits) {
  nlohmann::json collectives = nlohmann::json::array();
  for (const auto& f : fits.collectives) {
    collectives.push_back({{"collective", f.collective},
                           {"algo", f.algo},
                           {"proto", f.proto},
                           {"ranks", f.ranks},
                           {"nodes", f.nodes},
                           {"channels", f.channels},
                           {"latency_us", f.latency_us},
                           {"bus_bw_GBps", f.bus_bw_GBps},
                           {"rel_error", f.rel_error},
                           {"samples", f.samples},
                           {"min_bytes", f.min_bytes},
                           {"max_bytes", f.max_bytes}});
  }
  nlohmann::json gemms = nlohmann::json::array();
  for (const auto& f : fits.gemms) {
    gemms.push_back({{"precision", f.precision},
                     {"peak_tflops", f.peak_tflops},
                     {"half_flops", f.half_flops},
                     {"rel_error", f.rel_error},
                     {"samples", f.samples}});
  }
  nlohmann::json scalars = nlohmann::json::object();
  for (const auto& f : fits.scalars) scalars[f.name] = {{"value", f.value}, {"rel_error", f.rel_error}};
  return {{"collectives", collectives}, {"gemms", gemms}, {"scalars", scalars}};
}

std::string samples_csv(const std::vector<db::CommSample>& comm,
                        const std::vector<db::ComputeSample>& compute) {
  std::string out =
      "kind,collective,algo,proto,channels,ranks,nodes,bytes,count,type,redop,root,in_place,time_us,algbw_"
      "GBps,"
      "busbw_GBps,wrong,precision,m,n,k,tflops,bw_GBps\n";
  for (const auto& s : comm) {
    out += fmt::format("comm,{},{},{},{},{},{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{},,,,,,\n",
                       s.collective, s.algo, s.proto, s.channels, s.ranks, s.nodes, s.bytes, s.count, s.dtype,
                       s.redop, s.root, s.in_place ? 1 : 0, s.time_us, s.algbw_GBps, s.busbw_GBps, s.wrong);
  }
  for (const auto& s : compute) {
    if (s.kind == "gemm") {
      out += fmt::format("gemm,,,,,,,,,,,,,{:.6g},,,,{},{},{},{},{:.6g},\n", s.time_us, s.precision, s.m, s.n,
                         s.k, s.tflops);
    } else {
      out += fmt::format("{},,,,,,,{},,,,,,{:.6g},,,,,,,,,{:.6g}\n", s.kind, s.bytes, s.time_us, s.bw_GBps);
    }
  }
  return out;
}

nlohmann::json to_json(const ProfileDocument& document) {
  nlohmann::json doc{{"run_id", document.run_id},   {"status", db::k_status_complete},
                     {"backend", document.backend}, {"suite", document.suite},
                     {"ranks", document.ranks},     {"nodes", document.nodes},
                     {"db", document.db},           {"warnings", document.warnings}};
  doc["comm"] = nlohmann::json::array();
  for (const auto& s : document.comm) doc["comm"].push_back(to_json(s));
  doc["compute"] = nlohmann::json::array();
  for (const auto& s : document.compute) doc["compute"].push_back(to_json(s));
  doc["overlap"] = nlohmann::json::array();
  for (const auto& s : document.overlap) doc["overlap"].push_back(to_json(s));
  doc["fits"] = to_json(document.fits);
  return stamp(Kind::profile, std::move(doc));
}

Result<nlohmann::json> export_run_document(const std::string& db_path, std::int64_t run_id) {
  LAGOM_TRY(db::Database database, db::Database::open(db_path, db::Database::Mode::read_only));
  LAGOM_TRY(const db::Run run, database.run(run_id));
  LAGOM_TRY(const auto comm, database.comm_samples(run_id));
  LAGOM_TRY(const auto compute, database.compute_samples(run_id));
  LAGOM_TRY(const auto overlap, database.overlap_samples(run_id));
  LAGOM_TRY(const auto fits, database.fits(run_id));
  nlohmann::json doc{{"run", to_json(run)}, {"fits", to_json(fits)}};
  doc["comm"] = nlohmann::json::array();
  for (const auto& s : comm) doc["comm"].push_back(to_json(s));
  doc["compute"] = nlohmann::json::array();
  for (const auto& s : compute) doc["compute"].push_back(to_json(s));
  doc["overlap"] = nlohmann::json::array();
  for (const auto& s : overlap) doc["overlap"].push_back(to_json(s));
  return stamp(Kind::profile, std::move(doc));
}

}  // namespace lagom::documents
