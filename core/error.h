// Error values shared by every library. Libraries never print or exit: fallible functions return
// Result<T>; only cli/app.cpp maps an Error's code to an exit status (docs/cli.md#exit-codes).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace lagom {

enum class ErrorCode {
  invalid_input,  // a malformed spec, flag value or file: exit 2
  not_found,      // an unknown preset, a missing run or file: exit 2
  unavailable,    // hardware or a library the request needs is absent (no GPU, no NCCL): exit 2
  io,             // a file or database could not be read or written: exit 2
  failure,        // the operation ran and failed (a wrong result, a collective that did not finish): exit 1
  regression,     // `lagom check` found a regression: exit 1
};

// An error with its context chain, rendered as "<context>: <cause>".
struct Error {
  ErrorCode code = ErrorCode::failure;
  std::string message;

  // Prefixes context, e.g. Error{...,"must be a positive integer"}.with_context("layers").
  [[nodiscard]] Error with_context(const std::string& context) const;
};

Error make_error(ErrorCode code, std::string message);

// Minimal std::expected stand-in (g++ 12 has no <expected>): holds a T or an Error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_value(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : m_value(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return std::holds_alternative<T>(m_value); }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] const T& value() const& { return std::get<T>(m_value); }
  [[nodiscard]] T& value() & { return std::get<T>(m_value); }
  [[nodiscard]] T&& value() && { return std::get<T>(std::move(m_value)); }
  [[nodiscard]] const Error& error() const { return std::get<Error>(m_value); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Error> m_value;
};

// Result<void>: success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : m_error(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  [[nodiscard]] bool ok() const { return !m_error.has_value(); }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] const Error& error() const { return *m_error; }

 private:
  std::optional<Error> m_error;
};

// Propagates an error from an expression returning Result/Status: LAGOM_TRY(auto x, parse(...));
#define LAGOM_CONCAT_INNER(a, b) a##b
#define LAGOM_CONCAT(a, b) LAGOM_CONCAT_INNER(a, b)
#define LAGOM_TRY(decl, expr)                                                                      \
  auto LAGOM_CONCAT(lagom_try_, __LINE__) = (expr);                                                \
  if (!LAGOM_CONCAT(lagom_try_, __LINE__).ok()) return LAGOM_CONCAT(lagom_try_, __LINE__).error(); \
  decl = std::move(LAGOM_CONCAT(lagom_try_, __LINE__)).value()
#define LAGOM_TRY_STATUS(expr)                             \
  do {                                                     \
    auto lagom_status_ = (expr);                           \
    if (!lagom_status_.ok()) return lagom_status_.error(); \
  } while (0)

}  // namespace lagom
