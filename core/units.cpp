#include "core/units.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace lagom::units {

std::optional<double> parse_percentage(std::string_view text) {
  if (!text.empty() && text.back() == '%') text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  const std::string digits(text);
  char* end = nullptr;
  const double pct = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(pct)) return std::nullopt;
  return pct;
}

Result<std::int64_t> parse_size(std::string_view text) {
  const std::string original(text);
  auto bad = [&](const char* why) {
    return make_error(ErrorCode::invalid_input, fmt::format("'{}': {}", original, why));
  };
  if (text.empty()) return bad("empty size");
  if (text.front() == '-') return bad("size must not be negative");
  std::uint64_t value = 0;
  std::size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0; ++i) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return bad("size too large");
    value = value * 10 + digit;
  }
  if (i == 0) return bad("not a size (expected digits with an optional K/M/G/T suffix)");
  std::string suffix;
  for (; i < text.size(); ++i) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  int shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else {
    const char unit = suffix[0];
    const std::string rest = suffix.substr(1);
    if (!(rest.empty() || rest == "B" || rest == "IB")) return bad("unknown size suffix");
    switch (unit) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        return bad("unknown size suffix");
    }
  }
  if (value > (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) >> shift)) {
    return bad("size too large");
  }
  return static_cast<std::int64_t>(value << shift);
}

std::string format_size(std::int64_t bytes) {
  static constexpr const char* k_suffix[] = {"", "K", "M", "G", "T"};
  double v = static_cast<double>(bytes);
  int s = 0;
  while (s < 4 && v >= 1024.0) {
    v /= 1024.0;
    ++s;
  }
  if (v == static_cast<double>(static_cast<std::int64_t>(v))) {
    return fmt::format("{}{}", static_cast<std::int64_t>(v), k_suffix[s]);
  }
  return fmt::format("{:.3g}{}", v, k_suffix[s]);
}

}  // namespace lagom::units
