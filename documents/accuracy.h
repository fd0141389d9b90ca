// The validated regimes' table in its JSON form: `lagom validate --json`'s `accuracy` section and
// model/accuracy.json, which scripts/update-accuracy.sh writes from it and the build makes C++ data
// (model/CMakeLists.txt; model::shipped_regimes). docs/validate.md describes the fields.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/accuracy.h"

namespace lagom::documents {

// {"level": 0.9, "regimes": [...]}, and back (errors name `origin` and the field, e.g.
// "t.json: regimes[0].low_ratio: ...").
nlohmann::json regimes_json(const std::vector<model::Regime>& regimes);
Result<std::vector<model::Regime>> parse_regimes(const nlohmann::json& document, const std::string& origin);

}  // namespace lagom::documents
