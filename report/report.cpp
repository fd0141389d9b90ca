#include "report/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "core/json_fields.h"
#include "core/text.h"
#include "documents/kind.h"
#include "documents/simulate.h"
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
  }
  return "?";
}

namespace {

// The fields a section needs, read by the one field reader (core/json_fields.h) with the first error kept,
// so that a builder reads straight through and reports one precise error at its end ("sim.json:
// results[3].iteration_time_s: must be a finite number"). `path` is where `node` sits in the document.
class Fields {
 public:
  explicit Fields(std::string source) : m_source(std::move(source)) {}

  [[nodiscard]] double number(const json& node, const std::string& path, const char* key) {
    return take(reader(node, path).finite(key, std::nullopt), 0.0);
  }
  // A number that the writer sets to null when it has none (print_json turns NaN into null too).
  [[nodiscard]] json nullable_number(const json& node, const std::string& path, const char* key) {
    const auto value = take(reader(node, path).optional_number(key, true, true), std::optional<double>());
    return value ? json(*value) : json(nullptr);
  }
  [[nodiscard]] std::string text(const json& node, const std::string& path, const char* key) {
    return take(reader(node, path).string(key, std::nullopt), std::string());
  }
  [[nodiscard]] bool boolean(const json& node, const std::string& path, const char* key) {
    return take(reader(node, path).boolean(key, std::nullopt), false);
  }
  [[nodiscard]] const json& array(const json& node, const std::string& path, const char* key) {
    const json* v = take(reader(node, path).array(key), static_cast<const json*>(nullptr));
    return v != nullptr ? *v : empty_array();
  }
  [[nodiscard]] const json& object(const json& node, const std::string& path, const char* key) {
    const auto v = take(reader(node, path).object(key), std::optional<FieldReader>());
    return v ? node.at(key) : empty_object();
  }
  // An element of an array that must be an object.
  [[nodiscard]] bool element(const json& value, const std::string& path) {
    if (value.is_object()) return true;
    if (!m_error) m_error = FieldReader(value, m_source, path).error("", "must be an object");
    return false;
  }
  [[nodiscard]] bool ok() const { return !m_error.has_value(); }
  [[nodiscard]] Error error() const { return *m_error; }

