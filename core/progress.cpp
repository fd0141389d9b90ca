#include "core/progress.h"

namespace lagom {

NullProgress& null_progress() {
  static NullProgress instance;
  return instance;
}

}  // namespace lagom
