#include "report/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "core/text.h"
#include "documents/check.h"
#include "documents/explore.h"
#include "documents/kind.h"
#include "documents/plan.h"
#include "documents/profile.h"
#include "documents/simulate.h"
#include "documents/tune.h"
#include "documents/validate.h"
#include "lagom/report_template.h"
#include "model/collective_factors.h"

namespace lagom::report {

using nlohmann::json;

std::string_view to_string(Kind kind) {
  switch (kind) {
    case Kind::simulate:
      return "simulate";
    case Kind::explore:
      return "explore";
    case Kind::tune:
      return "tune";
    case Kind::profile:
      return "profile";
    case Kind::validate:
      return "validate";
    case Kind::check:
      return "check";
    case Kind::plan:
      return "plan";
  }
  return "?";
}

namespace {

// The documents are read by their kinds' readers in documents/ (every field checked, an error naming the
// source and the field's path: "sim.json: results[3].iteration_time_s: must be a finite number"); the
// builders below turn what was read into what the page draws. The counts the page data holds as numbers
// (bytes, ranks, channels, samples) are doubles there, as they have always been (4.0, not 4): a page of
// the same documents is the same page.
double as_double(std::int64_t count) {
  return static_cast<double>(count);
}

json stat(const std::string& label, const std::string& value, const std::string& tone = "") {
  json s = {{"label", label}, {"value", value}};
  if (!tone.empty()) s["tone"] = tone;
  return s;
}

std::string seconds_text(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.1f} µs", s * 1e6);
}

std::string cluster_text(const documents::ClusterView& c) {
  return fmt::format("{} ({} × {} {})", c.name, c.nodes, c.gpus_per_node, c.gpu);
}

// "tp 8 · pp 8 · dp 16 · vpp 2 · mb 1 · recompute selective"; the knobs at their defaults are left out
// (cp, ep 1; sp off; zero 0; recompute none; tp-overlap none) so the label says what sets a strategy apart.
std::string strategy_label(const documents::StrategyView& s) {
  std::string out = fmt::format("tp {} · pp {} · dp {}", s.tp, s.pp, s.dp);
  for (const auto& [key, v] : {std::pair{"cp", s.cp}, std::pair{"ep", s.ep}, std::pair{"vpp", s.vpp}}) {
    if (v != 1) out += fmt::format(" · {} {}", key, v);
  }
  if (s.zero != 0) out += fmt::format(" · zero {}", s.zero);
  out += fmt::format(" · mb {}", s.micro_batch);
  if (s.recompute != "none") out += " · recompute " + s.recompute;
  if (s.tp_overlap != "none") out += " · tp-overlap " + s.tp_overlap;
  return out;
}

json phases_json(const documents::SimulatePhases& p) {
  return {{"compute", p.compute},
          {"exposed_comm", p.exposed_comm},
          {"pipeline_bubble", p.pipeline_bubble},
          {"optimizer", p.optimizer}};
}

// ---- simulate -------------------------------------------------------------------------------------

// The op classes by their total time, longest first. An op class's count sums the calls of every
// pipeline stage, so its total is the time of all stages together (8 stages' TP all-reduces add up to
// 16 s in a 20 s iteration); a GPU runs one stage's share, and the mean over the stages is what compares
// with the iteration.
json simulate_op_classes(const documents::SimulateView& v) {
  json ops = json::array();
  for (const auto& o : v.op_classes) {
    ops.push_back({{"name", o.name},
                   {"collective", o.collective},
                   {"group", o.group},
                   {"bytes", as_double(o.bytes)},
                   {"ranks", as_double(o.ranks)},
                   {"nodes", as_double(o.nodes)},
                   {"count", o.count},
                   {"time_us", o.time_us},
                   {"total_ms", o.count * o.time_us * 1e-3}});
  }
  std::stable_sort(ops.begin(), ops.end(), [](const json& a, const json& b) {
    return a["total_ms"].get<double>() > b["total_ms"].get<double>();
  });
  for (json& op : ops) op["stage_ms"] = op["total_ms"].get<double>() / static_cast<double>(v.stages.size());
  return ops;
}

Result<json> simulate_section(const json& doc, const std::string& source, const SectionOptions& options) {
  LAGOM_TRY(const documents::SimulateView v, documents::read_simulate(doc, source));
  json stages = json::array();
  for (const auto& stage : v.stages) stages.push_back(phases_json(stage));
  const documents::SimulateMemory& m = v.memory;
  const json memory = {{"weights", m.weights},
                       {"grads", m.grads},
                       {"optimizer", m.optimizer},
                       {"activations", m.activations},
                       {"total", m.total}};
  // What fits_in_memory was judged against: the usable memory less the reserve (documents from before
  // the reserve have no budget; then the GPU's capacity is all there is to show).
  const std::optional<double>& budget = v.memory_budget_gib;
  std::string memory_text = fmt::format("{:.1f} GiB", m.total);
  if (budget)
    memory_text = fmt::format("{:.1f} of {:.1f} GiB budget", m.total, *budget);
  else if (options.gpu_memory_gib)
    memory_text = fmt::format("{:.1f} of {:.0f} GiB", m.total, *options.gpu_memory_gib);
  const bool fits = v.fits_in_memory;
  json stats = json::array({stat("iteration", seconds_text(v.iteration_time_s))});
  if (v.has_interval) {
    // The 90% interval (docs/model.md "How sure a prediction is"); documents from before it show none.
    stats.push_back(stat("iteration, 90% interval",
                         v.interval
                             ? seconds_text(v.interval->first) + " – " + seconds_text(v.interval->second)
                             : std::string("none"),
                         v.interval ? "" : "bad"));
  }
  for (json& s : json::array({stat("tokens/s", fmt::format("{:.0f}", v.tokens_per_s)),
                              stat("model TFLOP/s per GPU", fmt::format("{:.1f}", v.model_tflops_per_gpu)),
                              stat("MFU", fmt::format("{:.1f}%", 100 * v.mfu)),
                              stat("memory per GPU", memory_text, fits ? "" : "bad"),
                              stat("fits in memory", fits ? "yes" : "no", fits ? "good" : "bad")})) {
    stats.push_back(std::move(s));
  }
  return json{
      {"kind", "simulate"},
      {"heading", fmt::format("Simulation: {} on {} GPUs of {}", v.model, v.gpus, cluster_text(v.cluster))},
      {"source", v.interval_source.empty() ? fmt::format("{} · {}", source, strategy_label(v.strategy))
                                           : fmt::format("{} · {} · 90% interval: {}", source,
                                                         strategy_label(v.strategy), v.interval_source)},
      {"stats", std::move(stats)},
      {"stages", std::move(stages)},
      {"breakdown_s", phases_json(v.breakdown)},
      {"memory_gib", memory},
      {"capacity_gib", options.gpu_memory_gib ? json(*options.gpu_memory_gib) : json(nullptr)},
      {"budget_gib", budget ? json(*budget) : json(nullptr)},
      {"gpu", v.cluster.gpu},
      {"fits_in_memory", fits},
      {"op_classes", simulate_op_classes(v)}};
}

// ---- explore --------------------------------------------------------------------------------------

// The points no other beats on both coordinates (explore: iteration time and memory per GPU; plan: time
// to train and cost), ordered by the first: sorted by it (then the second), a point is on the front when
// its second is below every earlier point's.
std::vector<std::size_t> pareto_front(const std::vector<std::pair<double, double>>& points) {
  std::vector<std::size_t> order(points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return points[a] < points[b]; });
  std::vector<std::size_t> front;
  double best_memory = INFINITY;
  for (const std::size_t i : order) {
    if (points[i].second < best_memory) {
      front.push_back(i);
      best_memory = points[i].second;
    }
  }
  return front;
}

