// The nccl backend: loads <dir of lagom>/../lib/liblagom-nccl.so (or $LAGOM_NCCL_MODULE) with dlopen and
// measures through its C ABI (profiler/nccl/lagom_nccl.h): cuBLAS GEMMs per precision, NCCL collectives
// per (algorithm, protocol, channels) configuration, and a GEMM beside a collective. One process per
// GPU; ranks are bootstrapped over the Group (MPI), NCCL_ALGO / NCCL_PROTO / NCCL_MIN_NCHANNELS /
// NCCL_MAX_NCHANNELS are set before each communicator's init and restored afterwards.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/progress.h"
#include "db/database.h"
#include "profiler/group.h"
#include "profiler/profile.h"
#include "profiler/sink.h"

namespace lagom::profiler {

class NcclModule;

// Loads the module. unavailable: built without CUDA, module missing, or ABI mismatch.
Result<std::shared_ptr<NcclModule>> load_nccl_module();

// Number of GPUs the module sees; unavailable "no GPU found (<reason>)" when none or no driver.
Result<int> nccl_gpu_count(NcclModule& module);

// GPU facts for the run's environment (gpu, driver, cuda, nccl versions) of `device`.
Status describe_nccl_device(NcclModule& module, int device, db::Run& run);

// One NCCL configuration forced through the environment ("" = NCCL's own choice).
struct NcclConfig {
  std::string algo;                      // NCCL_ALGO value: "ring", "tree", ...
  std::string proto;                     // NCCL_PROTO value: "simple", "ll", "ll128"
  int channels = 0;                      // NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS; 0 = unset
  std::vector<std::string> collectives;  // measured under this configuration
};
// The configurations a sweep visits (quick: NCCL's default plus a few forced ones).
std::vector<NcclConfig> nccl_configs(const Sweep& sweep, bool quick);

// Runs the requested suites ("compute", "comm", "interference") on `device`.
Status run_nccl_suites(NcclModule& module, Group& group, int device, int nodes, const Sweep& sweep,
                       bool quick, const std::vector<std::string>& suites, SampleSink& sink,
                       Progress& progress);

}  // namespace lagom::profiler
