// `lagom check --predicted lagom-config.json --db PATH --run ID`: production records (docs/records.md)
// against the times `lagom tune` predicted for its op classes (lagom-config.json ops[]).
//
// Matching: a collective record belongs to the op class of the same collective and communicator shape
// (ranks, nodes) whose size bin holds the record's size in nccl-tests' meaning, and whose own size is
// within a factor k_size_window of the record's. The bins are those `lagom tune` wrote into
// nccl_tuner.conf (search/outputs.cpp: per collective and shape, contiguous bins split at the midpoints
// between the classes' sizes, the first from 0, the last open-ended), so a record is judged against the op
// class whose rule the tuner plugin applied to it; the window keeps a record of another size out of the
// judgement, since the class predicts the time of its own size only (a 1 KiB call against a 94 MB class's
// time reads as −99.9% drift, and `lagom adapt` re-tuned on such records without end). Records outside
// every window are counted as unmatched and reported, never judged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "documents/check_predicted.h"
#include "records/record.h"

namespace lagom::check {

// One op class of lagom-config.json with its size bin and the tuner rule that covers it.
struct OpClassPrediction {
  std::string name, collective, group;
  std::int64_t bytes = 0;  // nccl-tests' size of one call
  int ranks = 0, nodes = 0;
  std::string algo, proto;
  int channels = 0;
  double predicted_time_us = 0;
  std::uint64_t bin_low = 0;              // inclusive
  std::optional<std::uint64_t> bin_high;  // inclusive; none = open-ended
  int rule_line = 0;                      // line of nccl_tuner.conf beside the config; 0 = none there
};

// Reads ops[] of `config_path` and the nccl_tuner.conf beside it (when there is one). invalid_input on a
// file that is not a lagom-config.json (names the field).
Result<std::vector<OpClassPrediction>> read_predictions(const std::string& config_path);
// The same from a lagom-config.json already read (`config_path` names it and finds nccl_tuner.conf).
Result<std::vector<OpClassPrediction>> predictions_from_config(const nlohmann::json& doc,
                                                               const std::string& config_path);

// A record is judged against a class whose size is within this factor of its own, either way: what a
// framework's bucket or shard comes to beside Lagom's modelled size (padding, alignment, the last bucket),
// while a time at 1.25× the size stays within a tolerance's reach of the class's prediction.
inline constexpr double k_size_window = 1.25;

// The index of the op class `record` belongs to, or -1 (p2p, another collective, shape or size).
int match_op_class(const std::vector<OpClassPrediction>& classes, const records::Record& record);

// One op class's verdict.
struct OpClassCheck {
  std::size_t records = 0;
  double measured_time_us = 0;  // median duration of its records
  double delta_pct = 0;         // (measured − predicted) / predicted × 100
  std::string ran;              // algorithm/protocol NCCL ran most often ("" when the records do not say)
  std::string status;           // "ok", "drift", "few records" (< k_min_records), "no records"
};
inline constexpr std::size_t k_min_records = 3;
std::vector<OpClassCheck> check_op_classes(const std::vector<OpClassPrediction>& classes,
                                           const std::vector<records::Record>& records, double tolerance_pct,
                                           std::size_t* unmatched);

// check --predicted's document (documents/check_predicted.h writes it): the run, the tolerance, the counts
// and one entry per op class with its rule, the records judged and the verdict.
documents::CheckPredictedDocument predicted_check_document(const std::string& config_path,
                                                           std::int64_t run_id, double tolerance_pct,
                                                           std::size_t records, std::size_t unmatched,
                                                           const std::vector<OpClassPrediction>& classes,
                                                           const std::vector<OpClassCheck>& checks);
// The same as an aligned table, one row per op class.
std::string predicted_check_table(const std::vector<OpClassPrediction>& classes,
                                  const std::vector<OpClassCheck>& checks);

// "nccl_tuner.conf:<line> <algo>/<proto>/<channels> [<min>..<max>]": the tuner rule of an op class, as
// check --predicted and adapt print it.
std::string rule_text(const OpClassPrediction& prediction);

}  // namespace lagom::check
