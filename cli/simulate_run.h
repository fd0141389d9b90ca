// `lagom simulate --tokens N`: the run-level figures of `lagom plan` (plan/plan.h plan_run: time to train,
// the p99 step, goodput, GPU-hours and cost, energy per iteration and per run) for the one strategy
// simulated. Kept apart from cmd_simulate.cpp, which calls these four functions.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "plan/plan.h"
#include "simulator/scenario.h"

namespace lagom::cli {

struct SimulateRunFlags {
  std::string tokens;           // --tokens N ("" = no run figures)
  std::optional<double> price;  // --price USD per GPU-hour (else the cluster file's)
};

void add_simulate_run_flags(CLI::App& command, SimulateRunFlags& flags);
// Whether the simulation must record its timeline for the run figures (busy time, energy).
[[nodiscard]] bool wants_run(const SimulateRunFlags& flags);
// The run on `result` (simulated with its timeline), or nullopt without --tokens.
Result<std::optional<plan::PlanRow>> simulate_run(const SimulateRunFlags& flags,
                                                  const simulator::Scenario& scenario,
                                                  const simulator::SimulationResult& result);
// The human lines after simulate's summary.
void print_simulate_run(const plan::PlanRow& run);

}  // namespace lagom::cli
