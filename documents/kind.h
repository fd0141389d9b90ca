// The kinds of JSON document Lagom writes, and the one detector that tells a document's kind.
//
// Every document a command writes (`--json`, lagom-config.json, a profile export) carries two top-level
// fields, `kind` (the name below) and `version` (an integer, k_version of its kind), written by stamp()
// (docs/cli.md#documents lists them). detect() reads them; for a file written before the fields existed
// (no `version`: "version 0", tests/data/documents/v0/) it tells the kind from the fields only that
// writer wrote. A reader of a kind accepts every version up to its k_version, so a newer Lagom's file is
// refused with a message saying so rather than misread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/enum_table.h"
#include "core/error.h"

namespace lagom::documents {

enum class Kind {
  simulate,         // simulate --json (documents/simulate.h)
  explore,          // explore --json (documents/explore.h)
  tune,             // tune --json (documents/tune.h)
  lagom_config,     // lagom-config.json, written by tune --out and adapt (documents/lagom_config.h)
  model,            // model --json (documents/model.h)
  profile,          // profile --json, db export --format json (documents/profile.h)
  validate,         // validate --json
  calibrate,        // calibrate --json
  check,            // check --json (the kind it compared: `compared`)
  check_predicted,  // check --predicted --json
  adapt,            // adapt --once --json
  bench_overlap,    // bench-overlap --json
  cost,             // cost --json
  presets,          // presets --json (the list; `presets NAME --json` prints a spec file, not a document)
  db_list,          // db list --json
  db_show,          // db show --json
  db_import,        // db import --json
  db_fit,           // db fit --json
  report,           // report --json (what the page holds)
  plan,             // plan --json (documents/plan.h)
};

inline constexpr auto k_kind_names = enum_table<Kind>({
    {Kind::simulate, "simulate"},   {Kind::explore, "explore"},
    {Kind::tune, "tune"},           {Kind::lagom_config, "lagom-config"},
    {Kind::model, "model"},         {Kind::profile, "profile"},
    {Kind::validate, "validate"},   {Kind::calibrate, "calibrate"},
    {Kind::check, "check"},         {Kind::check_predicted, "check-predicted"},
    {Kind::adapt, "adapt"},         {Kind::bench_overlap, "bench-overlap"},
    {Kind::cost, "cost"},           {Kind::presets, "presets"},
    {Kind::db_list, "db-list"},     {Kind::db_show, "db-show"},
    {Kind::db_import, "db-import"}, {Kind::db_fit, "db-fit"},
    {Kind::report, "report"},       {Kind::plan, "plan"},
});
constexpr const auto& enum_names(Kind) {
  return k_kind_names;
}

// Every kind, in the order above.
const std::vector<Kind>& all_kinds();
// The name written in `kind`: "simulate", "lagom-config", "check-predicted", "db-list", ...
std::string_view to_string(Kind kind);
std::optional<Kind> parse_kind(std::string_view name);
// The version this Lagom writes, and the newest it reads, of documents of `kind`. Version 0 is a file
// written before documents carried `kind` and `version`.
int version_of(Kind kind);

// The field names of the envelope.
inline constexpr const char* k_kind_field = "kind";
inline constexpr const char* k_version_field = "version";

// `document` (an object) with `kind` and `version` set.
nlohmann::json stamp(Kind kind, nlohmann::json document);

struct Detected {
  Kind kind = Kind::simulate;
  int version = 0;  // 0: written before documents carried kind and version (told by its fields)
};
// The kind and version of `document`. invalid_input when it is not an object, names an unknown kind, has
// a version newer than this Lagom reads, or (version 0) matches no kind by its fields.
Result<Detected> detect(const nlohmann::json& document);

// invalid_input unless `detected` is one of `accepted`; `what` names the reader ("lagom check").
Status require_kind(const Detected& detected, const std::vector<Kind>& accepted, std::string_view what);

}  // namespace lagom::documents