// A row of explore's strategy table: the knobs one by one, then the results.
json explore_row(const documents::ExploreEntry& e, std::size_t rank) {
  const documents::StrategyView& s = e.strategy;
  return {{"rank", rank},
          {"tp", s.tp},
          {"pp", s.pp},
          {"dp", s.dp},
          {"cp", s.cp},
          {"ep", s.ep},
          {"vpp", s.vpp},
          {"sp", s.sp.value_or("?")},
          {"zero", s.zero},
          {"micro_batch", s.micro_batch},
          {"recompute", s.recompute},
          {"tp_overlap", s.tp_overlap},
          {"iteration_time_s", e.iteration_time_s},
          {"tokens_per_s", e.tokens_per_s},
          {"mfu", e.mfu},
          {"memory_gib", e.memory_gib_per_gpu_total}};
}

Result<json> explore_section(const json& doc, const std::string& source, const SectionOptions& options) {
  LAGOM_TRY(const documents::ExploreView v, documents::read_explore(doc, source));
  if (v.results.empty()) {
    return make_error(ErrorCode::invalid_input, source + ": results: no strategy (none fit in memory?)");
  }
  std::vector<std::pair<double, double>> points;
  json point_list = json::array();
  json labels = json::array();
  json rows = json::array();
  for (std::size_t i = 0; i < v.results.size(); ++i) {
    const documents::ExploreEntry& e = v.results[i];
    labels.push_back(strategy_label(e.strategy));
    points.emplace_back(e.iteration_time_s, e.memory_gib_per_gpu_total);
    point_list.push_back(json::array({e.iteration_time_s, e.memory_gib_per_gpu_total}));
    if (rows.size() < options.table_rows) rows.push_back(explore_row(e, i + 1));
  }
  const std::vector<std::size_t> front = pareto_front(points);
  json stats = json::array({stat("strategies evaluated", std::to_string(v.evaluated)),
                            stat("simulated", std::to_string(v.simulated)),
                            stat("in this document", std::to_string(points.size())),
                            stat("best iteration", seconds_text(points.front().first)),
                            stat("on the Pareto front", std::to_string(front.size()))});
  return json{{"kind", "explore"},
              {"heading", fmt::format("Explore: {} on {} GPUs of {}, global batch {}", v.model, v.gpus,
                                      cluster_text(v.cluster), v.global_batch)},
              {"source", source},
              {"stats", std::move(stats)},
              {"points", std::move(point_list)},
              {"labels", std::move(labels)},
              {"pareto", front},
              {"rows", std::move(rows)}};
}

