// The quantities `lagom plan` reads from its flags: counts with decimal suffixes (15T tokens, 16M batch
// tokens, 2.5M dollars) and durations (60d). Messages name what was wrong, not the flag (the CLI adds it).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace lagom::plan {

// A finite number >= 0 with an optional decimal suffix: K 10^3, M 10^6, B or G 10^9, T 10^12, P 10^15
// ("15T" = 1.5e13, "2.5M", "1e9", "300").
Result<double> parse_quantity(std::string_view text);

// The most tokens a plan takes: 10^16, over 600 times Llama 3's 15.6 trillion; a larger figure is a unit
// mistake (and iteration counts beyond 2^53 would no longer be exact doubles).
inline constexpr double k_max_tokens = 1e16;

// Training tokens: a quantity (parse_quantity) within (0, k_max_tokens].
Result<double> parse_tokens(std::string_view text);

// A duration > 0: a number with a unit s, m (minutes), h, d (days) or w (weeks); a bare number is days
// ("60d", "36h", "2w", "90"). In seconds.
Result<double> parse_duration_s(std::string_view text);

// GPU counts: a list "1024,2048,4096" or a range "256..16384" (its start doubled while within it, and its
// end), each within 1..max_gpus; sorted, without repeats.
Result<std::vector<int>> parse_gpu_counts(std::string_view text, int max_gpus);

// Prices per GPU-hour: "X" for every cluster and "CLUSTER=X" for one (`plan --price`), read in order: the
// last of each kind wins, a named price over the bare one.
struct Prices {
  std::optional<double> all;
  std::map<std::string, double> by_cluster;
  [[nodiscard]] std::optional<double> for_cluster(const std::string& cluster) const;
};
// invalid_input for a price that is no quantity or a CLUSTER that is not one of `clusters`.
Result<Prices> parse_prices(const std::vector<std::string>& prices, const std::vector<std::string>& clusters);

}  // namespace lagom::plan
