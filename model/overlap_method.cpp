#include "model/overlap_method.h"

#include <charconv>

#include <fmt/format.h>

namespace lagom::model {

std::string to_string(const OverlapMethod& method) {
  switch (method.kind) {
    case OverlapMethodKind::none:
      return "none";
    case OverlapMethodKind::slice:
      return fmt::format("slice:{}", method.slices);
    case OverlapMethodKind::flash:
      return "flash";
    case OverlapMethodKind::te:
      return "te";
  }
  return "?";
}

Result<OverlapMethod> parse_overlap_method(std::string_view text) {
  if (text == "none" || text == "vanilla") return OverlapMethod{};
  if (text == "flash") return OverlapMethod{OverlapMethodKind::flash, 1};
  if (text == "te") return OverlapMethod{OverlapMethodKind::te, 1};
  if (text.rfind("slice:", 0) == 0) {
    const std::string_view digits = text.substr(6);
    int slices = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), slices);
    const OverlapMethod method{OverlapMethodKind::slice, slices};
    if (ec == std::errc() && end == digits.data() + digits.size() && check_overlap_method(method).ok())
      return method;
  }
  return make_error(ErrorCode::invalid_input,
                    fmt::format("'{}' is not none, slice:K (K from {} to {}), flash or te", text,
                                k_min_slices, k_max_slices));
}

Status check_overlap_method(const OverlapMethod& method) {
  if (method.kind == OverlapMethodKind::slice &&
      (method.slices < k_min_slices || method.slices > k_max_slices)) {
    return make_error(ErrorCode::invalid_input, fmt::format("slice:K needs K from {} to {} (got {})",
                                                            k_min_slices, k_max_slices, method.slices));
  }
  return {};
}

}  // namespace lagom::model
