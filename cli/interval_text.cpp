#include "cli/interval_text.h"

#include <fmt/format.h>

namespace lagom::cli {

std::string interval_range(const model::PredictionInterval& interval, double predicted, int decimals,
                           double unit) {
  const auto range = interval.of(predicted);
  if (!range) return "-";
  return fmt::format("{:.{}f}–{:.{}f}", range->first / unit, decimals, range->second / unit, decimals);
}

std::string interval_note(const model::PredictionInterval& interval) {
  if (!interval.low_ratio) return fmt::format("# no 90% interval: {}\n", interval.source());
  return fmt::format("# 90% interval (measured ÷ predicted {:.3f}–{:.3f}): {}\n", *interval.low_ratio,
                     *interval.high_ratio, interval.source());
}

}  // namespace lagom::cli
