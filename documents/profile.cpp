#include "documents/profile.h"

#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/json_fields.h"
#include "documents/bounds.h"
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

namespace {

constexpr std::int64_t k_most = std::numeric_limits<std::int64_t>::max();

Result<ProfileRun> read_run(const FieldReader& top) {
  ProfileRun run;
  if (top.has("run")) {
    LAGOM_TRY(const FieldReader r, top.object("run"));
    LAGOM_TRY(run.id, r.integer("id", std::nullopt, 0, k_most));
    LAGOM_TRY(run.backend, r.string("backend", std::nullopt));
    LAGOM_TRY(run.host, r.string("host", std::nullopt));
    LAGOM_TRY(run.status, r.string("status", std::nullopt));
    return run;
  }
  LAGOM_TRY(run.id, top.integer("run_id", std::nullopt, 0, k_most));
  LAGOM_TRY(run.backend, top.string("backend", std::nullopt));
  LAGOM_TRY(run.status, top.string("status", std::nullopt));
  return run;
}

Result<ProfileCommSample> read_comm_sample(const FieldReader& r) {
  ProfileCommSample s;
  LAGOM_TRY(s.collective, r.string("collective", std::nullopt));
  LAGOM_TRY(s.algo, r.string("algo", std::nullopt));
  LAGOM_TRY(s.proto, r.string("proto", std::nullopt));
  LAGOM_TRY(s.channels, r.integer("channels", std::nullopt, 0));
  LAGOM_TRY(s.ranks, r.integer("ranks", std::nullopt, 0));
  LAGOM_TRY(s.nodes, r.integer("nodes", std::nullopt, 0));
  LAGOM_TRY(s.bytes, r.integer("bytes", std::nullopt, 0, k_most));
  LAGOM_TRY(s.busbw_GBps, read_quantity(r, "busbw_GBps"));
  LAGOM_TRY(s.wrong, r.integer("wrong", std::nullopt, std::numeric_limits<std::int64_t>::min(), k_most));
  LAGOM_TRY(s.in_place, r.boolean("in_place", std::nullopt));
  return s;
}

Result<db::CollectiveFitRecord> read_collective_fit(const FieldReader& r) {
  db::CollectiveFitRecord f;
  LAGOM_TRY(f.collective, r.string("collective", std::nullopt));
  LAGOM_TRY(f.algo, r.string("algo", std::nullopt));
  LAGOM_TRY(f.proto, r.string("proto", std::nullopt));
  LAGOM_TRY(f.channels, r.integer("channels", std::nullopt, 0));
  LAGOM_TRY(f.ranks, r.integer("ranks", std::nullopt, 0));
  LAGOM_TRY(f.nodes, r.integer("nodes", std::nullopt, 0));
  LAGOM_TRY(f.latency_us, r.finite("latency_us", std::nullopt));
  LAGOM_TRY(f.bus_bw_GBps, read_quantity(r, "bus_bw_GBps"));
  LAGOM_TRY(f.min_bytes, r.integer("min_bytes", std::nullopt, 0, k_most));
  LAGOM_TRY(f.max_bytes, r.integer("max_bytes", std::nullopt, 0, k_most));
  LAGOM_TRY(f.rel_error, read_quantity(r, "rel_error"));
  LAGOM_TRY(f.samples, r.integer("samples", std::nullopt, 0));
  return f;
}

Result<db::GemmFitRecord> read_gemm_fit(const FieldReader& r) {
  db::GemmFitRecord f;
  LAGOM_TRY(f.precision, r.string("precision", std::nullopt));
  LAGOM_TRY(f.peak_tflops, read_quantity(r, "peak_tflops"));
  LAGOM_TRY(f.half_flops, r.finite("half_flops", std::nullopt));
  LAGOM_TRY(f.rel_error, read_quantity(r, "rel_error"));
  LAGOM_TRY(f.samples, r.integer("samples", std::nullopt, 0));
  return f;
}

// compute[i]: a GEMM (kind "gemm") or a memory sample (any other kind).
Status read_compute_sample(const FieldReader& r, ProfileView& v) {
  LAGOM_TRY(const std::string kind, r.string("kind", std::nullopt));
  if (kind == "gemm") {
    ProfileGemmSample g;
    LAGOM_TRY(g.m, r.integer("m", std::nullopt, 0, k_most));
    LAGOM_TRY(g.n, r.integer("n", std::nullopt, 0, k_most));
    LAGOM_TRY(g.k, r.integer("k", std::nullopt, 0, k_most));
    LAGOM_TRY(g.precision, r.string("precision", std::nullopt));
    LAGOM_TRY(g.tflops, read_quantity(r, "tflops"));
    v.gemms.push_back(std::move(g));
  } else {
    ProfileMemorySample m;
    LAGOM_TRY(m.bytes, r.integer("bytes", std::nullopt, 0, k_most));
    LAGOM_TRY(m.bw_GBps, read_quantity(r, "bw_GBps"));
    v.memory.push_back(m);
  }
  return {};
}

// Each element of the array `field` of `r` (an error when it is not an array or an element not an object)
// read by `read` into `out`.
template <typename T, typename Read>
Status read_each(const FieldReader& r, const char* field, std::vector<T>& out, Read read) {
  LAGOM_TRY(const nlohmann::json* array, r.array(field));
  for (std::size_t i = 0; i < array->size(); ++i) {
    LAGOM_TRY(const FieldReader element, r.element(field, *array, i));
    LAGOM_TRY(T value, read(element));
    out.push_back(std::move(value));
  }
  return {};
}

}  // namespace

Result<ProfileView> read_profile(const nlohmann::json& document, const std::string& source) {
  LAGOM_TRY_STATUS(require_object(document, source));
  // Later versions may add fields: the ones read are checked, the others left alone.
  const FieldReader top(document, source, "", UnknownFields::ignore);
  ProfileView v;
  LAGOM_TRY(v.run, read_run(top));
  LAGOM_TRY(const FieldReader fits, top.object("fits"));
  LAGOM_TRY_STATUS(fits.array("collectives"));
  LAGOM_TRY_STATUS(fits.array("gemms"));
  LAGOM_TRY_STATUS(read_each(top, "comm", v.comm, read_comm_sample));
  LAGOM_TRY_STATUS(read_each(fits, "collectives", v.collective_fits, read_collective_fit));
  LAGOM_TRY(const nlohmann::json* compute, top.array("compute"));
  for (std::size_t i = 0; i < compute->size(); ++i) {
    LAGOM_TRY(const FieldReader sample, top.element("compute", *compute, i));
    LAGOM_TRY_STATUS(read_compute_sample(sample, v));
  }
  LAGOM_TRY_STATUS(read_each(fits, "gemms", v.gemm_fits, read_gemm_fit));
  return v;
}

}  // namespace lagom::documents