// ---- tune -----------------------------------------------------------------------------------------

Result<json> tune_section(const json& doc, const std::string& source) {
  LAGOM_TRY(const documents::TuneView v, documents::read_tune(doc, source));
  json ops = json::array();
  for (const auto& o : v.ops) {
    json op = {{"name", o.name},
               {"count", o.count},
               {"algo", o.algo},
               {"proto", o.proto},
               {"channels", as_double(o.channels)},
               {"time_us", o.predicted_time_us},
               {"scope", o.scope},
               {"default_algo", "–"},
               {"default_channels", nullptr},
               {"default_time_us", nullptr}};
    // Documents from before tune recorded NCCL's defaults show "–".
    if (const auto& d = o.nccl_default) {
      op["default_algo"] = d->algo + "/" + d->proto;
      op["default_channels"] = as_double(d->channels);
      op["default_time_us"] = d->time_us;
    }
    ops.push_back(std::move(op));
  }
  // lagom-config.json names the model and cluster; tune --json does not.
  const std::string what =
      v.model && v.cluster ? fmt::format("{} on {}", *v.model, *v.cluster) : "NCCL and overlap knobs";
  const double speedup = v.speedup;
  json stats = json::array({stat("search", v.search + " (" + v.runtime + ")"),
                            stat("NCCL defaults", seconds_text(v.baseline_iteration_time_s)),
                            stat("tuned", seconds_text(v.predicted_iteration_time_s)),
                            stat("speedup", fmt::format("{:.3f}×", speedup), speedup > 1 ? "good" : ""),
                            stat("evaluations", std::to_string(v.evaluations)),
                            stat("op classes", std::to_string(ops.size()))});
  return json{{"kind", "tune"},
              {"heading", "Tune: " + what},
              {"source", source},
              {"stats", std::move(stats)},
              {"search", v.search},
              {"baseline_s", v.baseline_iteration_time_s},
              {"predicted_s", v.predicted_iteration_time_s},
              {"ops", std::move(ops)}};
}

// ---- profile --------------------------------------------------------------------------------------

// Points of a fitted curve: `count` sizes spaced evenly in log between lo and hi.
template <typename F>
json curve(double lo, double hi, int count, F&& value) {
  json points = json::array();
  if (!(lo > 0) || !(hi >= lo)) return points;
  for (int i = 0; i < count; ++i) {
    const double x = lo * std::pow(hi / lo, count == 1 ? 0.0 : static_cast<double>(i) / (count - 1));
    points.push_back(json::array({x, value(x)}));
  }
  return points;
}

// A collective series: collective, algo, proto, channels, ranks, nodes.
using SeriesKey = std::tuple<std::string, std::string, std::string, int, int, int>;

// The fitted curves of the collective fits by series; their table rows are appended to `collective_rows`.
std::map<SeriesKey, json> collective_fit_curves(const documents::ProfileView& v, json& collective_rows) {
  std::map<SeriesKey, json> fit_curves;
  for (const auto& c : v.collective_fits) {
    std::string name = fmt::format("{} {} ranks", c.collective, c.ranks);
    if (c.nodes > 1) name += fmt::format(" on {} nodes", c.nodes);
    for (const std::string& knob : {c.algo, c.proto}) {
      if (!knob.empty() && knob != "default") name += " " + knob;
    }
    if (c.channels > 0) name += fmt::format(" {} ch", c.channels);
    collective_rows.push_back({{"name", name},
                               {"latency_us", c.latency_us},
                               {"bus_bw_GBps", c.bus_bw_GBps},
                               {"rel_error", c.rel_error},
                               {"samples", as_double(c.samples)}});
    const auto collective = model::parse_collective(c.collective);
    if (!collective || !(c.bus_bw_GBps > 0)) continue;
    // docs/profiler.md#fits: time_us = latency_us + bytes / (bus_bw_GBps / factor · 1e3), and nccl-tests'
    // busbw = factor · bytes / time (bytes per µs / 1e3 = GB/s).
    const double factor = model::busbw_factor(*collective, c.ranks);
    const double latency_us = c.latency_us, bus_bw = c.bus_bw_GBps;
    fit_curves[SeriesKey{c.collective, c.algo, c.proto, c.channels, c.ranks, c.nodes}] =
        curve(as_double(c.min_bytes), as_double(c.max_bytes), 48, [&](double bytes) {
          const double time_us = latency_us + bytes / (bus_bw / factor * 1e3);
          return factor * bytes / (time_us * 1e3);
        });
  }
  return fit_curves;
}

