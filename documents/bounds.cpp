#include "documents/bounds.h"

#include <fmt/format.h>

namespace lagom::documents {

namespace {

// `value` against its floor, the message saying what the field cannot be.
Result<double> at_least(const FieldReader& r, const std::string& field, double value, double floor,
                        const char* why) {
  if (value < floor) return r.error(field, fmt::format("{:g} {}", value, why));
  return value;
}

constexpr const char* k_negative = "is negative: a time, size, count, memory or rate never is";
constexpr const char* k_below = "% is below -100 %: a quantity that is never negative cannot change by that";

// `read` of the field, or none when it is absent or null.
template <typename Read>
Result<std::optional<double>> optional_of(Read read, const FieldReader& r, const std::string& field) {
  if (!r.has(field)) {
    r.mark(field);
    return std::optional<double>();
  }
  LAGOM_TRY(const double value, read(r, field));
  return std::optional<double>(value);
}

}  // namespace

Result<double> read_quantity(const FieldReader& r, const std::string& field) {
  LAGOM_TRY(const double value, r.finite(field, std::nullopt));
  return at_least(r, field, value, 0, k_negative);
}

Result<std::optional<double>> read_optional_quantity(const FieldReader& r, const std::string& field) {
  return optional_of(read_quantity, r, field);
}

Result<double> read_change_pct(const FieldReader& r, const std::string& field) {
  LAGOM_TRY(const double value, r.finite(field, std::nullopt));
  return at_least(r, field, value, -100, k_below);
}

Result<std::optional<double>> read_optional_change_pct(const FieldReader& r, const std::string& field) {
  return optional_of(read_change_pct, r, field);
}

}  // namespace lagom::documents
