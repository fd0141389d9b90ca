// Chrome / Perfetto trace of a simulated iteration (the JSON Object Format: {"traceEvents": [...]}, times
// in microseconds): one process per simulated pipeline stage, one thread per stream (compute, tp, pp, dp,
// fsdp); compute passes, every collective, the optimizer step and the idle gaps ("bubble", "wait for
// communication") are complete ("X") events. Opens in ui.perfetto.dev and chrome://tracing.
#pragma once

#include <nlohmann/json.hpp>

#include "simulator/simulator.h"

namespace lagom::simulator {

// Precondition: `result` was simulated with SimulateOptions::timeline = true.
nlohmann::json chrome_trace(const SimulationResult& result);

}  // namespace lagom::simulator
