#include "core/units.h"

#include <algorithm>
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
  auto bad = [&](const std::string& why) {
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
  // A fraction ("1.5G", as format_size writes sizes): its digits, trailing zeros dropped.
  std::string fraction;
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0; ++i)
      fraction += text[i];
    if (fraction.empty()) return bad("not a size (expected digits after the decimal point)");
    while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  }
  std::string suffix;
  for (; i < text.size(); ++i) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  int shift = 0;
  if (!suffix.empty() && suffix != "B") {
    const std::string rest = suffix.substr(1);
    const std::size_t unit = std::string_view("KMGT").find(suffix[0]);
    if (unit == std::string_view::npos || !(rest.empty() || rest == "B" || rest == "IB")) {
      return bad("unknown size suffix (K, M, G or T, powers of 1024, with an optional B or iB)");
    }
    shift = 10 * (static_cast<int>(unit) + 1);
  }
  if (value > (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) >> shift)) {
    return bad("size too large");
  }
  std::uint64_t bytes = value << shift;
  if (!fraction.empty()) {
    // f / 10^n of 2^shift bytes is whole when 5^n divides f (2^shift has no factor 5) and the powers of 2
    // then cover 2^n: f / 5^n · 2^(shift − n).
    const auto n = static_cast<int>(fraction.size());
    if (n > 18) return bad("too many decimals (at most 18)");
    const std::uint64_t f = std::stoull(fraction);
    std::uint64_t five = 1;
    for (int k = 0; k < n; ++k) five *= 5;
    const double approx = (static_cast<double>(value) + std::stod("0." + fraction)) * std::ldexp(1.0, shift);
    const std::string not_whole = fmt::format("{:.6g} bytes is not a whole number of bytes", approx);
    if (f % five != 0) return bad(not_whole);
    std::uint64_t part = f / five;
    if (n > shift) {
      const std::uint64_t two = std::uint64_t{1} << (n - shift);
      if (part % two != 0) return bad(not_whole);
      part /= two;
    } else {
      part <<= (shift - n);
    }
    if (part > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - bytes) {
      return bad("size too large");
    }
    bytes += part;
  }
  return static_cast<std::int64_t>(bytes);
}

std::optional<bool> parse_boolean(std::string_view text) {
  std::string v(text);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v == "on" || v == "true" || v == "yes" || v == "1") return true;
  if (v == "off" || v == "false" || v == "no" || v == "0") return false;
  return std::nullopt;
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
