// A command's failure as an exception: how a flag callback (inside CLI11's parse) or a command body ends
// the command with an Error. Only the command frame (cli/app.cpp run_cli) catches it; library code returns
// Result and Status instead. Here rather than in cli/ because the flag adders of inputs/ throw it too.
#pragma once

#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"

namespace lagom {

// Thrown by command callbacks and flag callbacks to end the command with an Error; caught only by the
// command frame (cli/app.cpp run_cli), which maps the error to the exit code.
struct CommandFailed {
  Error error;
};

// Unwraps a Result or throws CommandFailed with its error.
template <typename T>
T unwrap(Result<T> result) {
  if (!result.ok()) throw CommandFailed{result.error()};
  return std::move(result).value();
}
[[noreturn]] void fail(ErrorCode code, const std::string& message);
// The value a library parser made of flag `flag`'s argument, or CommandFailed "<flag>: <the parser's
// message>" (so a bad value ends the command at the flag, before it runs: "lagom: error: --tp-overlap: ...").
template <typename T>
T flag_value(const std::string& flag, Result<T> parsed) {
  if (!parsed.ok()) throw CommandFailed{parsed.error().with_context(flag)};
  return std::move(parsed).value();
}

// `value` of a numeric flag, when within [lo, hi]; otherwise the command fails with
// "<flag>: <value> is not within <lo>..<hi>" (exit 2), at the flag, before anything runs. The one rule of
// every number a flag takes: a NaN is within no bounds and an infinity beyond any finite one, so `nan`,
// `inf` and `-inf` are refused as any value out of range is.
template <typename T>
T bounded(const std::string& flag, T value, T lo, T hi) {
  if (!(value >= lo && value <= hi)) {
    throw CommandFailed{make_error(ErrorCode::invalid_input,
                                   fmt::format("{}: {} is not within {}..{}", flag, value, lo, hi))};
  }
  return value;
}

}  // namespace lagom
