// The human form of a prediction's interval (model/accuracy.h): the range beside a figure, and the line that
// says which validated runs it comes from, or why there is none.
#pragma once

#include <string>

#include "model/accuracy.h"

namespace lagom::cli {

// "1.182–1.305": the interval of `predicted` ÷ `unit`, `decimals` after the point; "-" without bounds.
std::string interval_range(const model::PredictionInterval& interval, double predicted, int decimals,
                           double unit = 1.0);
// "# 90% interval: 43 runs (dgxc-h100.csv) of sm90 megatron-core ..." or "# no 90% interval: ...", with a
// newline.
std::string interval_note(const model::PredictionInterval& interval);

}  // namespace lagom::cli
