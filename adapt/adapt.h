// `lagom adapt` (docs/adapt.md): follows the production records a running job writes (docs/records.md),
// keeps a moving window of measured times per op class of the job's lagom-config.json (matched as
// `lagom check --predicted` matches them: check/predicted.h), and when an op class's measured median
// has stayed beyond the tolerance for a whole window, re-fits the collective series of the drifted classes
// from the windows' records (profiler/fit.h, the fitter of `lagom db fit`), re-tunes with the inputs the
// original tune recorded (documents/tune_inputs.h) and the re-fitted collectives, and replaces the config's
// files atomically (documents::write_tune_outputs: every file or none). Every decision is an Event with its
// reason.
//
// The parts are separate so that each is testable without a running job: RecordsFollower (files → new
// records), Adapter (records → decisions, re-tunes), retune (inputs + fits → files).
//
// Thread safety: none; one loop owns each object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/predicted.h"
#include "core/error.h"
#include "documents/tune_inputs.h"
#include "model/calibration.h"
#include "records/record.h"

namespace lagom::adapt {

using check::OpClassPrediction;

// Reads the records files of one folder as they grow: new `*.jsonl` files, lines appended to known files,
// files renamed by the writer's rotation (`<host>-<pid>.<n>.jsonl`, followed by identity: device and inode,
// so a renamed file is neither lost nor read twice), files replaced or truncated (read again from their
// start). A last line without its newline is left for the next poll (the writer is still writing it).
class RecordsFollower {
 public:
  explicit RecordsFollower(std::string dir) : m_dir(std::move(dir)) {}

  struct Batch {
    std::vector<records::Record> records;  // in file order, files in name order
    std::size_t summaries = 0;             // summary lines read (a writer closed its file)
    std::vector<std::string> warnings;     // e.g. a file truncated and read again
  };
  // The complete lines added since the last poll. not_found when the folder does not exist; invalid_input
  // naming file:line and the field for a line that is not a record; io when a file cannot be read.
  Result<Batch> poll();
  // Lines still without their newline, per file (what --once reports as skipped).
  [[nodiscard]] std::size_t partial_lines() const;

 private:
  struct FileState {
    std::string name;
    std::uint64_t offset = 0;  // bytes consumed: up to the end of the last complete line
    std::uint64_t line = 0;    // complete lines consumed
    bool partial = false;      // bytes after `offset` without a newline yet
  };
  std::string m_dir;
  std::map<std::pair<std::uint64_t, std::uint64_t>, FileState> m_files;  // (device, inode) → state
};

struct AdaptOptions {
  double tolerance_pct = 10;  // |measured median − predicted| / predicted beyond which an op class drifts
  std::size_t window = 16;    // records per op class in the moving window (>= k_min_records)
};
// Bounds of the flags (cmd_adapt.cpp checks them at the flag).
inline constexpr std::size_t k_min_window = 4;  // a median of fewer records is one outlier away
inline constexpr std::size_t k_max_window = 100000;

// One decision and its reason. `kind`: "start", "window" (an op class's first full window, with its
// verdict), "drifting" (its median left the tolerance), "recovered" (came back before the drift persisted),
// "drift" (persisted for a whole window: a re-tune follows), "refit" (one collective series fitted), "skip"
// (a series that could not be fitted), "rule" (an op class whose tuner rule or prediction changed),
// "unchanged" (a drift that is no new evidence: nothing written), "replaced" (the files were written: always
// after a re-tune, since the predictions moved even where the rules did not), "failed" (the re-tune failed:
// the old files stay), "stop" (the loop ended on a signal).
struct Event {
  std::string kind;
  std::string op_class;                            // "" when the event concerns no one op class
  std::string message;                             // the decision and why, in words
  nlohmann::json data = nlohmann::json::object();  // the numbers behind it
};

// Re-tunes `inputs` with `refits` replacing the calibration's fits of the same series (collective,
// algorithm, protocol, ranks, nodes, channels; every other fit kept) and writes the outputs into
// `out_dir` atomically (documents::write_tune_outputs). The new config records the merged calibration, so a
// later re-tune starts from it. invalid_input when the inputs no longer describe a strategy that can be
// simulated; io when the files cannot be written (the old ones stay).
Status retune(const documents::TuneInputs& inputs, const std::vector<model::CollectiveFit>& refits,
              const std::string& out_dir);

// The decision loop over records of one config directory (nccl_tuner.conf, lagom-config.json, ...).
class Adapter {
 public:
  // Reads <config_dir>/lagom-config.json (op classes, predictions, tune inputs): invalid_input naming the
  // file and the field when it is not a config `lagom tune` wrote (or one without tune inputs).
  static Result<Adapter> open(const std::string& config_dir, const AdaptOptions& options);

  // Feeds records in order; every decision taken is appended to `events`. A re-tune happens inside the
  // call when a drift has persisted; its failure is an Event ("failed"), not an error, so the loop goes on
  // with the old files (a later drift tries again).
  void feed(const std::vector<records::Record>& records, std::vector<Event>& events);

  [[nodiscard]] const std::vector<OpClassPrediction>& classes() const { return m_classes; }
  [[nodiscard]] std::size_t retunes() const { return m_retunes; }
  [[nodiscard]] std::size_t records_seen() const { return m_seen; }
  [[nodiscard]] std::size_t unmatched() const { return m_unmatched; }

 private:
  Adapter() = default;
  Status load();
  void push(std::size_t index, const records::Record& record, std::vector<Event>& events);
  void adapt(std::vector<Event>& events);
  [[nodiscard]] bool evidence_unchanged(const std::vector<bool>& used) const;
  void remember_evidence();

  struct Window {
    std::deque<records::Record> records;
    std::deque<std::size_t> arrival;  // each record's position in the stream fed (records_seen)
    bool reported = false;            // the first full window was reported
    bool drifting = false;            // the median is beyond the tolerance
    std::size_t since_drift = 0;      // records pushed since it started drifting
    std::size_t drift_start = 0;      // records_seen when it started drifting
  };
  std::string m_dir;
  AdaptOptions m_options;
  documents::TuneInputs m_inputs;
  std::vector<OpClassPrediction> m_classes;
  std::vector<Window> m_windows;
  std::size_t m_retunes = 0, m_seen = 0, m_unmatched = 0;
  // Per op class (by name), its window's median when the config was last written: a drift whose classes
  // all measure what they measured then is no new evidence, and is not written again (hysteresis).
  std::map<std::string, double> m_evidence;
};

// The median duration of a window's records, µs.
double median_duration_us(const std::deque<records::Record>& records);

}  // namespace lagom::adapt
