// nccl-tests conventions for collectives: names, the bus-bandwidth factor, and what "bytes" means.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace lagom::model {

enum class Collective { allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv };

std::string_view to_string(Collective collective);
std::optional<Collective> parse_collective(std::string_view name);

// busbw = algbw × factor (nccl-tests doc/PERFORMANCE.md): allreduce 2(n−1)/n; reducescatter,
// allgather, alltoall (n−1)/n; broadcast, reduce, sendrecv 1.
double busbw_factor(Collective collective, int ranks);

}  // namespace lagom::model
