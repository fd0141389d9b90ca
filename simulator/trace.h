// A simulated iteration as a timeline and as a trace.
//
// Timeline (record_timeline): one TimelineEvent per task of the graph (compute passes with their blocking
// collectives as tp events, every collective and transfer, the optimizer step), and the idle gaps of each
// compute stream, split into "bubble" (no communication of the stage in flight) and "wait for
// communication" (some in flight).
//
// Chrome / Perfetto trace (chrome_trace; the JSON Object Format: {"traceEvents": [...]}, times in
// microseconds): one process per simulated pipeline stage, one thread per stream kind (StreamKind's order
// and names); every timeline event is a complete ("X") event. Opens in ui.perfetto.dev and chrome://tracing.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "simulator/simulator.h"

namespace lagom::simulator {

struct Graph;
class OpClassTable;

// Precondition: `result` was simulated with SimulateOptions::timeline = true.
nlohmann::json chrome_trace(const SimulationResult& result);

// The timeline of `graph` after its engine ran (graph.h; its passes kept their segments), classes named
// from `classes`. Internal to simulator/ (simulate() fills SimulationResult::timeline with it).
std::vector<TimelineEvent> record_timeline(const Graph& graph, const OpClassTable& classes);

}  // namespace lagom::simulator
