// The bridge from the profile database to the cost model: reads a complete run's fits (fitting its
// samples on the fly when the run has none stored) and returns them as model::Calibration, the plain
// struct model/ reads. Opens the database read-only: nothing is written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/error.h"
#include "model/calibration.h"

namespace lagom::profiler {

// `run_id` nullopt = the newest complete run (of `host` when given). Errors: not_found (no such file,
// no such run, no complete run), invalid_input (not a Lagom database; the run is incomplete).
Result<model::Calibration> load_calibration(const std::string& db_path,
                                            std::optional<std::int64_t> run_id = {},
                                            const std::optional<std::string>& host = {});

// The `localhost` calibration: this host's complete profile runs (imports excluded), each kind of fit
// (collectives, GEMMs, memory bandwidth, interference) taken from the newest run that has it, so that a
// cpu compute profile and an mpi comm profile together describe the machine. `run_id` of the result is
// the newest run used.
Result<model::Calibration> load_machine_calibration(const std::string& db_path, const std::string& host);

}  // namespace lagom::profiler
