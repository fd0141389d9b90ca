#include "plan/busy.h"

#include <algorithm>
#include <utility>

namespace lagom::plan {

namespace {

using Interval = std::pair<double, double>;  // [start, end), microseconds

// The length of the union of intervals.
double covered_us(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0, end = -1e300;
  for (const auto& [a, b] : intervals) {
    if (b <= end) continue;
    total += b - std::max(a, end);
    end = b;
  }
  return total;
}

}  // namespace

BusyFractions busy_fractions(const std::vector<simulator::TimelineEvent>& timeline, double iteration_s,
                             int stages) {
  BusyFractions out;
  if (stages < 1 || iteration_s <= 0) return out;
  const double span_us = iteration_s * 1e6;
  for (int stage = 0; stage < stages; ++stage) {
    std::vector<Interval> compute, links, any;
    for (const simulator::TimelineEvent& e : timeline) {
      if (e.stage != stage || e.category == "bubble" || e.duration_us <= 0) continue;
      const Interval interval{e.start_us, e.start_us + e.duration_us};
      (e.stream == simulator::StreamKind::compute ? compute : links).push_back(interval);
      any.push_back(interval);
    }
    out.compute += covered_us(std::move(compute)) / span_us;
    out.links += covered_us(std::move(links)) / span_us;
    out.any += covered_us(std::move(any)) / span_us;
  }
  const double n = static_cast<double>(stages);
  out.compute = std::min(1.0, out.compute / n);
  out.links = std::min(1.0, out.links / n);
  out.any = std::min(1.0, out.any / n);
  return out;
}

}  // namespace lagom::plan
