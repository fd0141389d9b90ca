#include "adapt/adapt.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/files.h"
#include "core/json_fields.h"
#include "core/stats.h"
#include "documents/adapt.h"
#include "documents/lagom_config.h"
#include "model/collective_factors.h"
#include "profiler/fit.h"
#include "profiler/production.h"
#include "search/outputs.h"
#include "search/search.h"
#include "simulator/scenario.h"

namespace lagom::adapt {

namespace {

namespace fs = std::filesystem;

constexpr const char* k_config_file = "lagom-config.json";
// The files of a tune that a re-tune replaces (documents::write_tune_outputs writes them).
constexpr std::array<const char*, 3> k_tune_files{"nccl_tuner.conf", "lagom.env", k_config_file};
// Bytes read from one file per poll: a writer far ahead (a file of gigabytes found at start) is read over
// several polls, so one poll's memory stays bounded.
constexpr std::uint64_t k_max_read_bytes = 64ULL << 20;

using SeriesKey = std::tuple<std::string, int, int>;  // collective, ranks, nodes: one network path
SeriesKey series_of(const OpClassPrediction& c) {
  return {c.collective, c.ranks, c.nodes};
}

bool same_fit_series(const model::CollectiveFit& a, const model::CollectiveFit& b) {
  return a.collective == b.collective && a.algo == b.algo && a.proto == b.proto && a.ranks == b.ranks &&
         a.nodes == b.nodes && a.channels == b.channels;
}

std::string fit_series_name(const model::CollectiveFit& f) {
  return fmt::format("{} {}/{} ch {} on {} ranks, {} nodes", f.collective, f.algo.empty() ? "-" : f.algo,
                     f.proto.empty() ? "-" : f.proto, f.channels, f.ranks, f.nodes);
}

std::string rule_name(const OpClassPrediction& c) {
  return fmt::format("{}/{}/{}", c.algo, c.proto, c.channels);
}

}  // namespace

double median_duration_us(const std::deque<records::Record>& records) {
  std::vector<double> values;
  values.reserve(records.size());
  for (const auto& r : records) values.push_back(r.duration_us());
  return median(std::move(values));
}

// ---------------------------------------------------------------------------------------------------

Result<RecordsFollower::Batch> RecordsFollower::poll() {
  std::error_code ec;
  if (!fs::exists(m_dir, ec)) {
    return make_error(ErrorCode::not_found, fmt::format("--watch {}: no such folder", m_dir));
  }
  if (!fs::is_directory(m_dir, ec)) {
    return make_error(ErrorCode::invalid_input, fmt::format("--watch {}: not a folder", m_dir));
  }
  std::vector<fs::path> paths;
  for (fs::directory_iterator it(m_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".jsonl") paths.push_back(it->path());
  }
  if (ec) return make_error(ErrorCode::io, fmt::format("--watch {}: {}", m_dir, ec.message()));
  std::sort(paths.begin(), paths.end());

  Batch batch;
  std::set<std::pair<std::uint64_t, std::uint64_t>> present;
  for (const fs::path& path : paths) {
    struct stat st {};
    // A file renamed or removed since the listing is found again by its identity at the next poll.
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const std::pair<std::uint64_t, std::uint64_t> key{static_cast<std::uint64_t>(st.st_dev),
                                                      static_cast<std::uint64_t>(st.st_ino)};
    present.insert(key);
    FileState& state = m_files[key];
    state.name = path.string();
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size < state.offset) {
      batch.warnings.push_back(
          fmt::format("{}: shorter than what was read ({} < {} bytes): replaced or truncated, read again "
                      "from its start",
                      state.name, size, state.offset));
      state.offset = 0;
      state.line = 0;
    }
    if (size == state.offset) {
      state.partial = false;
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return make_error(ErrorCode::io,
                        fmt::format("{}: cannot be read ({})", state.name, std::strerror(errno)));
    }
    in.seekg(static_cast<std::streamoff>(state.offset));
    std::string text(static_cast<std::size_t>(std::min(size - state.offset, k_max_read_bytes)), '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    const std::size_t last_newline = text.rfind('\n');
    if (last_newline == std::string::npos) {
      state.partial = !text.empty();
      continue;
    }
    std::size_t begin = 0;
    while (begin <= last_newline) {
      const std::size_t end = text.find('\n', begin);
      const std::string_view line(text.data() + begin, end - begin);
      ++state.line;
      const records::ParsedLine parsed = records::parse_record_line(line);
      switch (parsed.type) {
        case records::ParsedLine::Type::record:
          batch.records.push_back(parsed.record);
          break;
        case records::ParsedLine::Type::summary:
          ++batch.summaries;
          break;
        case records::ParsedLine::Type::blank:
          break;
        case records::ParsedLine::Type::error:
          return make_error(ErrorCode::invalid_input,
                            fmt::format("{}:{}: {}", state.name, state.line, parsed.error));
      }
      begin = end + 1;
    }
    state.offset += last_newline + 1;
    state.partial = last_newline + 1 < text.size();
  }
  // Files gone (removed by the writer's rotation limit) are forgotten; their identity may be reused.
  for (auto it = m_files.begin(); it != m_files.end();) {
    it = present.count(it->first) == 0 ? m_files.erase(it) : std::next(it);
  }
  return batch;
}

std::size_t RecordsFollower::partial_lines() const {
  return static_cast<std::size_t>(
      std::count_if(m_files.begin(), m_files.end(), [](const auto& f) { return f.second.partial; }));
}

// ---------------------------------------------------------------------------------------------------

Status retune(const documents::TuneInputs& inputs, const std::vector<model::CollectiveFit>& refits,
              const std::string& out_dir) {
  model::Calibration calibration = inputs.calibration.value_or(model::Calibration{});
  auto& fits = calibration.collectives;
  for (const auto& refit : refits) {
    fits.erase(std::remove_if(fits.begin(), fits.end(),
                              [&](const model::CollectiveFit& f) { return same_fit_series(f, refit); }),
               fits.end());
    fits.push_back(refit);
  }
  LAGOM_TRY(const auto scenario,
            simulator::Scenario::make(inputs.workload, inputs.cluster, inputs.strategy, calibration));
  search::Problem problem;
  problem.workload = &scenario->workload;
  problem.cluster = &scenario->cluster;
  problem.costs = scenario->costs.get();
  problem.space.model = scenario->model.get();
  problem.space.strategy = scenario->strategy;
  problem.space.runtime = inputs.runtime;
  problem.space.pins = inputs.pins;
  problem.space.priority = inputs.priority;
  problem.space.search_nccl_knobs = inputs.search_nccl_knobs;
  problem.space.framework = inputs.framework;
  LAGOM_TRY(const search::TuneResult result, search::run_search(inputs.search, problem));
  search::OutputContext out;
  out.model = inputs.model_name;
  out.cluster = inputs.cluster_name;
  out.strategy = model::to_json(scenario->strategy);
  out.plugin_path = inputs.plugin_path;
  out.out_dir = out_dir;
  // adapt read these files and replaces them: its job (docs/adapt.md); write_tune_outputs still replaces
  // only files Lagom wrote.
  for (const char* name : k_tune_files) files::release_input((fs::path(out_dir) / name).string());
  return documents::write_tune_outputs(problem, result, out);
}

// ---------------------------------------------------------------------------------------------------

Result<Adapter> Adapter::open(const std::string& config_dir, const AdaptOptions& options) {
  Adapter adapter;
  adapter.m_dir = config_dir;
  adapter.m_options = options;
  // Temporaries of a writer killed mid-write (an earlier adapt, a tune): nothing else removes them.
  for (const char* name : k_tune_files)
    files::remove_stale_temporaries((fs::path(config_dir) / name).string());
  LAGOM_TRY_STATUS(adapter.load());
  return adapter;
}

Status Adapter::load() {
  const std::string path = (fs::path(m_dir) / k_config_file).string();
  // One read: the predictions and the tune inputs come from the same version of the file.
  LAGOM_TRY(const nlohmann::json doc, read_json_file(path));
  LAGOM_TRY(m_classes, check::predictions_from_config(doc, path));
  LAGOM_TRY(m_inputs, documents::parse_tune_inputs(doc, "--config " + path));
  m_windows.assign(m_classes.size(), Window{});
  return {};
}

void Adapter::feed(const std::vector<records::Record>& records, std::vector<Event>& events) {
  for (const auto& record : records) {
    ++m_seen;
    const int index = check::match_op_class(m_classes, record);
    if (index < 0) {
      ++m_unmatched;
      continue;
    }
    push(static_cast<std::size_t>(index), record, events);
  }
}

void Adapter::push(std::size_t index, const records::Record& record, std::vector<Event>& events) {
  Window& w = m_windows[index];
  const OpClassPrediction& c = m_classes[index];
  w.records.push_back(record);
  w.arrival.push_back(m_seen);
  if (w.records.size() > m_options.window) {
    w.records.pop_front();
    w.arrival.pop_front();
  }
  if (w.records.size() < m_options.window) return;
  const double measured = median_duration_us(w.records);
  const double delta_pct = (measured - c.predicted_time_us) / c.predicted_time_us * 100;
  const bool beyond = std::abs(delta_pct) > m_options.tolerance_pct;
  const nlohmann::json numbers = documents::to_json(
      documents::AdaptWindowData{measured, c.predicted_time_us, delta_pct, m_options.window, m_seen});
  if (!w.reported) {
    w.reported = true;
    events.push_back(
        {"window", c.name,
         fmt::format("first full window: median {:.1f} µs against {:.1f} µs predicted ({:+.1f}%): {}",
                     measured, c.predicted_time_us, delta_pct,
                     beyond ? "beyond the tolerance" : "within the tolerance"),
         numbers});
  }
  if (beyond && !w.drifting) {
    w.drifting = true;
    w.since_drift = 0;
    w.drift_start = m_seen;
    events.push_back(
        {"drifting", c.name,
         fmt::format("median {:.1f} µs is {:+.1f}% off the {:.1f} µs predicted (tolerance {}%); a "
                     "re-tune follows if it stays off for {} more records",
                     measured, delta_pct, c.predicted_time_us, m_options.tolerance_pct, m_options.window),
         numbers});
    return;
  }
  if (!beyond && w.drifting) {
    w.drifting = false;
    events.push_back(
        {"recovered", c.name,
         fmt::format("median {:.1f} µs is back within {}% of {:.1f} µs before the drift persisted: "
                     "nothing changes",
                     measured, m_options.tolerance_pct, c.predicted_time_us),
         numbers});
    return;
  }
  if (!w.drifting) return;
  if (++w.since_drift == m_options.window) {
    events.push_back(
        {"drift", c.name,
         fmt::format("median {:.1f} µs has stayed {:+.1f}% off the {:.1f} µs predicted for a whole "
                     "window of {} records: re-fit and re-tune",
                     measured, delta_pct, c.predicted_time_us, m_options.window),
         numbers});
  }
  if (w.since_drift >= m_options.window) adapt(events);
}

namespace {

// Re-fits, in `fitted`, the series of `samples` that a line does not meet within half the tolerance,
// as a change of bandwidth; returns their fit_series_name.
std::set<std::string> fit_bandwidth_only(const std::vector<db::CommSample>& samples,
                                         const std::vector<model::CollectiveFit>& old_fits,
                                         double tolerance_pct, model::Calibration& fitted) {
  // A series the job ran at one size only (an op class has one size, and NCCL's records split series by
  // algorithm, protocol and channels) cannot separate latency from bandwidth, and a line through two or
  // three noisy medians can miss one of them by more than the drift it is meant to correct (a negative
  // intercept clamped to 0 bends it). Such a series' drift is read as a change of bandwidth, the link's
  // share of the time: the latency stays the previous fit's (0 without one: the whole time counts as
  // bandwidth), and the bus bandwidth is the median over its sizes of the one that meets each measured
  // median. A line is kept when it meets every size within half the tolerance.
  std::map<std::tuple<std::string, std::string, std::string, int, int, int>,
           std::vector<const db::CommSample*>>
      by_series;
  for (const auto& s : samples)
    by_series[{s.collective, s.algo, s.proto, s.channels, s.ranks, s.nodes}].push_back(&s);
  std::set<std::string> bandwidth_only;  // fit_series_name of the series re-fitted that way
  for (const auto& [key, members] : by_series) {
    const db::CommSample& s = *members.front();
    const auto collective = model::parse_collective(s.collective);
    if (!collective) continue;
    const double factor = model::busbw_factor(*collective, s.ranks);
    model::CollectiveFit probe{s.collective, s.algo, s.proto, s.ranks, s.nodes, s.channels, 0, 0, 0, 0, 0};
    auto line = std::find_if(fitted.collectives.begin(), fitted.collectives.end(),
                             [&](const model::CollectiveFit& f) { return same_fit_series(f, probe); });
    auto time_of = [&](const model::CollectiveFit& f, const db::CommSample& m) {
      return f.latency_us + static_cast<double>(m.bytes) * factor / (1e3 * f.bus_bw_GBps);
    };
    if (line != fitted.collectives.end() &&
        std::all_of(members.begin(), members.end(), [&](const db::CommSample* m) {
          return std::abs(time_of(*line, *m) / m->time_us - 1) * 100 <= tolerance_pct / 2;
        })) {
      continue;
    }
    model::CollectiveFit fit = probe;
    fit.min_bytes = members.front()->bytes;
    fit.max_bytes = members.back()->bytes;
    double fastest = members.front()->time_us;
    for (const auto* m : members) fastest = std::min(fastest, m->time_us);
    const auto old = std::find_if(old_fits.begin(), old_fits.end(),
                                  [&](const model::CollectiveFit& f) { return same_fit_series(f, probe); });
    if (old != old_fits.end() && old->latency_us < fastest / 2) fit.latency_us = old->latency_us;
    std::vector<double> bandwidths;
    for (const auto* m : members) {
      bandwidths.push_back(static_cast<double>(m->bytes) * factor / (1e3 * (m->time_us - fit.latency_us)));
    }
    fit.bus_bw_GBps = median(std::move(bandwidths));
    std::vector<double> errors;
    for (const auto* m : members) errors.push_back(std::abs(time_of(fit, *m) / m->time_us - 1));
    fit.rel_error = median(std::move(errors));
    if (line != fitted.collectives.end()) {
      *line = fit;
    } else {
      fitted.collectives.push_back(fit);
    }
    bandwidth_only.insert(fit_series_name(fit));
  }
  return bandwidth_only;
}

// One "refit" event per re-fitted series, with the fit it replaces.
void refit_events(const std::vector<model::CollectiveFit>& fits,
                  const std::vector<model::CollectiveFit>& old_fits,
                  const std::set<std::string>& bandwidth_only, std::vector<Event>& events) {
  for (const auto& fit : fits) {
    const auto old = std::find_if(old_fits.begin(), old_fits.end(),
                                  [&](const model::CollectiveFit& f) { return same_fit_series(f, fit); });
    documents::AdaptRefitData data;
    data.fit = fit;
    std::string was = "no fit before: the model's own price";
    if (old != old_fits.end()) {
      data.previous_latency_us = old->latency_us;
      data.previous_bus_bw_GBps = old->bus_bw_GBps;
      was = fmt::format("was {:.1f} µs + {:.4g} GB/s", old->latency_us, old->bus_bw_GBps);
    }
    std::string range = fit.min_bytes == fit.max_bytes
                            ? fmt::format("at {} bytes", fit.min_bytes)
                            : fmt::format("from {} to {} bytes", fit.min_bytes, fit.max_bytes);
    if (bandwidth_only.count(fit_series_name(fit)) != 0) {
      range +=
          ", bandwidth only (one size, or a line that missed a size by more than half the tolerance): "
          "latency kept";
      data.bandwidth_only = true;
    }
    events.push_back(
        {"refit", "",
         fmt::format("{}: {:.1f} µs + {:.4g} GB/s bus bandwidth {} ({}; median error {:.1f}%)",
                     fit_series_name(fit), fit.latency_us, fit.bus_bw_GBps, range, was, 100 * fit.rel_error),
         documents::to_json(data)});
  }
}

// Whether every re-fit prices its samples within half the tolerance of the fit the config already holds for
// its series: the records say what the last fit said (the same evidence, or evidence the config's prices
// already meet), so a re-tune would write the same rules again. Such a drift is a class judged against a
// price its records do not run at (the records ran another rule than the class's, or the classes of
// one path disagree): re-tuning cannot bring it closer, and re-writing on it is how a loop oscillates.
bool refits_unchanged(const std::vector<model::CollectiveFit>& refits,
                      const std::vector<model::CollectiveFit>& old_fits,
                      const std::vector<db::CommSample>& samples, double tolerance_pct) {
  return std::all_of(refits.begin(), refits.end(), [&](const model::CollectiveFit& fit) {
    const auto old = std::find_if(old_fits.begin(), old_fits.end(),
                                  [&](const model::CollectiveFit& f) { return same_fit_series(f, fit); });
    if (old == old_fits.end()) return false;
    return std::all_of(samples.begin(), samples.end(), [&](const db::CommSample& s) {
      const model::CollectiveFit probe{
          s.collective, s.algo, s.proto, s.ranks, s.nodes, s.channels, 0, 0, 0, 0, 0};
      return !same_fit_series(probe, fit) ||
             std::abs(profiler::predict_time_us(fit, s.bytes) / profiler::predict_time_us(*old, s.bytes) -
                      1) *
                     100 <=
                 tolerance_pct / 2;
    });
  });
}

// A drift that is no new evidence, and why.
Event unchanged_event(const std::string& why, const AdaptOptions& options) {
  return {"unchanged", "",
          fmt::format("{} (within {}%): a re-tune would write the same rules, so the files stay as they "
                      "are; the windows start again",
                      why, options.tolerance_pct / 2),
          nlohmann::json::object()};
}

// One "rule" event per op class whose rule changed or whose series was re-fitted.
void rule_events(const std::vector<OpClassPrediction>& before, const std::vector<OpClassPrediction>& after,
                 const std::vector<double>& measured, const std::set<SeriesKey>& series,
                 std::vector<Event>& events) {
  for (const auto& now : after) {
    const auto old = std::find_if(before.begin(), before.end(),
                                  [&](const OpClassPrediction& b) { return b.name == now.name; });
    if (old == before.end()) continue;
    const std::size_t i = static_cast<std::size_t>(old - before.begin());
    const bool rule_changed = rule_name(*old) != rule_name(now);
    if (!rule_changed && series.count(series_of(now)) == 0) continue;
    documents::AdaptRuleData data{rule_name(*old), rule_name(now), old->predicted_time_us,
                                  now.predicted_time_us, std::nullopt};
    std::string measured_text;
    if (measured[i] > 0) {
      data.measured_us = measured[i];
      measured_text = fmt::format(", window median {:.1f} µs", measured[i]);
    }
    events.push_back({"rule", now.name,
                      fmt::format("{} {} → {}; predicted {:.1f} → {:.1f} µs{}",
                                  rule_changed ? "rule" : "rule kept", rule_name(*old), rule_name(now),
                                  old->predicted_time_us, now.predicted_time_us, measured_text),
                      documents::to_json(data)});
  }
}

}  // namespace

bool Adapter::evidence_unchanged(const std::vector<bool>& used) const {
  bool any = false;
  for (std::size_t i = 0; i < m_classes.size(); ++i) {
    const Window& w = m_windows[i];
    if (!used[i] || !w.drifting) continue;
    const auto seen = m_evidence.find(m_classes[i].name);
    if (seen == m_evidence.end()) return false;
    if (std::abs(median_duration_us(w.records) / seen->second - 1) * 100 > m_options.tolerance_pct / 2)
      return false;
    any = true;
  }
  return any;
}

void Adapter::remember_evidence() {
  for (std::size_t i = 0; i < m_classes.size(); ++i) {
    const Window& w = m_windows[i];
    if (w.records.size() >= m_options.window) m_evidence[m_classes[i].name] = median_duration_us(w.records);
  }
}

void Adapter::adapt(std::vector<Event>& events) {
  // A series (collective, ranks, nodes: one network path) is re-fitted once one of its op classes has
  // drifted for a whole window, from the windows of its classes that hold only records from after the
  // change: the drifted ones, and others whose full window arrived after the series began to drift. A
  // class with an older window (the job issues its calls in phases) or one that started drifting but not
  // for a whole window yet is waited for, since it would mix old and new, for up to k_patience windows
  // of the drifted class; then it is left out.
  constexpr std::size_t k_patience = 3;
  std::map<SeriesKey, std::size_t> start, longest;  // per series: earliest drift start, longest drift
  for (std::size_t i = 0; i < m_classes.size(); ++i) {
    const Window& w = m_windows[i];
    if (!w.drifting || w.since_drift < m_options.window) continue;
    const SeriesKey key = series_of(m_classes[i]);
    start[key] = start.count(key) != 0 ? std::min(start[key], w.drift_start) : w.drift_start;
    longest[key] = std::max(longest[key], w.since_drift);
  }
  std::set<SeriesKey> series;
  std::vector<bool> used(m_classes.size(), false);
  for (const auto& [key, begun] : start) {
    bool ready = true;
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < m_classes.size(); ++i) {
      const Window& w = m_windows[i];
      if (series_of(m_classes[i]) != key || w.records.empty()) continue;
      const bool persisted = w.drifting && w.since_drift >= m_options.window;
      const bool fresh = w.records.size() >= m_options.window && w.arrival.front() > begun && !w.drifting;
      if (persisted || fresh) {
        members.push_back(i);
      } else if (longest[key] < k_patience * m_options.window) {
        ready = false;
      }
    }
    if (!ready) continue;
    series.insert(key);
    for (const std::size_t i : members) used[i] = true;
  }
  if (series.empty()) return;
  auto reset_series = [&] {
    for (std::size_t i = 0; i < m_classes.size(); ++i) {
      if (series.count(series_of(m_classes[i])) != 0) m_windows[i] = Window{};
    }
  };
  if (evidence_unchanged(used)) {
    events.push_back(unchanged_event(
        "the drifted classes measure what they measured when the config was last written", m_options));
    reset_series();
    return;
  }
  std::vector<records::Record> sample;
  std::vector<double> measured(m_classes.size(), 0.0);  // the fitted windows' medians
  for (std::size_t i = 0; i < m_classes.size(); ++i) {
    if (!used[i]) continue;
    const Window& w = m_windows[i];
    measured[i] = median_duration_us(w.records);
    sample.insert(sample.end(), w.records.begin(), w.records.end());
  }

