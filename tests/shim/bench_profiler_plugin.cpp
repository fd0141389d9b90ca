// bench-profiler-plugin: the NCCL profiler plugin's cost per event, driven through its ABI as NCCL does
// (one Coll start, one Coll stop, and per channel a KernelCh start, a KernelChStop state and a KernelCh
// stop). Prints the median over repetitions of the wall time per event in ns. Not a test: scripts/bench.sh
// runs it. Usage: bench-profiler-plugin LIB_DIR [OPERATIONS] [REPS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "shim/nccl_profiler_abi.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LIB_DIR [OPERATIONS] [REPS]\n", argv[0]);
    return 2;
  }
  const std::string lib = std::string(argv[1]) + "/libnccl-profiler-lagom.so";
  const long operations = argc > 2 ? std::atol(argv[2]) : 200000;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 7;
  const auto dir =
      std::filesystem::temp_directory_path() / ("lagom-bench-profiler-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ::setenv("LAGOM_PROFILE_DIR", dir.c_str(), 1);
  void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", lib.c_str(), dlerror());
    return 2;
  }
  auto* p = static_cast<lagom_nccl_profiler_v5_t*>(dlsym(handle, "ncclProfiler_v5"));
  constexpr int k_channels = 2;
  constexpr int k_events_per_operation = 2 + 3 * k_channels;
  std::vector<double> ns_per_event;
  for (int rep = 0; rep < reps; ++rep) {
    void* comm = nullptr;
    int mask = 0;
    p->init(&comm, 1, &mask, "bench", 1, 8, 0, nullptr);
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < operations; ++i) {
      lagom_nccl_profiler_descr_v5_t d{};
      d.type = LAGOM_NCCL_PROFILE_COLL;
      d.coll.func = "AllReduce";
      d.coll.count = 1 << 20;
      d.coll.datatype = "ncclBfloat16";
      d.coll.algo = "RING";
      d.coll.proto = "SIMPLE";
      d.coll.nChannels = k_channels;
      d.coll.seqNumber = static_cast<std::uint64_t>(i);
      void* coll = nullptr;
      p->startEvent(comm, &coll, &d);
      p->stopEvent(coll);
      void* channels[k_channels] = {};
      for (int c = 0; c < k_channels; ++c) {
        lagom_nccl_profiler_descr_v5_t k{};
        k.type = LAGOM_NCCL_PROFILE_KERNEL_CH;
        k.parentObj = coll;
        k.kernelCh.channelId = static_cast<std::uint8_t>(c);
        k.kernelCh.pTimer = static_cast<std::uint64_t>(i) * 1000;
        p->startEvent(comm, &channels[c], &k);
      }
      for (int c = 0; c < k_channels; ++c) {
        lagom_nccl_profiler_state_args_t args{};
        args.kernelCh.pTimer = static_cast<std::uint64_t>(i) * 1000 + 500;
        p->recordEventState(channels[c], LAGOM_NCCL_PROFILER_KERNEL_CH_STOP, &args);
        p->stopEvent(channels[c]);
      }
    }
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    p->finalize(comm);
    ns_per_event.push_back(ns / static_cast<double>(operations * k_events_per_operation));
  }
  std::filesystem::remove_all(dir);
  std::sort(ns_per_event.begin(), ns_per_event.end());
  std::printf("%.1f\n", ns_per_event[ns_per_event.size() / 2]);
  return 0;
}
