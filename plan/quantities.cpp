#include "plan/quantities.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace lagom::plan {

namespace {

// The number at the start of `text` and what follows it; nullopt when none or not finite.
std::optional<std::pair<double, std::string_view>> leading_number(std::string_view text) {
  const std::string s(text);
  if (s.empty() || s.front() == ' ' || s.front() == '+') return std::nullopt;
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(s, &used);
  } catch (const std::exception&) {  // std::invalid_argument, std::out_of_range
    return std::nullopt;
  }
  if (!std::isfinite(value)) return std::nullopt;
  return std::pair{value, text.substr(used)};
}

}  // namespace

Result<double> parse_quantity(std::string_view text) {
  constexpr std::array<std::pair<std::string_view, double>, 7> k_suffixes{
      {{"", 1}, {"K", 1e3}, {"M", 1e6}, {"B", 1e9}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}}};
  const auto number = leading_number(text);
  if (number && number->first >= 0) {
    for (const auto& [suffix, scale] : k_suffixes) {
      if (number->second == suffix && std::isfinite(number->first * scale)) return number->first * scale;
    }
  }
  return make_error(
      ErrorCode::invalid_input,
      fmt::format("'{}' is not a number >= 0 with an optional suffix K, M, B (or G), T or P", text));
}

Result<double> parse_tokens(std::string_view text) {
  LAGOM_TRY(const double tokens, parse_quantity(text));
  if (!(tokens > 0) || tokens > k_max_tokens) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{:g} is not within (0, {:g}]", tokens, k_max_tokens));
  }
  return tokens;
}

Result<double> parse_duration_s(std::string_view text) {
  constexpr std::array<std::pair<std::string_view, double>, 6> k_units{
      {{"", 86400}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}, {"w", 604800}}};
  const auto number = leading_number(text);
  if (number && number->first > 0) {
    for (const auto& [unit, scale] : k_units) {
      if (number->second == unit && std::isfinite(number->first * scale)) return number->first * scale;
    }
  }
  return make_error(
      ErrorCode::invalid_input,
      fmt::format("'{}' is not a positive duration such as 60d, 36h, 90m, 2w (a bare number: days)", text));
}

Result<std::vector<int>> parse_gpu_counts(std::string_view text, int max_gpus) {
  auto count = [&](std::string_view part) -> Result<int> {
    const auto number = leading_number(part);
    if (!number || !number->second.empty() || number->first != std::floor(number->first) ||
        number->first < 1 || number->first > max_gpus) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("'{}' is not a GPU count within 1..{}", part, max_gpus));
    }
    return static_cast<int>(number->first);
  };
  std::vector<int> out;
  if (const auto dots = text.find(".."); dots != std::string_view::npos) {
    LAGOM_TRY(const int lo, count(text.substr(0, dots)));
    LAGOM_TRY(const int hi, count(text.substr(dots + 2)));
    if (lo > hi) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("'{}': the range's start exceeds its end", text));
    }
    for (long g = lo; g < hi; g *= 2) out.push_back(static_cast<int>(g));
    out.push_back(hi);
  } else {
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = text.find(',', start);
      LAGOM_TRY(const int g,
                count(text.substr(start, comma == std::string_view::npos ? comma : comma - start)));
      out.push_back(g);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<double> Prices::for_cluster(const std::string& cluster) const {
  const auto it = by_cluster.find(cluster);
  return it != by_cluster.end() ? std::optional<double>(it->second) : all;
}

Result<Prices> parse_prices(const std::vector<std::string>& prices,
                            const std::vector<std::string>& clusters) {
  Prices out;
  for (const std::string& p : prices) {
    const auto eq = p.rfind('=');
    LAGOM_TRY(const double x, parse_quantity(eq == std::string::npos ? p : p.substr(eq + 1)));
    // Each price once: a second one for the same clusters would silently replace the first.
    if (eq == std::string::npos) {
      if (out.all) return make_error(ErrorCode::invalid_input, "the price of every cluster given twice");
      out.all = x;
      continue;
    }
    const std::string name = p.substr(0, eq);
    if (std::find(clusters.begin(), clusters.end(), name) == clusters.end()) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("'{}' is not one of the --cluster names", name));
    }
    if (out.by_cluster.count(name) > 0) {
      return make_error(ErrorCode::invalid_input, fmt::format("the price of '{}' given twice", name));
    }
    out.by_cluster[name] = x;
  }
  return out;
}

}  // namespace lagom::plan
