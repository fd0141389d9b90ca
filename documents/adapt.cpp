// The `lagom adapt` event lines and document.
#include "documents/adapt.h"

#include <utility>

#include "documents/kind.h"
#include "documents/tune_inputs.h"

namespace lagom::documents {

nlohmann::json to_json(const AdaptStartData& data) {
  return {{"op_classes", data.op_classes}, {"window", data.window}, {"tolerance_pct", data.tolerance_pct}};
}

nlohmann::json to_json(const AdaptWindowData& data) {
  return {{"measured_us", data.measured_us},
          {"predicted_us", data.predicted_us},
          {"delta_pct", data.delta_pct},
          {"window", data.window},
          {"records_seen", data.records_seen}};
}

nlohmann::json to_json(const AdaptRefitData& data) {
  nlohmann::json out = collective_fit_json(data.fit);
  if (data.previous_latency_us) out["previous_latency_us"] = *data.previous_latency_us;
  if (data.previous_bus_bw_GBps) out["previous_bus_bw_GBps"] = *data.previous_bus_bw_GBps;
  if (data.bandwidth_only) out["bandwidth_only"] = true;
  return out;
}

nlohmann::json to_json(const AdaptRuleData& data) {
  nlohmann::json out = {{"previous_rule", data.previous_rule},
                        {"rule", data.rule},
                        {"previous_predicted_us", data.previous_predicted_us},
                        {"predicted_us", data.predicted_us}};
  if (data.measured_us) out["measured_us"] = *data.measured_us;
  return out;
}

nlohmann::json to_json(const AdaptReplacedData& data) {
  return {{"refits", data.refits}, {"retunes", data.retunes}, {"records_seen", data.records_seen}};
}

nlohmann::json to_json(const AdaptStopData& data) {
  return {{"records", data.records}, {"unmatched", data.unmatched}, {"retunes", data.retunes}};
}

nlohmann::json to_json(const AdaptEventRow& event) {
  return {
      {"event", event.event}, {"op_class", event.op_class}, {"message", event.message}, {"data", event.data}};
}

nlohmann::json to_json(const AdaptDocument& document) {
  nlohmann::json events = nlohmann::json::array();
  for (const auto& e : document.events) events.push_back(to_json(e));
  return stamp(Kind::adapt, {{"config", document.config},
                             {"records", document.records},
                             {"unmatched", document.unmatched},
                             {"retunes", document.retunes},
                             {"events", std::move(events)}});
}

}  // namespace lagom::documents