 private:
  static const json& empty_array() {
    static const json a = json::array();
    return a;
  }
  static const json& empty_object() {
    static const json o = json::object();
    return o;
  }
  [[nodiscard]] FieldReader reader(const json& node, const std::string& path) const {
    if (!node.is_object()) return FieldReader(empty_object(), m_source, path.empty() ? "" : path + ".");
    return FieldReader(node, m_source, path.empty() ? "" : path + ".", UnknownFields::ignore);
  }
  // The value, or `fallback` once any read failed (the first error is the one reported).
  template <typename T, typename F>
  T take(Result<F> result, T fallback) {
    if (m_error) return fallback;
    if (!result.ok()) {
      m_error = result.error();
      return fallback;
    }
    return T(std::move(result).value());
  }
  std::string m_source;
  std::optional<Error> m_error;
};

std::string at(const std::string& path, std::size_t i) {
  return fmt::format("{}[{}]", path, i);
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

std::string cluster_text(Fields& f, const json& doc) {
  const json& cluster = f.object(doc, "", "cluster");
  const std::string name = f.text(cluster, "cluster", "name");
  const std::string gpu = f.text(cluster, "cluster", "gpu");
  const double nodes = f.number(cluster, "cluster", "nodes");
  const double per_node = f.number(cluster, "cluster", "gpus_per_node");
  return fmt::format("{} ({} × {} {})", name, nodes, per_node, gpu);
}

// "tp 8 · pp 8 · dp 16 · vpp 2 · mb 1 · recompute selective"; the knobs at their defaults are left out
// (cp, ep 1; sp off; zero 0; recompute none; tp-overlap none) so the label says what sets a strategy apart.
std::string strategy_label(Fields& f, const json& s, const std::string& path) {
  std::string out = fmt::format("tp {} · pp {} · dp {}", f.number(s, path, "tp"), f.number(s, path, "pp"),
                                f.number(s, path, "dp"));
  for (const char* key : {"cp", "ep", "vpp"}) {
    const double v = f.number(s, path, key);
    if (v != 1) out += fmt::format(" · {} {}", key, v);
  }
  if (const double zero = f.number(s, path, "zero"); zero != 0) out += fmt::format(" · zero {}", zero);
  out += fmt::format(" · mb {}", f.number(s, path, "micro_batch"));
  if (const std::string r = f.text(s, path, "recompute"); r != "none") out += " · recompute " + r;
  if (const std::string o = f.text(s, path, "tp_overlap"); o != "none") out += " · tp-overlap " + o;
  return out;
}

json sp_value(const json& s) {
  const json& sp = s.contains("sp") ? s["sp"] : json();
  if (sp.is_boolean()) return sp.get<bool>() ? "on" : "off";
  if (sp.is_number()) return sp.get<double>() != 0 ? "on" : "off";
  return sp.is_string() ? sp : json("?");
}

// ---- simulate -------------------------------------------------------------------------------------

Result<json> simulate_section(const json& doc, const std::string& source, const SectionOptions& options) {
  Fields f(source);
  static constexpr const char* k_phases[] = {"compute", "exposed_comm", "pipeline_bubble", "optimizer"};
  json stages = json::array();
  const json& raw_stages = f.array(doc, "", "stage_breakdown_s");
  for (std::size_t i = 0; i < raw_stages.size() && f.ok(); ++i) {
    const std::string path = at("stage_breakdown_s", i);
    if (!f.element(raw_stages[i], path)) break;
    json stage = json::object();
    for (const char* p : k_phases) stage[p] = f.number(raw_stages[i], path, p);
    stages.push_back(std::move(stage));
  }
  const json& raw_breakdown = f.object(doc, "", "breakdown_s");
  json breakdown = json::object();
  for (const char* p : k_phases) breakdown[p] = f.number(raw_breakdown, "breakdown_s", p);
  const json& raw_memory = f.object(doc, "", "memory_gib_per_gpu");
  json memory = json::object();
  for (const char* p : {"weights", "grads", "optimizer", "activations", "total"}) {
    memory[p] = f.number(raw_memory, "memory_gib_per_gpu", p);
  }
  json ops = json::array();
  const json& raw_ops = f.array(doc, "", "op_classes");
  for (std::size_t i = 0; i < raw_ops.size() && f.ok(); ++i) {
    const std::string path = at("op_classes", i);
    if (!f.element(raw_ops[i], path)) break;
    const json& o = raw_ops[i];
    const double count = f.number(o, path, "count");
    const double time_us = f.number(o, path, "time_us");
    ops.push_back({{"name", f.text(o, path, "name")},
                   {"collective", f.text(o, path, "collective")},
                   {"group", f.text(o, path, "group")},
                   {"bytes", f.number(o, path, "bytes")},
                   {"ranks", f.number(o, path, "ranks")},
                   {"nodes", f.number(o, path, "nodes")},
                   {"count", count},
                   {"time_us", time_us},
                   {"total_ms", count * time_us * 1e-3}});
  }
  std::stable_sort(ops.begin(), ops.end(), [](const json& a, const json& b) {
    return a["total_ms"].get<double>() > b["total_ms"].get<double>();
  });
  const double iteration = f.number(doc, "", "iteration_time_s");
  const double tokens = f.number(doc, "", "tokens_per_s");
  const double mfu = f.number(doc, "", "mfu");
  const double tflops = f.number(doc, "", "model_tflops_per_gpu");
  const bool fits = f.boolean(doc, "", "fits_in_memory");
  // What fits_in_memory was judged against: the usable memory less the reserve (documents from before
  // the reserve have no budget; then the GPU's capacity is all there is to show).
  std::optional<double> budget;
  if (doc.contains("memory_budget_gib")) budget = f.number(doc, "", "memory_budget_gib");
  const std::string model = f.text(doc, "", "model");
  const std::string cluster = cluster_text(f, doc);
  const json& strategy = f.object(doc, "", "strategy");
  const std::string label = strategy_label(f, strategy, "strategy");
  const double gpus = f.number(strategy, "strategy", "gpus");
  const std::string gpu = f.text(f.object(doc, "", "cluster"), "cluster", "gpu");
  if (!f.ok()) return f.error();
  if (stages.empty()) {
    return make_error(ErrorCode::invalid_input, source + ": stage_breakdown_s: no stage");
  }
  // An op class's count sums the calls of every pipeline stage, so its total is the time of all stages
  // together (8 stages' TP all-reduces add up to 16 s in a 20 s iteration); a GPU runs one stage's share,
  // and the mean over the stages is what compares with the iteration.
  for (json& op : ops) op["stage_ms"] = op["total_ms"].get<double>() / static_cast<double>(stages.size());
  const double total = memory["total"].get<double>();
  if (budget && *budget <= 0) {
    return make_error(ErrorCode::invalid_input, source + ": memory_budget_gib: must be a positive number");
  }
  std::string memory_text = fmt::format("{:.1f} GiB", total);
  if (budget)
    memory_text = fmt::format("{:.1f} of {:.1f} GiB budget", total, *budget);
  else if (options.gpu_memory_gib)
    memory_text = fmt::format("{:.1f} of {:.0f} GiB", total, *options.gpu_memory_gib);
  json stats = json::array(
      {stat("iteration", seconds_text(iteration)), stat("tokens/s", fmt::format("{:.0f}", tokens)),
       stat("model TFLOP/s per GPU", fmt::format("{:.1f}", tflops)),
       stat("MFU", fmt::format("{:.1f}%", 100 * mfu)), stat("memory per GPU", memory_text, fits ? "" : "bad"),
       stat("fits in memory", fits ? "yes" : "no", fits ? "good" : "bad")});
  return json{{"kind", "simulate"},
              {"heading", fmt::format("Simulation: {} on {:.0f} GPUs of {}", model, gpus, cluster)},
              {"source", fmt::format("{} · {}", source, label)},
              {"stats", std::move(stats)},
              {"stages", std::move(stages)},
              {"breakdown_s", std::move(breakdown)},
              {"memory_gib", std::move(memory)},
              {"capacity_gib", options.gpu_memory_gib ? json(*options.gpu_memory_gib) : json(nullptr)},
              {"budget_gib", budget ? json(*budget) : json(nullptr)},
              {"gpu", gpu},
              {"fits_in_memory", fits},
              {"op_classes", std::move(ops)}};
}

// ---- explore --------------------------------------------------------------------------------------

// The strategies no other beats on both iteration time and memory per GPU, ordered by time: sorted by
// time (then memory), a point is on the front when its memory is below every faster point's.
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

Result<json> explore_section(const json& doc, const std::string& source, const SectionOptions& options) {
  Fields f(source);
  const json& results = f.array(doc, "", "results");
  std::vector<std::pair<double, double>> points;
  json point_list = json::array();
  json labels = json::array();
  json rows = json::array();
  for (std::size_t i = 0; i < results.size() && f.ok(); ++i) {
    const std::string path = at("results", i);
    if (!f.element(results[i], path)) break;
    const json& r = results[i];
    const double time = f.number(r, path, "iteration_time_s");
    const double memory = f.number(r, path, "memory_gib_per_gpu_total");
    const double tokens = f.number(r, path, "tokens_per_s");
    const double mfu = f.number(r, path, "mfu");
    const std::string spath = path + ".strategy";
    const json& s = f.object(r, path, "strategy");
    labels.push_back(strategy_label(f, s, spath));
    points.emplace_back(time, memory);
    point_list.push_back(json::array({time, memory}));
    if (rows.size() < options.table_rows && f.ok()) {
      rows.push_back({{"rank", i + 1},
                      {"tp", s["tp"]},
                      {"pp", s["pp"]},
                      {"dp", s["dp"]},
                      {"cp", s["cp"]},
                      {"ep", s["ep"]},
                      {"vpp", s["vpp"]},
                      {"sp", sp_value(s)},
                      {"zero", s["zero"]},
                      {"micro_batch", s["micro_batch"]},
                      {"recompute", s["recompute"]},
                      {"tp_overlap", s["tp_overlap"]},
                      {"iteration_time_s", time},
                      {"tokens_per_s", tokens},
                      {"mfu", mfu},
                      {"memory_gib", memory}});
    }
  }
  const std::string model = f.text(doc, "", "model");
  const std::string cluster = cluster_text(f, doc);
  const double gpus = f.number(doc, "", "gpus");
  const double evaluated = f.number(doc, "", "evaluated");
  const double simulated = f.number(doc, "", "simulated");
  const double global_batch = f.number(doc, "", "global_batch");
  if (!f.ok()) return f.error();
  if (points.empty()) {
    return make_error(ErrorCode::invalid_input, source + ": results: no strategy (none fit in memory?)");
  }
  const std::vector<std::size_t> front = pareto_front(points);
  json stats = json::array({stat("strategies evaluated", fmt::format("{:.0f}", evaluated)),
                            stat("simulated", fmt::format("{:.0f}", simulated)),
                            stat("in this document", std::to_string(points.size())),
                            stat("best iteration", seconds_text(points.front().first)),
                            stat("on the Pareto front", std::to_string(front.size()))});
  return json{{"kind", "explore"},
              {"heading", fmt::format("Explore: {} on {:.0f} GPUs of {}, global batch {:.0f}", model, gpus,
                                      cluster, global_batch)},
              {"source", source},
              {"stats", std::move(stats)},
              {"points", std::move(point_list)},
              {"labels", std::move(labels)},
              {"pareto", front},
              {"rows", std::move(rows)}};
}

// ---- tune -----------------------------------------------------------------------------------------

Result<json> tune_section(const json& doc, const std::string& source) {
  Fields f(source);
  json ops = json::array();
  const json& raw = f.array(doc, "", "ops");
  for (std::size_t i = 0; i < raw.size() && f.ok(); ++i) {
    const std::string path = at("ops", i);
    if (!f.element(raw[i], path)) break;
    const json& o = raw[i];
    json op = {{"name", f.text(o, path, "name")},
               {"count", f.number(o, path, "count")},
               {"algo", f.text(o, path, "algo")},
               {"proto", f.text(o, path, "proto")},
               {"channels", f.number(o, path, "channels")},
               {"time_us", f.number(o, path, "predicted_time_us")},
               {"scope", f.text(o, path, "scope")},
               {"default_algo", "–"},
               {"default_channels", nullptr},
               {"default_time_us", nullptr}};
    // Written by tune since `lagom report` exists: older documents have no default and show "–".
    if (o.contains("default")) {
      const json& d = f.object(o, path, "default");
      const std::string dpath = path + ".default";
      op["default_algo"] = f.text(d, dpath, "algo") + "/" + f.text(d, dpath, "proto");
      op["default_channels"] = f.number(d, dpath, "channels");
      op["default_time_us"] = f.number(d, dpath, "time_us");
    }
    ops.push_back(std::move(op));
  }
  const std::string search = f.text(doc, "", "search");
  const std::string runtime = f.text(doc, "", "runtime");
  const double predicted = f.number(doc, "", "predicted_iteration_time_s");
  const double baseline = f.number(doc, "", "baseline_iteration_time_s");
  const double speedup = f.number(doc, "", "speedup");
  const double evaluations = f.number(doc, "", "evaluations");
  // lagom-config.json names the model and cluster; tune --json does not.
  std::string what = "NCCL and overlap knobs";
  if (doc.contains("model") && doc.contains("cluster")) {
    what = fmt::format("{} on {}", f.text(doc, "", "model"), f.text(doc, "", "cluster"));
  }
  if (!f.ok()) return f.error();
  json stats =
      json::array({stat("search", search + " (" + runtime + ")"),
                   stat("NCCL defaults", seconds_text(baseline)), stat("tuned", seconds_text(predicted)),
                   stat("speedup", fmt::format("{:.3f}×", speedup), speedup > 1 ? "good" : ""),
                   stat("evaluations", fmt::format("{:.0f}", evaluations)),
                   stat("op classes", std::to_string(ops.size()))});
  return json{{"kind", "tune"},           {"heading", "Tune: " + what},
              {"source", source},         {"stats", std::move(stats)},
              {"search", search},         {"baseline_s", baseline},
              {"predicted_s", predicted}, {"ops", std::move(ops)}};
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

// The collective series of a profile document (one per collective, algo, proto, channels, ranks and
// nodes), each with its fitted curve; the fits' table rows are appended to `collective_rows`.
json profile_collectives(Fields& f, const json& doc, const json& collective_fits, json& collective_rows) {
  // Collective series: one per (collective, algo, proto, channels, ranks, nodes), out-of-place samples
  // (as the fit takes them; in-place only for a series that has nothing else), failed data checks left out.
  using SeriesKey = std::tuple<std::string, std::string, std::string, double, double, double>;
  struct Series {
    std::vector<std::pair<double, double>> out_of_place, in_place;
  };
  std::map<SeriesKey, Series> series;
  const json& comm = f.array(doc, "", "comm");
  for (std::size_t i = 0; i < comm.size() && f.ok(); ++i) {
    const std::string path = at("comm", i);
    if (!f.element(comm[i], path)) break;
    const json& s = comm[i];
    SeriesKey key{f.text(s, path, "collective"), f.text(s, path, "algo"),    f.text(s, path, "proto"),
                  f.number(s, path, "channels"), f.number(s, path, "ranks"), f.number(s, path, "nodes")};
    const double bytes = f.number(s, path, "bytes");
    const double busbw = f.number(s, path, "busbw_GBps");
    const double wrong = f.number(s, path, "wrong");
    const bool in_place = f.boolean(s, path, "in_place");
    if (wrong > 0 || !(bytes > 0)) continue;
    (in_place ? series[key].in_place : series[key].out_of_place).emplace_back(bytes, busbw);
  }
  std::map<SeriesKey, json> fit_curves;
  for (std::size_t i = 0; i < collective_fits.size() && f.ok(); ++i) {
    const std::string path = at("fits.collectives", i);
    if (!f.element(collective_fits[i], path)) break;
    const json& c = collective_fits[i];
    SeriesKey key{f.text(c, path, "collective"), f.text(c, path, "algo"),    f.text(c, path, "proto"),
                  f.number(c, path, "channels"), f.number(c, path, "ranks"), f.number(c, path, "nodes")};
    const double latency_us = f.number(c, path, "latency_us");
    const double bus_bw = f.number(c, path, "bus_bw_GBps");
    const double lo = f.number(c, path, "min_bytes");
    const double hi = f.number(c, path, "max_bytes");
    std::string name = fmt::format("{} {} ranks", std::get<0>(key), std::get<4>(key));
    if (std::get<5>(key) > 1) name += fmt::format(" on {} nodes", std::get<5>(key));
    for (const std::string& knob : {std::get<1>(key), std::get<2>(key)}) {
      if (!knob.empty() && knob != "default") name += " " + knob;
    }
    if (std::get<3>(key) > 0) name += fmt::format(" {} ch", std::get<3>(key));
    collective_rows.push_back({{"name", name},
                               {"latency_us", latency_us},
                               {"bus_bw_GBps", bus_bw},
                               {"rel_error", f.number(c, path, "rel_error")},
                               {"samples", f.number(c, path, "samples")}});
    const auto collective = model::parse_collective(std::get<0>(key));
    if (!collective || !(bus_bw > 0)) continue;
    // docs/profiler.md#fits: time_us = latency_us + bytes / (bus_bw_GBps / factor · 1e3), and nccl-tests'
    // busbw = factor · bytes / time (bytes per µs / 1e3 = GB/s).
    const double factor = model::busbw_factor(*collective, static_cast<int>(std::get<4>(key)));
    fit_curves[key] = curve(lo, hi, 48, [&](double bytes) {
      const double time_us = latency_us + bytes / (bus_bw / factor * 1e3);
      return factor * bytes / (time_us * 1e3);
    });
  }
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

// The GEMM samples per precision with the fitted curves; the fits' rows go to `gemm_rows`, the memory
// bandwidth samples (bytes, GB/s) to `memory`.
json profile_gemms(Fields& f, const json& doc, const json& gemm_fits, json& gemm_rows,
                   std::vector<std::pair<double, double>>& memory) {
  // GEMMs: TFLOP/s against 2mnk per precision, and the fit tflops = peak · flops / (flops + half_flops).
  std::map<std::string, std::vector<std::tuple<double, double, std::string>>> gemm_points;
  const json& compute = f.array(doc, "", "compute");
  for (std::size_t i = 0; i < compute.size() && f.ok(); ++i) {
    const std::string path = at("compute", i);
    if (!f.element(compute[i], path)) break;
    const json& s = compute[i];
    const std::string kind = f.text(s, path, "kind");
    if (kind == "gemm") {
      const double m = f.number(s, path, "m"), n = f.number(s, path, "n"), k = f.number(s, path, "k");
      gemm_points[f.text(s, path, "precision")].emplace_back(2 * m * n * k, f.number(s, path, "tflops"),
                                                             fmt::format("{}×{}×{}", m, n, k));
    } else {
      memory.emplace_back(f.number(s, path, "bytes"), f.number(s, path, "bw_GBps"));
    }
  }
  std::map<std::string, json> gemm_fit_curves;
  for (std::size_t i = 0; i < gemm_fits.size() && f.ok(); ++i) {
    const std::string path = at("fits.gemms", i);
    if (!f.element(gemm_fits[i], path)) break;
    const json& g = gemm_fits[i];
    const std::string precision = f.text(g, path, "precision");
    const double peak = f.number(g, path, "peak_tflops");
    const double half = f.number(g, path, "half_flops");
    gemm_rows.push_back({{"precision", precision},
                         {"peak_tflops", peak},
                         {"half_flops", half},
                         {"rel_error", f.number(g, path, "rel_error")},
                         {"samples", f.number(g, path, "samples")}});
    const auto& points = gemm_points[precision];
    if (points.empty()) continue;
    double lo = INFINITY, hi = 0;
    for (const auto& p : points) lo = std::min(lo, std::get<0>(p)), hi = std::max(hi, std::get<0>(p));
    gemm_fit_curves[precision] =
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
  Fields f(source);
  // An export holds the run's record (run{id, backend, host, status, ...}); `lagom profile --json` holds
  // run_id, backend and status at the top and no host.
  const bool exported = doc.contains("run");
  const json& run = exported ? f.object(doc, "", "run") : doc;
  const std::string run_path = exported ? "run" : "";
  const double id = f.number(run, run_path, exported ? "id" : "run_id");
  const std::string backend = f.text(run, run_path, "backend");
  const std::string host = exported ? f.text(run, run_path, "host") : "";
  const std::string status = f.text(run, run_path, "status");
  const json& fits = f.object(doc, "", "fits");
  const json& collective_fits = f.array(fits, "fits", "collectives");
  const json& gemm_fits = f.array(fits, "fits", "gemms");

  json collective_rows = json::array();
  const json collectives = profile_collectives(f, doc, collective_fits, collective_rows);
  json gemm_rows = json::array();
  std::vector<std::pair<double, double>> memory;  // (bytes, GB/s) of the memory-bandwidth samples
  const json gemms = profile_gemms(f, doc, gemm_fits, gemm_rows, memory);
  if (!f.ok()) return f.error();
  const json& comm = f.array(doc, "", "comm");
  const json& compute = f.array(doc, "", "compute");
  if (collectives.empty() && gemms.empty()) {
    return make_error(ErrorCode::invalid_input,
                      source + ": fields comm, compute: no collective or GEMM sample to draw");
  }
  json stats = json::array(
      {stat("run", fmt::format("{:.0f} ({})", id, status), status == "complete" ? "" : "bad"),
       stat("backend", backend), stat("host", host), stat("collective samples", std::to_string(comm.size())),
       stat("compute samples", std::to_string(compute.size()))});
  if (!memory.empty()) {
    const auto best = std::max_element(memory.begin(), memory.end());  // the largest array (docs/profiler.md)
    stats.push_back(stat("memory bandwidth", fmt::format("{:.1f} GB/s", best->second)));
  }
  return json{{"kind", "profile"},
              {"heading", host.empty() ? fmt::format("Profile: run {:.0f} ({})", id, backend)
                                       : fmt::format("Profile: run {:.0f} on {} ({})", id, host, backend)},
              {"source", source},
              {"stats", std::move(stats)},
              {"collectives", std::move(collectives)},
              {"gemms", std::move(gemms)},
              {"collective_fits", std::move(collective_rows)},
              {"gemm_fits", std::move(gemm_rows)}};
}

// ---- validate -------------------------------------------------------------------------------------

Result<json> validate_section(const json& doc, const std::string& source) {
  Fields f(source);
  json runs = json::array();
  json labels = json::array();
  const json& raw = f.array(doc, "", "runs");
  for (std::size_t i = 0; i < raw.size() && f.ok(); ++i) {
    const std::string path = at("runs", i);
    if (!f.element(raw[i], path)) break;
    const json& r = raw[i];
    // A failed run has no prediction, one given in tokens/s may have no measured time: not drawn.
    if (!r.contains("predicted_iteration_s") || !r.contains("measured_iteration_s")) continue;
    const double measured = f.number(r, path, "measured_iteration_s");
    const double predicted = f.number(r, path, "predicted_iteration_s");
    if (!(measured > 0) || !(predicted > 0)) continue;
    runs.push_back(json::array({measured, predicted}));
    labels.push_back(fmt::format("line {:.0f}: {} on {:.0f} GPUs ({})", f.number(r, path, "line"),
                                 f.text(r, path, "model"), f.number(r, path, "gpus"),
                                 f.text(r, path, "parallel")));
  }
  json groups = json::array();
  const json& raw_groups = f.object(doc, "", "groups");
  for (const auto& [by, named] : raw_groups.items()) {
    if (!named.is_object()) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("{}: field groups.{}: expected an object", source, by));
    }
    for (const auto& [name, s] : named.items()) {
      const std::string path = fmt::format("groups.{}.{}", by, name);
      if (!f.element(s, path)) break;
      groups.push_back({{"by", by},
                        {"name", name},
                        {"runs", f.number(s, path, "runs")},
                        {"failed", f.number(s, path, "failed")},
                        {"mape_pct", f.number(s, path, "mape_pct")},
                        {"median_abs_error_pct", f.number(s, path, "median_abs_error_pct")},
                        {"mean_signed_error_pct", f.number(s, path, "mean_signed_error_pct")},
                        {"worst_error_pct", f.number(s, path, "worst_error_pct")}});
    }
  }
  const json& overall = f.object(doc, "", "overall");
  const double mape = f.number(overall, "overall", "mape_pct");
  const double bias = f.number(overall, "overall", "mean_signed_error_pct");
  const double median = f.number(overall, "overall", "median_abs_error_pct");
  const double count = f.number(overall, "overall", "runs");
  const double failed = f.number(doc, "", "failed");
  const bool passed = f.boolean(doc, "", "passed");
  if (!f.ok()) return f.error();
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
  json stats = json::array(
      {stat("runs", fmt::format("{:.0f}", count)), stat("MAPE", fmt::format("{:.2f}%", mape)),
       stat("median |error|", fmt::format("{:.2f}%", median)), stat("bias", fmt::format("{:+.2f}%", bias)),
       stat("within ±5%", share(within5)), stat("within ±10%", share(within10)),
       stat("failed", fmt::format("{:.0f}", failed), failed > 0 ? "bad" : ""),
       stat("passed", passed ? "yes" : "no", passed ? "good" : "bad")});
  return json{{"kind", "validate"},         {"heading", "Validation: predicted against measured"},
              {"source", source},           {"stats", std::move(stats)},
              {"runs", std::move(runs)},    {"labels", std::move(labels)},
              {"groups", std::move(groups)}};
}

// ---- check ----------------------------------------------------------------------------------------

Result<json> check_section(const json& doc, const std::string& source) {
  Fields f(source);
  static constexpr std::size_t k_chart_metrics = 60;  // more bars than this do not read as a chart
  json metrics = json::array();
  const json& raw = f.array(doc, "", "metrics");
  std::vector<std::pair<double, std::size_t>> weight;  // |delta| / tolerance: how close to a regression
  for (std::size_t i = 0; i < raw.size() && f.ok(); ++i) {
    const std::string path = at("metrics", i);
    if (!f.element(raw[i], path)) break;
    const json& m = raw[i];
    json delta = f.nullable_number(m, path, "delta_pct");
    const double tolerance = f.number(m, path, "tolerance_pct");
    const std::string status = f.text(m, path, "status");
    metrics.push_back({{"metric", f.text(m, path, "metric")},
                       {"better", f.text(m, path, "better")},
                       {"baseline", f.nullable_number(m, path, "baseline")},
                       {"current", f.nullable_number(m, path, "current")},
                       {"delta_pct", delta},
                       {"tolerance_pct", tolerance},
                       {"status", status}});
    const bool bad = status == "regressed" || status == "missing";
    const double d = delta.is_number() ? std::abs(delta.get<double>()) : 0;
    weight.emplace_back(bad ? INFINITY : d / std::max(tolerance, 1e-9), i);
  }
  // The kind compared: `compared` since check documents carry their own kind, `kind` before (version 0).
  const std::string kind = f.text(doc, "", doc.contains(documents::k_version_field) ? "compared" : "kind");
  const bool passed = f.boolean(doc, "", "passed");
  const double regressions = f.number(doc, "", "regressions");
  if (!f.ok()) return f.error();
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
  json stats =
      json::array({stat("compared", kind + " documents"), stat("metrics", std::to_string(metrics.size())),
                   stat("regressions", fmt::format("{:.0f}", regressions), regressions > 0 ? "bad" : "good"),
                   stat("passed", passed ? "yes" : "no", passed ? "good" : "bad")});
  return json{{"kind", "check"},
              {"heading", fmt::format("Check: current {} against its baseline", kind)},
              {"source", source},
              {"stats", std::move(stats)},
              {"metrics", std::move(metrics)},
              {"chart", std::move(chart)}};
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
    default:
      break;
  }
  return make_error(
      ErrorCode::invalid_input,
      "not a document lagom report reads (simulate --json, explore --json, tune --json or "
      "lagom-config.json, profile --json or db export --format json, validate --json, check --json)");
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
  }
  return make_error(ErrorCode::invalid_input, source + ": unknown document kind");
}

std::string simulated_gpu(const json& doc) {
  return documents::simulated_cluster(doc).gpu;
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
