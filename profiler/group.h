// The process group a profile runs in: a seam over MPI so that the cpu backend (and a single-GPU nccl
// run started without a launcher) needs no MPI at all. Rank 0 is the one that prints and writes the
// database. Not thread-safe: call from the main thread only (MPI is initialised FUNNELED).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mpi.h>
#include <string>
#include <vector>

#include "core/error.h"

namespace lagom::profiler {

class Group {
 public:
  virtual ~Group() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  // MPI_COMM_WORLD for an MPI group, MPI_COMM_NULL otherwise.
  [[nodiscard]] virtual MPI_Comm comm() const = 0;
  virtual Status barrier() = 0;
  virtual Result<double> max(double value) = 0;
  virtual Result<double> sum(double value) = 0;
  virtual Result<std::int64_t> sum(std::int64_t value) = 0;
  // Every rank's `text`, in rank order, on every rank.
  virtual Result<std::vector<std::string>> allgather(const std::string& text) = 0;
  // Copies `bytes` from `root` to every rank.
  virtual Status broadcast(void* data, std::size_t bytes, int root) = 0;
};

// True when the environment says an MPI launcher started this process (OMPI_COMM_WORLD_SIZE, PMI_SIZE,
// PMIX_RANK or SLURM's PMI variables).
bool under_mpi_launcher();

// A group of one process that never touches MPI.
std::unique_ptr<Group> make_solo_group();
// MPI_COMM_WORLD; initialises MPI (thread level MULTIPLE asked for: the FlashOverlap cases of the overlap
// suite drive MPI from a communication thread, kernels/mpi_executor.h) unless already initialised, and
// finalises it when destroyed if it initialised it. Errors: failure when MPI_Init fails.
Result<std::unique_ptr<Group>> make_mpi_group();

// The MPI library's version string ("Open MPI v4.1.4, ..."), first line only.
std::string mpi_library_version();

// An MPI call's failure as an Error naming the call and MPI's message (never a source file of the build).
Error mpi_error(int code, const char* call);
#define LAGOM_MPI_CHECK(call)                                                                    \
  do {                                                                                           \
    const int lagom_mpi_rc_ = (call);                                                            \
    if (lagom_mpi_rc_ != MPI_SUCCESS) return ::lagom::profiler::mpi_error(lagom_mpi_rc_, #call); \
  } while (0)

}  // namespace lagom::profiler
