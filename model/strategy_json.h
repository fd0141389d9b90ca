// Reading a strategy back from the JSON that to_json(Strategy) (model/specs.h) writes: the tune inputs
// that `lagom adapt` re-tunes with (documents/tune_inputs.h) record the strategy that way.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/specs.h"

namespace lagom::model {

// Every field optional, defaulting as Strategy does; unknown fields rejected; invalid_input naming the
// field. to_json(parse_strategy(to_json(s))) == to_json(s) for every strategy.
Result<Strategy> parse_strategy(const nlohmann::json& document, const std::string& origin);

}  // namespace lagom::model
