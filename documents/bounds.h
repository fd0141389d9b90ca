// The bounds of what a document may say it measured or predicted, applied by every reader of documents/
// (read_simulate, read_explore, read_tune, read_profile, read_validate, read_check; read_plan reads its
// quantities with FieldReader's bounded number()): a time, a size, a count, a memory, a rate or a speedup is
// finite and never negative, and a relative change of such a quantity (a delta, a signed error) is never
// below -100 %. An impossible document is refused by its reader, naming the field's path ("<file>:
// op_classes[2].time_us: -3 is negative: ..."), before any command, table or chart uses it.
#pragma once

#include <optional>
#include <string>

#include "core/error.h"
#include "core/json_fields.h"

namespace lagom::documents {

// A finite number >= 0 (required).
Result<double> read_quantity(const FieldReader& r, const std::string& field);
// The same, or none when the field is absent or null (not measured, no prediction).
Result<std::optional<double>> read_optional_quantity(const FieldReader& r, const std::string& field);
// A finite percentage >= -100: the relative change of a quantity (required).
Result<double> read_change_pct(const FieldReader& r, const std::string& field);
// The same, or none when absent or null.
Result<std::optional<double>> read_optional_change_pct(const FieldReader& r, const std::string& field);

}  // namespace lagom::documents
