#include "core/error.h"

namespace lagom {

Error Error::with_context(const std::string& context) const {
  return Error{code, context + ": " + message};
}

Error make_error(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

}  // namespace lagom
