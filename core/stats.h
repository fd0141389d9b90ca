// Small statistics shared by the profiler's fits, the checks of measured records and validation.
#pragma once

#include <vector>

namespace lagom {

// The median of `values`: the middle one, or the mean of the two middle ones for an even count; 0 for
// none. Linear time (a partial sort of the copy).
[[nodiscard]] double median(std::vector<double> values);

}  // namespace lagom
