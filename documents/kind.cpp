#include "documents/kind.h"

#include <array>
#include <functional>
#include <utility>

#include <fmt/format.h>

#include "core/json_fields.h"

namespace lagom::documents {

namespace {

using T = nlohmann::json::value_t;

bool is(const nlohmann::json& doc, const char* key, T type) {
  if (!doc.contains(key)) return false;
  const nlohmann::json& v = doc[key];
  if (type == T::number_float) return v.is_number();  // any number
  return v.type() == type;
}
constexpr T number = T::number_float;

bool has_number(const nlohmann::json& o, const char* key) {
  return o.contains(key) && o[key].is_number();
}
// A measured sample of a profile export: a collective (busbw_GBps, collective, bytes) or a GEMM (tflops,
// m, n, k), at any depth.
bool has_sample(const nlohmann::json& node) {
  if (node.is_object()) {
    if (has_number(node, "busbw_GBps") && node.contains("collective") && has_number(node, "bytes"))
      return true;
    if (has_number(node, "tflops") && has_number(node, "m") && has_number(node, "n") && has_number(node, "k"))
      return true;
    for (const auto& [key, value] : node.items()) {
      if (has_sample(value)) return true;
    }
  } else if (node.is_array()) {
    for (const auto& value : node) {
      if (has_sample(value)) return true;
    }
  }
  return false;
}

// Version 0: the kind from the fields only its writer wrote (the releases before `kind` and `version`;
// tests/data/documents/v0/ holds one file of each). Earlier rules win: a check document named the kind it
// compared in `kind`, so it is told before the kinds it may name.
std::optional<Kind> sniff(const nlohmann::json& doc) {
  const nlohmann::json old_kind = doc.value(k_kind_field, nlohmann::json());
  if (is(doc, "metrics", T::array) && is(doc, "passed", T::boolean) && is(doc, "regressions", number))
    return Kind::check;
  if (old_kind == "predicted" && is(doc, "op_classes", T::array) && is(doc, "passed", T::boolean))
    return Kind::check_predicted;
  if (old_kind == "validate" && is(doc, "runs", T::array) && is(doc, "groups", T::object))
    return Kind::validate;
  if (old_kind == "adapt" && is(doc, "events", T::array)) return Kind::adapt;
  if (is(doc, "iteration_time_s", number) && is(doc, "breakdown_s", T::object)) return Kind::simulate;
  if (is(doc, "results", T::array) && is(doc, "evaluated", number) && is(doc, "simulated", number))
    return Kind::explore;
  if (is(doc, "search", T::string) && is(doc, "predicted_iteration_time_s", number)) {
    // lagom-config.json says the per-process knobs and (since lagom adapt) the tune's inputs.
    if (is(doc, "process", T::object) || is(doc, "tune", T::object)) return Kind::lagom_config;
    return Kind::tune;
  }
  if ((is(doc, "run", T::object) || is(doc, "run_id", number)) && is(doc, "comm", T::array) &&
      is(doc, "compute", T::array))
    return Kind::profile;
  if (has_sample(doc)) return Kind::profile;
  return std::nullopt;
}

}  // namespace

const std::vector<Kind>& all_kinds() {
  static const std::vector<Kind> kinds = [] {
    std::vector<Kind> out;
    for (const auto& [kind, name] : k_kind_names) out.push_back(kind);
    return out;
  }();
  return kinds;
}

std::string_view to_string(Kind kind) {
  return k_kind_names.name(kind);
}

std::optional<Kind> parse_kind(std::string_view name) {
  return k_kind_names.parse(name);
}

int version_of(Kind /*kind*/) {
  // Every kind is at its first version: the fields of docs/cli.md#documents plus `kind` and `version`.
  // A change a reader of an older version would misread bumps its kind's version here.
  return 1;
}

nlohmann::json stamp(Kind kind, nlohmann::json document) {
  document[k_kind_field] = std::string(to_string(kind));
  document[k_version_field] = version_of(kind);
  return document;
}

Result<Detected> detect(const nlohmann::json& document) {
  if (!document.is_object()) {
    return make_error(ErrorCode::invalid_input, "not a Lagom document (expected a JSON object)");
  }
  if (!document.contains(k_version_field)) {
    const auto kind = sniff(document);
    if (!kind) {
      return make_error(ErrorCode::invalid_input,
                        "not a Lagom document (no kind and version, and not a document written before them)");
    }
    return Detected{*kind, 0};
  }
  const FieldReader r(document, "document", "", UnknownFields::ignore);
  LAGOM_TRY(const std::string name, r.string(k_kind_field, std::nullopt));
  const auto kind = parse_kind(name);
  if (!kind) return r.error(k_kind_field, fmt::format("'{}' is not a kind of Lagom document", name));
  LAGOM_TRY(const int version, r.integer(k_version_field, std::nullopt));
  if (version > version_of(*kind)) {
    return r.error(k_version_field, fmt::format("{} {} is newer than this lagom reads ({}): upgrade lagom",
                                                name, version, version_of(*kind)));
  }
  return Detected{*kind, version};
}

Status require_kind(const Detected& detected, const std::vector<Kind>& accepted, std::string_view what) {
  for (const Kind k : accepted) {
    if (k == detected.kind) return {};
  }
  std::string names;
  for (const Kind k : accepted) names += (names.empty() ? "" : ", ") + std::string(to_string(k));
  return make_error(ErrorCode::invalid_input,
                    fmt::format("a {} document; {} reads {}", to_string(detected.kind), what, names));
}

}  // namespace lagom::documents
