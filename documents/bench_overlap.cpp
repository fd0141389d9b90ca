#include "documents/bench_overlap.h"

#include <string>
#include <utility>

#include "documents/kind.h"

namespace lagom::documents {

nlohmann::json bench_overlap_json(const model::OverlapPlan& plan, const kernels::OverlapBench& bench,
                                  const kernels::BenchOptions& options) {
  const auto& s = plan.shape;
  const kernels::BenchResult& r = bench.result;
  nlohmann::json doc;
  doc["kernel"] = std::string(model::to_string(plan.request.kernel));
  doc["method"] = model::to_string(plan.request.method);
  doc["ranks"] = plan.request.ranks;
  doc["executor"] = std::string(lagom::to_string(bench.executor));
  doc["m"] = s.m;
  doc["n"] = s.n;
  doc["k"] = s.k;
  doc["shape"] = {{"m", s.m},         {"n", s.n},         {"k", s.k},
                  {"m_pad", s.m_pad}, {"n_pad", s.n_pad}, {"k_pad", s.k_pad}};
  doc["padded"] = s.padded();
  doc["reps"] = options.reps;
  doc["compute_us"] = r.compute_us;
  doc["gemm_us"] = r.gemm_us;
  doc["reduce_us"] = r.reduce_us;
  doc["comm_us"] = r.comm_us;
  doc["overlapped_us"] = r.overlapped_us;
  doc["exposed_comm_us"] = r.exposed_comm_us;
  doc["overlap_efficiency"] = r.overlap_efficiency;
  doc["comm_over_compute"] = r.compute_us > 0 ? r.comm_us / r.compute_us : 0.0;
  doc["predicted_overlapped_us"] = bench.predicted.overlapped_us;
  doc["predicted_exposed_comm_us"] = bench.predicted.exposed_comm_us;
  doc["prediction_error_pct"] = bench.prediction_error_pct;
  doc["max_abs_error"] = r.max_abs_error;
  doc["max_abs_ref"] = r.max_abs_ref;
  doc["max_rel_error"] = r.rel_error;
  doc["tolerance"] = options.tolerance;
  doc["correct"] = r.correct;
  doc["note"] = bench.note;
  if (bench.executor == kernels::Executor::cuda) doc["emulated"] = bench.cuda.emulated;
  return stamp(Kind::bench_overlap, std::move(doc));
}

}  // namespace lagom::documents
