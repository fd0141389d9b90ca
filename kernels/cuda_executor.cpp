#include "kernels/cuda_executor.h"

#include <array>
#include <climits>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <unistd.h>

#include <fmt/format.h>

#include "kernels/cuda/cuda_abi.h"

namespace lagom::kernels {

namespace {

constexpr const char* k_module_name = "liblagom-cuda-kernels.so";

struct Module {
  using AbiFn = int (*)();
  using CountFn = int (*)();
  using RunFn = int (*)(const lagom_cuda_request*, lagom_cuda_result*, char*, size_t);
  void* handle = nullptr;
  CountFn device_count = nullptr;
  RunFn run = nullptr;
};

std::string module_path() {
  if (const char* path = std::getenv("LAGOM_CUDA_KERNELS_LIB"); path != nullptr && *path != '\0') return path;
  std::array<char, PATH_MAX> exe{};
  const ssize_t length = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  if (length <= 0) return k_module_name;
  const std::filesystem::path bin(std::string(exe.data(), static_cast<std::size_t>(length)));
  return (bin.parent_path().parent_path() / "lib" / k_module_name).string();
}

// Loaded once per process, kept open (CUDA libraries must not be unloaded while contexts live).
Result<Module> load_module() {
  static Result<Module> loaded = []() -> Result<Module> {
    const std::string path = module_path();
    if (!std::filesystem::exists(path)) {
      return make_error(
          ErrorCode::unavailable,
          fmt::format("the CUDA kernels module {} is not there (build with LAGOM_ENABLE_CUDA=ON)", path));
    }
    Module module;
    module.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (module.handle == nullptr) {
      return make_error(ErrorCode::unavailable, fmt::format("cannot load {}: {}", path, dlerror()));
    }
    auto abi = reinterpret_cast<Module::AbiFn>(dlsym(module.handle, "lagom_cuda_kernels_abi"));
    module.device_count = reinterpret_cast<Module::CountFn>(dlsym(module.handle, "lagom_cuda_device_count"));
    module.run = reinterpret_cast<Module::RunFn>(dlsym(module.handle, "lagom_cuda_run_overlap"));
    if (abi == nullptr || module.device_count == nullptr || module.run == nullptr) {
      return make_error(ErrorCode::unavailable, fmt::format("{} lacks the lagom_cuda_* entry points", path));
    }
    if (abi() != LAGOM_CUDA_KERNELS_ABI) {
      return make_error(ErrorCode::unavailable, fmt::format("{} speaks ABI {}, this lagom needs {}", path,
                                                            abi(), LAGOM_CUDA_KERNELS_ABI));
    }
    return module;
  }();
  return loaded;
}

}  // namespace

Result<int> cuda_device_count() {
  LAGOM_TRY(Module module, load_module());
  return module.device_count();
}

Result<BenchResult> run_cuda(const model::OverlapPlan& plan, const BenchOptions& options, CudaRunInfo& info) {
  LAGOM_TRY(Module module, load_module());
  if (module.device_count() < 1) return make_error(ErrorCode::unavailable, "no CUDA device is visible");
  lagom_cuda_request request{};
  request.kernel = static_cast<int>(plan.request.kernel);
  request.method = static_cast<int>(plan.request.method.kind);
  request.slices = plan.request.method.slices;
  request.ranks = plan.request.ranks;
  request.m = plan.request.m;
  request.n = plan.request.n;
  request.k = plan.request.k;
  request.reps = options.reps;
  request.warmup = options.warmup;
  request.seed = options.seed;
  lagom_cuda_result out{};
  std::array<char, 1024> error{};
  const int rc = module.run(&request, &out, error.data(), error.size());
  if (rc != 0) {
    return make_error(rc == 2 ? ErrorCode::unavailable : ErrorCode::failure, std::string(error.data()));
  }
  BenchResult result;
  result.compute_us = out.compute_us;
  result.gemm_us = out.gemm_us;
  result.reduce_us = out.reduce_us;
  result.comm_us = out.comm_us;
  result.overlapped_us = out.overlapped_us;
  result.max_abs_error = out.max_abs_error;
  result.max_abs_ref = out.max_abs_ref;
  result.rel_error = out.max_abs_ref > 0 ? out.max_abs_error / out.max_abs_ref : out.max_abs_error;
  result.correct = result.rel_error <= options.tolerance;
  derive_overlap_metrics(result);
  info.devices_used = out.devices_used;
  info.emulated = out.emulated != 0;
  info.device_name = out.device_name;
  info.transport = out.transport;
  return result;
}

}  // namespace lagom::kernels
