// The CUDA executor's loader: opens <build>/lib/liblagom-cuda-kernels.so (kernels/cuda/, built with
// nvcc when LAGOM_ENABLE_CUDA) with dlopen and calls its C ABI (kernels/cuda/cuda_abi.h). Everything
// CUDA stays in that module, so the lagom binary starts without cudart, cuBLAS or NCCL.
// LAGOM_CUDA_KERNELS_LIB, when set, names the module's path instead.
#pragma once

#include <string>

#include "core/error.h"
#include "kernels/overlap_runner.h"
#include "model/overlap_plan.h"

namespace lagom::kernels {

struct CudaRunInfo {
  int devices_used = 0;
  bool emulated = false;  // ranks emulated with streams on one device
  std::string device_name;
  std::string transport;
};

// Number of CUDA devices, or `unavailable` when the module is absent or cannot be loaded.
Result<int> cuda_device_count();

// Runs the benchmark on GPUs. `unavailable` (exit 2) without the module or without a device.
Result<BenchResult> run_cuda(const model::OverlapPlan& plan, const BenchOptions& options, CudaRunInfo& info);

}  // namespace lagom::kernels
