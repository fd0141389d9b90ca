// The NCCL version a priced output depends on (docs/cli.md#nccl-versions): the release whose defaults the
// cost model emulates picks every collective's algorithm, protocol and channels, so every output that
// prices a collective (cost, simulate, explore, tune, plan) states it, as a '#' line and as an `nccl`
// object.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/specs.h"

namespace lagom::documents {

// {"version": the cluster's nccl_version, or "2.28.9" where it names none, "default": whether it names
// none, "emulated": the release followed ("2.30.7"), "warning" when the version lies outside the emulated
// releases}; null without NCCL.
nlohmann::json nccl_json(bool has_nccl, const std::string& nccl_version);
nlohmann::json nccl_json(const model::ClusterSpec& cluster);
// "2.30 (emulating 2.30.7)", "2.28.9 (the default: the cluster names no nccl_version)", "none (the cluster
// has no NCCL)".
std::string nccl_description(bool has_nccl, const std::string& nccl_version);
// "# nccl: " and the cluster's nccl_description.
std::string nccl_text(const model::ClusterSpec& cluster);

}  // namespace lagom::documents