// The collective series of a profile document (one per collective, algo, proto, channels, ranks and
// nodes), each with its fitted curve; the fits' table rows are appended to `collective_rows`.
json profile_collectives(const documents::ProfileView& v, json& collective_rows) {
  // Out-of-place samples (as the fit takes them; in-place only for a series that has nothing else),
  // failed data checks left out.
  struct Series {
    std::vector<std::pair<double, double>> out_of_place, in_place;
  };
  std::map<SeriesKey, Series> series;
  for (const auto& s : v.comm) {
    if (s.wrong > 0 || !(s.bytes > 0)) continue;
    const SeriesKey key{s.collective, s.algo, s.proto, s.channels, s.ranks, s.nodes};
    (s.in_place ? series[key].in_place : series[key].out_of_place)
        .emplace_back(as_double(s.bytes), s.busbw_GBps);
  }
  const std::map<SeriesKey, json> fit_curves = collective_fit_curves(v, collective_rows);
  std::map<std::string, json> by_collective;
  for (auto& [key, s] : series) {
    auto& points = s.out_of_place.empty() ? s.in_place : s.out_of_place;
    std::sort(points.begin(), points.end());
    json list = json::array();
    for (const auto& [bytes, busbw] : points) list.push_back(json::array({bytes, busbw}));
    const auto& [collective, algo, proto, channels, ranks, nodes] = key;
    std::string label = fmt::format("{} ranks", ranks);
    if (nodes > 1) label += fmt::format(" on {} nodes", nodes);
    if (!algo.empty() && algo != "default") label += " " + algo;
    if (!proto.empty() && proto != "default") label += "/" + proto;
    if (channels > 0) label += fmt::format(" {} ch", channels);
    json entry = {{"label", label}, {"points", std::move(list)}, {"fit", nullptr}};
    if (auto it = fit_curves.find(key); it != fit_curves.end()) entry["fit"] = it->second;
    if (!by_collective.count(collective)) {
      by_collective[collective] = {{"collective", collective}, {"series", json::array()}};
    }
    by_collective[collective]["series"].push_back(std::move(entry));
  }
  json collectives = json::array();
  for (auto& [name, c] : by_collective) collectives.push_back(std::move(c));
  return collectives;
}

// The GEMM samples per precision with the fitted curves; the fits' rows go to `gemm_rows`.
json profile_gemms(const documents::ProfileView& v, json& gemm_rows) {
  // GEMMs: TFLOP/s against 2mnk per precision, and the fit tflops = peak · flops / (flops + half_flops).
  std::map<std::string, std::vector<std::tuple<double, double, std::string>>> gemm_points;
  for (const auto& s : v.gemms) {
    gemm_points[s.precision].emplace_back(2 * as_double(s.m) * as_double(s.n) * as_double(s.k), s.tflops,
                                          fmt::format("{}×{}×{}", s.m, s.n, s.k));
  }
  std::map<std::string, json> gemm_fit_curves;
  for (const auto& g : v.gemm_fits) {
    gemm_rows.push_back({{"precision", g.precision},
                         {"peak_tflops", g.peak_tflops},
                         {"half_flops", g.half_flops},
                         {"rel_error", g.rel_error},
                         {"samples", as_double(g.samples)}});
    const auto& points = gemm_points[g.precision];
    if (points.empty()) continue;
    double lo = INFINITY, hi = 0;
    for (const auto& p : points) lo = std::min(lo, std::get<0>(p)), hi = std::max(hi, std::get<0>(p));
    const double peak = g.peak_tflops, half = g.half_flops;
    gemm_fit_curves[g.precision] =
        curve(lo, hi, 48, [&](double flops) { return peak * flops / (flops + half); });
  }
  json gemms = json::array();
  for (auto& [precision, points] : gemm_points) {
    if (points.empty()) continue;
    std::sort(points.begin(), points.end());
    json list = json::array();
    for (const auto& [flops, tflops, shape] : points) list.push_back(json::array({flops, tflops, shape}));
    json entry = {{"precision", precision}, {"points", std::move(list)}, {"fit", nullptr}};
    if (auto it = gemm_fit_curves.find(precision); it != gemm_fit_curves.end()) entry["fit"] = it->second;
    gemms.push_back(std::move(entry));
  }
  return gemms;
}

