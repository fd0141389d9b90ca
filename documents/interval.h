// The `interval` object that simulate, explore, tune and plan documents carry beside a predicted duration
// (model/accuracy.h; docs/model.md "How sure a prediction is").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/accuracy.h"

namespace lagom::documents {

// {level, <field>: [low, high] or null, ..., regime, runs, data, held_out_coverage, source, differs,
// extrapolated, why}: each figure by its field name ("iteration_time_s") and predicted value; regime, runs,
// data and held_out_coverage are null outside every validated regime, `why` says what no measured run
// covers, and `source` is the sentence the human output prints.
nlohmann::json interval_json(const model::PredictionInterval& interval,
                             const std::vector<std::pair<std::string, double>>& figures);

}  // namespace lagom::documents
