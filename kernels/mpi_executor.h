// The MPI executor: one rank per MPI process (mpirun -np P). Each step's sends and receives are
// nonblocking (MPI_Isend/MPI_Irecv) and are driven to completion by the rank's communication thread
// (MPI_Testall with a short sleep, so polling does not steal the core the GEMM runs on), while the main
// thread runs the GEMMs. The main thread calls MPI only between runs (barriers, reductions), so the
// thread level needed is MPI_THREAD_SERIALIZED.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "kernels/overlap_runner.h"
#include "model/overlap_plan.h"

namespace lagom::kernels {

// True when this process was started by an MPI launcher (mpirun/mpiexec/srun with PMI) with more than
// one process, judged from the environment the launchers set.
bool launched_by_mpi();

// Initialises MPI for the executor (MPI_Init_thread, at least MPI_THREAD_SERIALIZED) unless already
// initialised, and finalises it on destruction if it initialised it.
class MpiSession {
 public:
  static Result<std::unique_ptr<MpiSession>> start();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  [[nodiscard]] int rank() const { return m_rank; }
  [[nodiscard]] int size() const { return m_size; }

 private:
  MpiSession() = default;
  bool m_owns = false;
  int m_rank = 0;
  int m_size = 1;
};

// Runs the benchmark across MPI_COMM_WORLD; plan.request.ranks must equal its size. Every rank returns
// the same result.
Result<BenchResult> run_mpi(const model::OverlapPlan& plan, const BenchOptions& options);

}  // namespace lagom::kernels