Result<json> profile_section(const json& doc, const std::string& source) {
  LAGOM_TRY(const documents::ProfileView v, documents::read_profile(doc, source));
  json collective_rows = json::array();
  const json collectives = profile_collectives(v, collective_rows);
  json gemm_rows = json::array();
  const json gemms = profile_gemms(v, gemm_rows);
  if (collectives.empty() && gemms.empty()) {
    return make_error(ErrorCode::invalid_input,
                      source + ": fields comm, compute: no collective or GEMM sample to draw");
  }
  const documents::ProfileRun& run = v.run;
  const std::string host = run.host.value_or("");
  json stats = json::array(
      {stat("run", fmt::format("{} ({})", run.id, run.status), run.status == "complete" ? "" : "bad"),
       stat("backend", run.backend), stat("host", host),
       stat("collective samples", std::to_string(v.comm.size())),
       stat("compute samples", std::to_string(v.compute_samples()))});
  if (!v.memory.empty()) {
    // The largest array (docs/profiler.md) of the memory-bandwidth samples (bytes, GB/s).
    std::pair<double, double> best{-INFINITY, -INFINITY};
    for (const auto& m : v.memory) best = std::max(best, std::pair{as_double(m.bytes), m.bw_GBps});
    stats.push_back(stat("memory bandwidth", fmt::format("{:.1f} GB/s", best.second)));
  }
  return json{
      {"kind", "profile"},
      {"heading", host.empty() ? fmt::format("Profile: run {} ({})", run.id, run.backend)
                               : fmt::format("Profile: run {} on {} ({})", run.id, host, run.backend)},
      {"source", source},
      {"stats", std::move(stats)},
      {"collectives", std::move(collectives)},
      {"gemms", std::move(gemms)},
      {"collective_fits", std::move(collective_rows)},
      {"gemm_fits", std::move(gemm_rows)}};
}

// ---- validate -------------------------------------------------------------------------------------

json error_stats_json(const std::string& by, const std::string& name, const documents::ErrorStatsView& s) {
  return {{"by", by},
          {"name", name},
          {"runs", as_double(s.runs)},
          {"failed", as_double(s.failed)},
          {"mape_pct", s.mape_pct},
          {"median_abs_error_pct", s.median_abs_error_pct},
          {"mean_signed_error_pct", s.mean_signed_error_pct},
          {"worst_error_pct", s.worst_error_pct}};
}

Result<json> validate_section(const json& doc, const std::string& source) {
  LAGOM_TRY(const documents::ValidateView v, documents::read_validate(doc, source));
  json runs = json::array();
  json labels = json::array();
  for (const auto& r : v.runs) {
    // A failed run has no prediction, one given in tokens/s may have no measured time: not drawn.
    if (!r.measured_iteration_s || !r.predicted_iteration_s) continue;
    const double measured = *r.measured_iteration_s, predicted = *r.predicted_iteration_s;
    if (!(measured > 0) || !(predicted > 0)) continue;
    runs.push_back(json::array({measured, predicted}));
    labels.push_back(fmt::format("line {}: {} on {} GPUs ({})", r.line, r.model, r.gpus, r.parallel));
  }
  json groups = json::array();
  for (const auto& g : v.groups) groups.push_back(error_stats_json(g.by, g.name, g.stats));
  std::size_t within5 = 0, within10 = 0;
  for (const auto& r : runs) {
    const double error = std::abs(r[1].get<double>() / r[0].get<double>() - 1);
    within5 += error <= 0.05;
    within10 += error <= 0.10;
  }
  const auto share = [&](std::size_t n) {
    return runs.empty() ? std::string("–")
                        : fmt::format("{:.0f}%", 100.0 * static_cast<double>(n) / runs.size());
  };
  const documents::ErrorStatsView& overall = v.overall;
  json stats = json::array({stat("runs", std::to_string(overall.runs)),
                            stat("MAPE", fmt::format("{:.2f}%", overall.mape_pct)),
                            stat("median |error|", fmt::format("{:.2f}%", overall.median_abs_error_pct)),
                            stat("bias", fmt::format("{:+.2f}%", overall.mean_signed_error_pct)),
                            stat("within ±5%", share(within5)), stat("within ±10%", share(within10)),
                            stat("failed", std::to_string(v.failed), v.failed > 0 ? "bad" : ""),
                            stat("passed", v.passed ? "yes" : "no", v.passed ? "good" : "bad")});
  return json{{"kind", "validate"},         {"heading", "Validation: predicted against measured"},
              {"source", source},           {"stats", std::move(stats)},
              {"runs", std::move(runs)},    {"labels", std::move(labels)},
              {"groups", std::move(groups)}};
}

// ---- check ----------------------------------------------------------------------------------------

