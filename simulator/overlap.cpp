#include "simulator/overlap.h"

namespace lagom::simulator {

// The overlap plans (model/overlap_plan.h) are not in this build yet: say so instead of pricing anything.
Result<OverlapCost> price_overlap(const OverlapQuery&) {
  return make_error(ErrorCode::unavailable, "tp-overlap: not supported yet in this build (no overlap plans)");
}

}  // namespace lagom::simulator
