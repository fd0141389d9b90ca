#include "model/steps.h"

namespace lagom::model {

std::string_view to_string(Phase phase) {
  switch (phase) {
    case Phase::forward:
      return "forward";
    case Phase::backward:
      return "backward";
    case Phase::recompute:
      return "recompute";
  }
  return "forward";
}

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::gemm:
      return "gemm";
    case OpKind::attention:
      return "attention";
    case OpKind::elementwise:
      return "elementwise";
    case OpKind::norm:
      return "norm";
    case OpKind::embedding:
      return "embedding";
    case OpKind::loss:
      return "loss";
    case OpKind::optimizer:
      return "optimizer";
  }
  return "gemm";
}

}  // namespace lagom::model
