// Units and their conversions, in one place. Names carry units everywhere else:
// _bytes, _gib (2^30 bytes), _GBps (10^9 bytes/s, nccl-tests' unit), _gbit (10^9 bits/s), _us, _s, _tflops.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"

namespace lagom::units {

inline constexpr double k_kib = 1024.0;
inline constexpr double k_mib = 1024.0 * 1024.0;
inline constexpr double k_gib = 1024.0 * 1024.0 * 1024.0;
inline constexpr double k_giga = 1e9;
inline constexpr double k_tera = 1e12;

// Gbit/s (network links) to GB/s (10^9 bytes/s).
constexpr double gbit_to_GBps(double gbit) {
  return gbit / 8.0;
}
// bytes over GB/s to microseconds.
constexpr double transfer_us(double bytes, double bw_GBps) {
  return bytes / (bw_GBps * 1e3);
}
constexpr double bytes_to_gib(double bytes) {
  return bytes / k_gib;
}

// Parses a byte count: digits with an optional K/M/G/T suffix (powers of 1024, case-insensitive,
// optional trailing 'B' or 'iB'), e.g. "64M", "1G", "4096", and a decimal fraction that comes to whole
// bytes, as format_size writes them ("1.5G", "0.25K"). Negative, empty, overflowing input and a fraction of
// a byte ("1.3K": 1331.2 bytes) are invalid_input errors that say which.
Result<std::int64_t> parse_size(std::string_view text);

// The one vocabulary of booleans a flag or a runs-file cell takes: on/off, true/false, yes/no, 1/0, in any
// case; nullopt for anything else.
std::optional<bool> parse_boolean(std::string_view text);
// What parse_boolean takes, for messages: "on/off, true/false, yes/no or 1/0".
inline constexpr const char* k_boolean_words = "on/off, true/false, yes/no or 1/0";

// Parses one percentage, "10" or "10%": a finite number, nothing else in the text; nullopt otherwise. The
// callers bound it (check: >= 0; check --predicted: 0..1000; adapt: above 0 up to 1000).
std::optional<double> parse_percentage(std::string_view text);

// Renders bytes compactly with a power-of-1024 suffix: 1048576 -> "1M", 1536 -> "1.5K".
std::string format_size(std::int64_t bytes);

}  // namespace lagom::units