  const std::vector<db::CommSample> samples = profiler::comm_samples_from_records(sample);
  const profiler::FitOutcome outcome = profiler::fit_run(samples, {}, {});
  model::Calibration fitted = profiler::to_calibration(outcome.fits, 0, "");
  const auto& old_fits =
      m_inputs.calibration ? m_inputs.calibration->collectives : std::vector<model::CollectiveFit>{};
  const std::set<std::string> bandwidth_only =
      fit_bandwidth_only(samples, old_fits, m_options.tolerance_pct, fitted);
  const std::size_t single_size = bandwidth_only.size();
  for (const auto& why : outcome.skipped) {
    if (why.find("distinct sizes") != std::string::npos && single_size > 0) continue;  // fitted above
    events.push_back({"skip", "", "not re-fitted: " + why, nlohmann::json::object()});
  }
  if (!fitted.collectives.empty() &&
      refits_unchanged(fitted.collectives, old_fits, samples, m_options.tolerance_pct)) {
    events.push_back(unchanged_event("the windows re-fit to the prices the config already holds", m_options));
    remember_evidence();
    reset_series();
    return;
  }
  refit_events(fitted.collectives, old_fits, bandwidth_only, events);
  if (fitted.collectives.empty()) {
    events.push_back(
        {"failed", "",
         "no collective series could be re-fitted from the windows: the files stay as they are; the "
         "windows start again",
         nlohmann::json::object()});
    reset_series();
    return;
  }

  const std::vector<OpClassPrediction> before = m_classes;
  const auto evidence_before = m_evidence;
  remember_evidence();
  if (auto status = retune(m_inputs, fitted.collectives, m_dir); !status.ok()) {
    events.push_back({"failed", "", "re-tune failed, the files stay as they are: " + status.error().message,
                      nlohmann::json::object()});
    m_evidence = evidence_before;
    reset_series();
    return;
  }
  if (auto status = load(); !status.ok()) {
    // The files were written by write_tune_outputs itself, so this means someone replaced them meanwhile.
    events.push_back({"failed", "", "the re-tuned config cannot be read back: " + status.error().message,
                      nlohmann::json::object()});
    m_classes = before;
    m_windows.assign(m_classes.size(), Window{});
    return;
  }
  ++m_retunes;
  rule_events(before, m_classes, measured, series, events);
  events.push_back(
      {"replaced", "",
       fmt::format("wrote {} (nccl_tuner.conf, lagom.env, lagom-config.json) with {} re-fitted "
                   "series; re-tune {}",
                   m_dir, fitted.collectives.size(), m_retunes),
       documents::to_json(documents::AdaptReplacedData{fitted.collectives.size(), m_retunes, m_seen})});
}

}  // namespace lagom::adapt
