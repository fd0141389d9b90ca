#include "model/collective_factors.h"

#include <array>
#include <utility>

namespace lagom::model {

namespace {
constexpr std::array<std::pair<Collective, std::string_view>, 7> k_names{{
    {Collective::allreduce, "allreduce"},
    {Collective::allgather, "allgather"},
    {Collective::reducescatter, "reducescatter"},
    {Collective::alltoall, "alltoall"},
    {Collective::broadcast, "broadcast"},
    {Collective::reduce, "reduce"},
    {Collective::sendrecv, "sendrecv"},
}};
}  // namespace

std::string_view to_string(Collective collective) {
  for (const auto& [c, name] : k_names) {
    if (c == collective) return name;
  }
  return "unknown";
}

std::optional<Collective> parse_collective(std::string_view name) {
  for (const auto& [c, n] : k_names) {
    if (n == name) return c;
  }
  return std::nullopt;
}

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
