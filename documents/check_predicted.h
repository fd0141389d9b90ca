// The `check --predicted --json` document (kind "check-predicted", docs/cli.md#lagom-check): production
// records against the times a lagom-config.json predicted, one entry per op class with the tuner rule
// that covers it, the records judged and the verdict (check/predicted.h judges them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lagom::documents {

// The nccl_tuner.conf rule of an op class: its size bin and knobs.
struct PredictedRule {
  std::optional<int> line;  // of nccl_tuner.conf beside the config; null when it has none
  std::uint64_t min_bytes = 0;
  std::optional<std::uint64_t> max_bytes;  // null: open-ended
  std::string algo, proto;
  int channels = 0;
};

// One entry of `op_classes[]`.
struct PredictedOpClassRow {
  std::string name, collective, group;
  std::int64_t bytes = 0;
  int ranks = 0, nodes = 0;
  PredictedRule rule;
  std::string ran;  // algorithm/protocol NCCL ran most often ("" when the records do not say)
  std::size_t records = 0;
  double predicted_time_us = 0;
  std::optional<double> measured_time_us, delta_pct;  // null without records
  std::string status;                                 // "ok", "drift", "few records", "no records"
};

struct CheckPredictedDocument {
  std::string config;  // the lagom-config.json
  std::int64_t run_id = 0;
  double tolerance_pct = 0;
  std::size_t records = 0, unmatched = 0;
  bool passed = true;  // no op class drifted
  std::vector<PredictedOpClassRow> op_classes;
};

// Stamped with its kind and version.
nlohmann::json to_json(const CheckPredictedDocument& document);

}  // namespace lagom::documents