Result<json> check_section(const json& doc, const std::string& source) {
  LAGOM_TRY(const documents::CheckView v, documents::read_check(doc, source));
  static constexpr std::size_t k_chart_metrics = 60;  // more bars than this do not read as a chart
  const auto nullable = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
  json metrics = json::array();
  std::vector<std::pair<double, std::size_t>> weight;  // |delta| / tolerance: how close to a regression
  for (std::size_t i = 0; i < v.metrics.size(); ++i) {
    const documents::CheckedMetricView& m = v.metrics[i];
    metrics.push_back({{"metric", m.metric},
                       {"better", m.better},
                       {"baseline", nullable(m.baseline)},
                       {"current", nullable(m.current)},
                       {"delta_pct", nullable(m.delta_pct)},
                       {"tolerance_pct", m.tolerance_pct},
                       {"status", m.status}});
    const bool bad = m.status == "regressed" || m.status == "missing";
    const double d = m.delta_pct ? std::abs(*m.delta_pct) : 0;
    weight.emplace_back(bad ? INFINITY : d / std::max(m.tolerance_pct, 1e-9), i);
  }
  // The chart: every metric, or the ones nearest to (or past) their tolerance, in the table's order.
  std::stable_sort(weight.begin(), weight.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (weight.size() > k_chart_metrics) weight.resize(k_chart_metrics);
  std::sort(weight.begin(), weight.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  json chart = json::array();
  for (const auto& [w, i] : weight) {
    json m = metrics[i];
    if (m["delta_pct"].is_null()) m["delta_pct"] = 0;
    chart.push_back(std::move(m));
  }
  const std::string& kind = v.compared;
  json stats =
      json::array({stat("compared", kind + " documents"), stat("metrics", std::to_string(metrics.size())),
                   stat("regressions", std::to_string(v.regressions), v.regressions > 0 ? "bad" : "good"),
                   stat("passed", v.passed ? "yes" : "no", v.passed ? "good" : "bad")});
  return json{{"kind", "check"},
              {"heading", fmt::format("Check: current {} against its baseline", kind)},
              {"source", source},
              {"stats", std::move(stats)},
              {"metrics", std::move(metrics)},
              {"chart", std::move(chart)}};
}

// ---- plan -----------------------------------------------------------------------------------------

// "16 GPUs of dgx-h100", as `lagom plan` names a row.
std::string plan_row_name(const documents::PlanRowView& row) {
  return fmt::format("{} GPUs of {}", row.gpus, row.cluster);
}

std::string days_text(double s) {
  return s >= 2 * 86400 ? fmt::format("{:.1f} days", s / 86400) : fmt::format("{:.1f} h", s / 3600);
}

// "20B", "15T": how `lagom plan --tokens` takes them.
std::string tokens_text(double tokens) {
  if (tokens >= 1e12) return fmt::format("{:.4g}T", tokens / 1e12);
  if (tokens >= 1e9) return fmt::format("{:.4g}B", tokens / 1e9);
  if (tokens >= 1e6) return fmt::format("{:.4g}M", tokens / 1e6);
  return fmt::format("{:.0f}", tokens);
}

// A row's cost in the selection's unit (dollars when every feasible row has a price: read_plan checked it).
double plan_cost(const documents::PlanView& v, const documents::PlanRowView& row) {
  return v.selection.by_dollars ? *row.cost_usd : row.gpu_hours;
}

std::string cost_text(const documents::PlanView& v, double cost) {
  return v.selection.by_dollars ? fmt::format("${:.0f}", cost) : fmt::format("{:.0f} GPU-hours", cost);
}

// The feasible rows per cluster, in the document's order: each cluster's points (time to train in days
// against cost), its cost per GPU count and its own time–cost front (the document's `pareto` is over every
// cluster together; one cluster's front says what that cluster alone offers).
json plan_clusters(const documents::PlanView& v) {
  std::vector<std::string> names;
  std::map<std::string, std::vector<std::size_t>> rows_of;
  for (std::size_t i = 0; i < v.rows.size(); ++i) {
    const documents::PlanRowView& row = v.rows[i];
    if (!row.feasible) continue;
    if (!rows_of.count(row.cluster)) names.push_back(row.cluster);
    rows_of[row.cluster].push_back(i);
  }
  json clusters = json::array();
  for (const std::string& name : names) {
    const std::vector<std::size_t>& rows = rows_of[name];
    std::vector<std::pair<double, double>> time_cost;
    json points = json::array();
    for (const std::size_t i : rows) {
      const documents::PlanRowView& row = v.rows[i];
      time_cost.emplace_back(row.wall_s, plan_cost(v, row));
      points.push_back(
          {{"row", i}, {"gpus", row.gpus}, {"days", row.wall_s / 86400}, {"cost", plan_cost(v, row)}});
    }
    json front = json::array();
    for (const std::size_t k : pareto_front(time_cost)) front.push_back(rows[k]);
    clusters.push_back(
        {{"name", name}, {"gpu", v.rows[rows.front()].gpu}, {"points", std::move(points)}, {"front", front}});
  }
  return clusters;
}

// The plans the selection names (chosen first, then the others it names, each once) with the parts of
// their wall time: what goodput costs the plan that would be run.
json plan_goodput(const documents::PlanView& v) {
  const documents::PlanSelectionView& s = v.selection;
  json out = json::array();
  std::vector<std::size_t> seen;
  for (const auto& [role, index] :
       {std::pair{"chosen", s.chosen}, std::pair{"closest", s.closest}, std::pair{"cheapest", s.cheapest},
        std::pair{"fastest", s.fastest}, std::pair{"cheapest within the deadline", s.cheapest_in_deadline},
        std::pair{"fastest within the budget", s.fastest_in_budget}}) {
    if (!index || std::find(seen.begin(), seen.end(), *index) != seen.end()) continue;
    seen.push_back(*index);
    const documents::PlanRowView& row = v.rows[*index];
    const documents::PlanSimulatedView& sim = *row.simulated;
    const documents::PlanGoodputView& g = sim.goodput;
    const auto nullable = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
    out.push_back({{"label", fmt::format("{}: {}", role, plan_row_name(row))},
                   {"row", *index},
                   {"wall_s", row.wall_s},
                   {"useful", g.useful},
                   {"checkpoint", g.checkpoint},
                   {"restart", g.restart},
                   {"lost", g.lost},
                   {"mtbf_s", nullable(sim.failures.mtbf_s)},
                   {"checkpoint_interval_s", nullable(sim.failures.checkpoint_interval_s)},
                   {"checkpoint_write_s", sim.failures.checkpoint_write_s},
                   {"restart_s", sim.failures.restart_s}});
  }
  return out;
}

// A row of the plan's table: every cluster and GPU count, where no strategy runs with its reason.
json plan_table_row(const documents::PlanView& v, std::size_t i) {
  const documents::PlanRowView& row = v.rows[i];
  const documents::PlanSelectionView& s = v.selection;
  std::string marks;
  for (const auto& [mark, index] : {std::pair{"chosen", s.chosen}, std::pair{"cheapest", s.cheapest},
                                    std::pair{"fastest", s.fastest}, std::pair{"closest", s.closest}}) {
    if (index == i) marks += (marks.empty() ? "" : ", ") + std::string(mark);
  }
  if (std::find(s.pareto.begin(), s.pareto.end(), i) != s.pareto.end()) {
    marks += (marks.empty() ? "" : ", ") + std::string("front");
  }
  json r = {{"row", i},
            {"cluster", row.cluster},
            {"gpu", row.gpu},
            {"gpus", row.gpus},
            {"nodes", row.nodes},
            {"strategy", row.simulated ? strategy_label(row.simulated->strategy) : "–"},
            {"step_s", row.simulated ? json(row.simulated->step_mean_s) : json(nullptr)},
            {"days", nullptr},
            {"gpu_hours", nullptr},
            {"cost", nullptr},
            {"useful", row.simulated ? json(row.simulated->goodput.useful) : json(nullptr)},
            {"marks", marks},
            {"why", row.feasible ? "" : row.why}};
  if (row.feasible) {
    r["days"] = row.wall_s / 86400;
    r["gpu_hours"] = row.gpu_hours;
    r["cost"] = plan_cost(v, row);
  }
  return r;
}

Result<json> plan_section(const json& doc, const std::string& source) {
  LAGOM_TRY(const documents::PlanView v, documents::read_plan(doc, source));
  const documents::PlanSelectionView& s = v.selection;
  std::size_t feasible = 0;
  json rows = json::array();
  for (std::size_t i = 0; i < v.rows.size(); ++i) {
    feasible += v.rows[i].feasible ? 1 : 0;
    rows.push_back(plan_table_row(v, i));
  }
  json stats = json::array(
      {stat("rows", fmt::format("{} ({} run)", v.rows.size(), feasible), feasible == 0 ? "bad" : ""),
       stat("strategies evaluated", std::to_string(v.strategies_evaluated))});
  if (v.deadline_s) stats.push_back(stat("deadline", days_text(*v.deadline_s)));
  if (v.budget_usd) stats.push_back(stat("budget", fmt::format("${:.0f}", *v.budget_usd)));
  if (s.chosen) {
    const documents::PlanRowView& c = v.rows[*s.chosen];
    for (json& one :
         json::array({stat("chosen", plan_row_name(c), "good"), stat("time to train", days_text(c.wall_s)),
                      stat("cost", cost_text(v, plan_cost(v, c))),
                      stat("goodput", fmt::format("{:.1f}%", 100 * c.simulated->goodput.useful))})) {
      stats.push_back(std::move(one));
    }
  } else {
    stats.push_back(stat("chosen", "none", "bad"));
  }
  stats.push_back(stat("on the time–cost front", std::to_string(s.pareto.size())));
  json front = json::array();
  for (const std::size_t i : s.pareto) {
    const documents::PlanRowView& row = v.rows[i];
    front.push_back({{"row", i},
                     {"cluster", row.cluster},
                     {"gpus", row.gpus},
                     {"days", row.wall_s / 86400},
                     {"cost", plan_cost(v, row)}});
  }
  return json{{"kind", "plan"},
              {"heading", fmt::format("Plan: {} on {} tokens, global batch {}", v.model,
                                      tokens_text(v.tokens), v.global_batch)},
              {"source", source},
              {"stats", std::move(stats)},
              {"why", s.why},
              {"cost_unit", s.by_dollars ? "usd" : "gpu_hours"},
              {"clusters", plan_clusters(v)},
              {"pareto", std::move(front)},
              {"goodput", plan_goodput(v)},
              {"rows", std::move(rows)}};
}

// JSON inside <script>: "<" written as \u003c so that no "</script>" or "<!--" can end or bend the block.
std::string script_safe_json(const json& value) {
  const std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    if (ch == '<') {
      out += "\\u003c";
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

Result<Kind> detect_kind(const json& doc) {
  // The one detector (documents/kind.h); report draws the kinds it has a section for.
  const auto found = documents::detect(doc);
  if (!found.ok() && (!doc.is_object() || doc.contains(documents::k_version_field))) return found.error();
  switch (found.ok() ? found->kind : documents::Kind::report) {
    case documents::Kind::simulate:
      return Kind::simulate;
    case documents::Kind::explore:
      return Kind::explore;
    case documents::Kind::tune:
    case documents::Kind::lagom_config:
      return Kind::tune;
    case documents::Kind::profile:
      return Kind::profile;
    case documents::Kind::validate:
      return Kind::validate;
    case documents::Kind::check:
      return Kind::check;
    case documents::Kind::plan:
      return Kind::plan;
    default:
      break;
  }
  return make_error(
      ErrorCode::invalid_input,
      "not a document lagom report reads (simulate --json, explore --json, tune --json or "
      "lagom-config.json, profile --json or db export --format json, validate --json, check --json, plan "
      "--json)");
}

Result<json> build_section(const json& document, Kind kind, const std::string& source,
                           const SectionOptions& options) {
  switch (kind) {
    case Kind::simulate:
      return simulate_section(document, source, options);
    case Kind::explore:
      return explore_section(document, source, options);
    case Kind::tune:
      return tune_section(document, source);
    case Kind::profile:
      return profile_section(document, source);
    case Kind::validate:
      return validate_section(document, source);
    case Kind::check:
      return check_section(document, source);
    case Kind::plan:
      return plan_section(document, source);
  }
  return make_error(ErrorCode::invalid_input, source + ": unknown document kind");
}

std::string_view page_template() {
  return k_report_template;
}

std::string render_html(const Page& page, std::string_view chart_library) {
  const json data = {{"title", page.title},
                     {"subtitle", page.subtitle},
                     {"footer", page.footer},
                     {"sections", page.sections}};
  // The markers are replaced in the template's text only, never inside what was inserted (Chart.js or
  // the data may contain anything).
  // A "</script" inside the library would end its <script> block; "<\/script" means the same to JavaScript
  // wherever it can occur (a string, a regular expression, a comment).
  std::string library;
  library.reserve(chart_library.size() + 16);
  for (std::size_t i = 0; i < chart_library.size(); ++i) {
    library += chart_library[i];
    if (chart_library[i] == '<' && i + 8 <= chart_library.size() && chart_library[i + 1] == '/' &&
        std::equal(chart_library.begin() + static_cast<std::ptrdiff_t>(i) + 2,
                   chart_library.begin() + static_cast<std::ptrdiff_t>(i) + 8, "script",
                   [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; })) {
      library += '\\';  // HTML ends a script block at "</script", in any case
    }
  }
  const std::vector<std::pair<std::string_view, std::string>> markers{
      {"@LAGOM_TITLE@", markup_escape(page.title)},
      {"@LAGOM_CHART_JS@", std::move(library)},
      {"@LAGOM_DATA@", script_safe_json(data)}};
  const std::string_view text = page_template();
  std::string out;
  out.reserve(text.size() + chart_library.size() + 1024);
  std::size_t from = 0;
  for (const auto& [marker, value] : markers) {
    const std::size_t where = text.find(marker, from);
    if (where == std::string_view::npos) continue;  // the template is ours: every marker is there once
    out.append(text.substr(from, where - from));
    out += value;
    from = where + marker.size();
  }
  out.append(text.substr(from));
  return out;
}

}  // namespace lagom::report
