#include "core/stats.h"

#include <algorithm>
#include <cstddef>

namespace lagom {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  double m = *middle;
  if (values.size() % 2 == 0) m = (m + *std::max_element(values.begin(), middle)) / 2;
  return m;
}

}  // namespace lagom
