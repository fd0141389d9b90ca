// The watch loop of `lagom adapt` (without --once): one pass, then a sleep of the poll interval, until
// SIGINT or SIGTERM. The handlers are installed for the loop and the previous ones restored however it ends
// (a pass that throws too); the sleep runs in slices of k_sleep_slice_ms, so a signal ends the loop within
// one slice after the pass under way.
#pragma once

#include <functional>

namespace lagom::adapt {

// The poll interval's bounds: often enough to react within a window of a fast job, rarely enough that an
// idle watcher costs nothing (cmd_adapt.cpp checks them at the flag).
inline constexpr long k_min_interval_ms = 10;
inline constexpr long k_max_interval_ms = 600000;
inline constexpr long k_sleep_slice_ms = 50;

// Calls `pass` every `interval_ms` until a stop signal arrives. Not reentrant (one watch per process).
void watch_until_stopped(long interval_ms, const std::function<void()>& pass);

}  // namespace lagom::adapt
