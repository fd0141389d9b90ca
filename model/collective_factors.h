// nccl-tests conventions for collectives: names, the bus-bandwidth factor, and what "bytes" means.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/enum_table.h"

namespace lagom::model {

using lagom::to_string;  // the name of every enum with a table (core/enum_table.h)

// Names as nccl-tests' binaries spell them (all_reduce_perf → allreduce). The other maps of collective names:
// NCCL's own ("AllReduce") in records/record.cpp, the CUDA profiler module's calls in
// profiler/nccl/module.cu.
enum class Collective { allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv };
inline constexpr auto k_collective_names = enum_table<Collective>({
    {Collective::allreduce, "allreduce"},
    {Collective::allgather, "allgather"},
    {Collective::reducescatter, "reducescatter"},
    {Collective::alltoall, "alltoall"},
    {Collective::broadcast, "broadcast"},
    {Collective::reduce, "reduce"},
    {Collective::sendrecv, "sendrecv"},
});
constexpr const auto& enum_names(Collective) {
  return k_collective_names;
}
// parse_enum<Collective>, under the name its many readers call.
inline std::optional<Collective> parse_collective(std::string_view name) {
  return k_collective_names.parse(name);
}

// busbw = algbw × factor (nccl-tests doc/PERFORMANCE.md): allreduce 2(n−1)/n; reducescatter,
// allgather, alltoall (n−1)/n; broadcast, reduce, sendrecv 1.
double busbw_factor(Collective collective, int ranks);

}  // namespace lagom::model
