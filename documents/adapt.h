// The `lagom adapt` documents (docs/adapt.md#output): each decision's line (`event`, `op_class`, `message`,
// `data`: the numbers behind it), printed one per line while it follows, and `adapt --once --json`'s document
// (kind "adapt") holding them. adapt/adapt.h takes the decisions; the numbers of each kind of decision are
// one struct here, written into the event's `data`.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/calibration.h"

namespace lagom::documents {

// "start": the op classes followed and the settings.
struct AdaptStartData {
  std::size_t op_classes = 0, window = 0;
  double tolerance_pct = 0;
};
// "window", "drifting", "recovered", "drift": an op class's window median against its prediction.
struct AdaptWindowData {
  double measured_us = 0, predicted_us = 0, delta_pct = 0;
  std::size_t window = 0, records_seen = 0;
};
// "refit": one collective series fitted, with the fit it replaces (none: the model's own price).
// The fit is written as a calibration's collective is (collective_fit_json), without its size range.
struct AdaptRefitData {
  model::CollectiveFit fit;
  std::optional<double> previous_latency_us, previous_bus_bw_GBps;  // both or neither
  bool bandwidth_only = false;                                      // written only when true
};
// "rule": an op class's tuner rule and prediction before and after a re-tune.
struct AdaptRuleData {
  std::string previous_rule, rule;  // "<algo>/<proto>/<channels>"
  double previous_predicted_us = 0, predicted_us = 0;
  std::optional<double> measured_us;  // the fitted window's median, when the class was fitted
};
// "replaced": the files written.
struct AdaptReplacedData {
  std::size_t refits = 0, retunes = 0, records_seen = 0;
};
// "stop": the loop ended on a signal.
struct AdaptStopData {
  std::size_t records = 0, unmatched = 0, retunes = 0;
};

nlohmann::json to_json(const AdaptStartData& data);
nlohmann::json to_json(const AdaptWindowData& data);
nlohmann::json to_json(const AdaptRefitData& data);
nlohmann::json to_json(const AdaptRuleData& data);
nlohmann::json to_json(const AdaptReplacedData& data);
nlohmann::json to_json(const AdaptStopData& data);

// One decision: a line of `adapt --json` (not stamped: a line, not a document) and an entry of `events[]`.
struct AdaptEventRow {
  std::string event;     // the decision's kind: "start", "window", "drift", "refit", ...
  std::string op_class;  // "" when it concerns no one op class
  std::string message;
  nlohmann::json data = nlohmann::json::object();  // one of the writers above, or {}
};
nlohmann::json to_json(const AdaptEventRow& event);

// `adapt --once --json`.
struct AdaptDocument {
  std::string config;  // the folder of the lagom-config.json followed
  std::size_t records = 0, unmatched = 0, retunes = 0;
  std::vector<AdaptEventRow> events;
};
// Stamped with its kind and version.
nlohmann::json to_json(const AdaptDocument& document);

}  // namespace lagom::documents
