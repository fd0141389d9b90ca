#include "core/failure.h"

namespace lagom {

void fail(ErrorCode code, const std::string& message) {
  throw CommandFailed{make_error(code, message)};
}

}  // namespace lagom
