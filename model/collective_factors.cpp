#include "model/collective_factors.h"

namespace lagom::model {

double busbw_factor(Collective collective, int ranks) {
  const double n = ranks;
  switch (collective) {
    case Collective::allreduce:
      return 2.0 * (n - 1.0) / n;
    case Collective::allgather:
    case Collective::reducescatter:
    case Collective::alltoall:
      return (n - 1.0) / n;
    case Collective::broadcast:
    case Collective::reduce:
    case Collective::sendrecv:
      return 1.0;
  }
  return 1.0;
}

}  // namespace lagom::model
