#include "profiler/nccl_backend.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <dlfcn.h>
#include <optional>
#include <unistd.h>

#include <fmt/format.h>

#include "core/units.h"
#include "lagom/build_info.h"
#include "model/collective_factors.h"
#include "profiler/mpi_bench.h"
#include "profiler/nccl/lagom_nccl.h"

namespace lagom::profiler {

// Function pointers resolved from the module; the handle stays open for the process's life (NCCL
// keeps threads that must not outlive their code).
class NcclModule {
 public:
  int (*abi_version)() = nullptr;
  int (*device_count)(char*, int) = nullptr;
  int (*device_info)(int, lagom_nccl_device_info*, char*, int) = nullptr;
  int (*unique_id)(unsigned char*, char*, int) = nullptr;
  int (*comm_init)(const unsigned char*, int, int, int, lagom_nccl_comm**, char*, int) = nullptr;
  void (*comm_destroy)(lagom_nccl_comm*) = nullptr;
  int (*collective)(lagom_nccl_comm*, const lagom_nccl_coll_request*, lagom_nccl_coll_result*, char*,
                    int) = nullptr;
  int (*gemm)(int, const lagom_nccl_gemm_request*, lagom_nccl_gemm_result*, char*, int) = nullptr;
  int (*overlap)(lagom_nccl_comm*, const lagom_nccl_overlap_request*, lagom_nccl_overlap_result*, char*,
                 int) = nullptr;
};

namespace {

constexpr int k_err_len = 1024;

std::string module_path() {
  if (const char* path = std::getenv("LAGOM_NCCL_MODULE"); path != nullptr && *path != '\0') return path;
  std::array<char, 4096> exe{};
  const ssize_t length = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  std::string dir = length > 0 ? std::string(exe.data(), static_cast<std::size_t>(length)) : std::string(".");
  dir = dir.substr(0, dir.rfind('/'));
  return dir + "/../lib/liblagom-nccl.so";
}

template <typename F>
bool resolve(void* handle, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(handle, name));
  return out != nullptr;
}

Error unavailable(const std::string& why) {
  return make_error(ErrorCode::unavailable, "backend nccl: " + why);
}

int collective_code(const std::string& name) {
  const auto parsed = model::parse_collective(name);
  return parsed ? static_cast<int>(*parsed) : -1;
}

// Sets (or unsets) an environment variable for the lifetime of the object, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : m_name(name) {
    if (const char* old = std::getenv(name); old != nullptr) m_old = old;
    if (value.empty()) {
      unsetenv(name);
    } else {
      setenv(name, value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    if (m_old) {
      setenv(m_name, m_old->c_str(), 1);
    } else {
      unsetenv(m_name);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

struct CommGuard {
  NcclModule& module;
  lagom_nccl_comm* comm = nullptr;
  ~CommGuard() { module.comm_destroy(comm); }
};

// Every rank learns whether any rank failed, so that no rank waits in a collective the others skipped.
Result<bool> all_ok(Group& group, bool ok) {
  LAGOM_TRY(const double failures, group.sum(ok ? 0.0 : 1.0));
  return failures == 0.0;
}

Result<lagom_nccl_comm*> init_comm(NcclModule& module, Group& group, int device, std::string* why) {
  std::array<unsigned char, LAGOM_NCCL_UNIQUE_ID_BYTES> id{};
  std::array<char, k_err_len> err{};
  bool ok = true;
  if (group.rank() == 0) ok = module.unique_id(id.data(), err.data(), k_err_len) == 0;
  LAGOM_TRY(const bool id_ok, all_ok(group, ok));
  if (!id_ok) {
    *why = err.data();
    return static_cast<lagom_nccl_comm*>(nullptr);
  }
  LAGOM_TRY_STATUS(group.broadcast(id.data(), id.size(), 0));
  lagom_nccl_comm* comm = nullptr;
  ok = module.comm_init(id.data(), group.size(), group.rank(), device, &comm, err.data(), k_err_len) == 0;
  LAGOM_TRY(const bool init_ok, all_ok(group, ok));
  if (!init_ok) {
    module.comm_destroy(comm);
    *why = ok ? "another rank's ncclCommInitRank failed" : err.data();
    return static_cast<lagom_nccl_comm*>(nullptr);
  }
  return comm;
}

// Measures one collective with an iteration count every rank agrees on.
Result<std::optional<db::CommSample>> measure(NcclModule& module, Group& group, lagom_nccl_comm* comm,
                                              const std::string& collective, std::int64_t bytes,
                                              bool in_place, const NcclConfig& config, int nodes,
                                              const Sweep& sweep, std::string* why) {
  std::array<char, k_err_len> err{};
  lagom_nccl_coll_request request{collective_code(collective), bytes, in_place ? 1 : 0, 0, 1, 2};
  lagom_nccl_coll_result result{};
  // A short probe sets the iteration count.
  bool ok = module.collective(comm, &request, &result, err.data(), k_err_len) == 0;
  LAGOM_TRY(const bool probe_ok, all_ok(group, ok));
  if (!probe_ok) {
    *why = ok ? "another rank failed" : err.data();
    return std::optional<db::CommSample>{};
  }
  LAGOM_TRY(const double probe_us, group.max(result.time_us));
  request.warmup_iters = sweep.warmup_iters;
  request.iters = std::clamp(static_cast<int>(sweep.target_us / std::max(probe_us, 0.5)), sweep.min_iters,
                             sweep.max_iters);
  ok = module.collective(comm, &request, &result, err.data(), k_err_len) == 0;
  LAGOM_TRY(const bool run_ok, all_ok(group, ok));
  if (!run_ok) {
    *why = ok ? "another rank failed" : err.data();
    return std::optional<db::CommSample>{};
  }
  LAGOM_TRY(const double sum_us, group.sum(result.time_us));
  LAGOM_TRY(const std::int64_t wrong, group.sum(static_cast<std::int64_t>(result.wrong)));
  db::CommSample s;
  s.collective = collective;
  s.algo = config.algo;
  s.proto = config.proto;
  s.channels = config.channels;
  s.ranks = group.size();
  s.nodes = nodes;
  s.bytes = result.bytes;
  s.count = result.count;
  s.redop =
      (collective == "allreduce" || collective == "reducescatter" || collective == "reduce") ? "sum" : "none";
  s.root = (collective == "broadcast" || collective == "reduce") ? 0 : -1;
  s.in_place = in_place;
  s.time_us = sum_us / group.size();
  s.algbw_GBps = static_cast<double>(s.bytes) / (s.time_us * 1e3);
  s.busbw_GBps = s.algbw_GBps * model::busbw_factor(*model::parse_collective(collective), group.size());
  s.wrong = wrong;
  return std::optional<db::CommSample>{s};
}

int precision_code(const std::string& precision) {
  if (precision == "fp32") return LAGOM_NCCL_FP32;
  if (precision == "tf32") return LAGOM_NCCL_TF32;
  if (precision == "fp16") return LAGOM_NCCL_FP16;
  return LAGOM_NCCL_BF16;
}

}  // namespace

Result<std::shared_ptr<NcclModule>> load_nccl_module() {
  if (std::string_view(build::k_cuda_version).empty()) {
    return unavailable(
        "this lagom was built without CUDA (configure with -DLAGOM_ENABLE_CUDA=ON on a machine with "
        "/usr/local/cuda)");
  }
  const std::string path = module_path();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return unavailable("cannot load " + path + ": " + (why != nullptr ? why : "unknown dlopen error"));
  }
  auto module = std::make_shared<NcclModule>();
  const bool all = resolve(handle, "lagom_nccl_abi_version", module->abi_version) &&
                   resolve(handle, "lagom_nccl_device_count", module->device_count) &&
                   resolve(handle, "lagom_nccl_describe_device", module->device_info) &&
                   resolve(handle, "lagom_nccl_unique_id", module->unique_id) &&
                   resolve(handle, "lagom_nccl_comm_init", module->comm_init) &&
                   resolve(handle, "lagom_nccl_comm_destroy", module->comm_destroy) &&
                   resolve(handle, "lagom_nccl_collective", module->collective) &&
                   resolve(handle, "lagom_nccl_gemm", module->gemm) &&
                   resolve(handle, "lagom_nccl_overlap", module->overlap);
  if (!all) return unavailable(path + " lacks a lagom_nccl_* entry point");
  if (module->abi_version() != LAGOM_NCCL_ABI_VERSION) {
    return unavailable(fmt::format("{} has ABI version {}, this lagom needs {}", path, module->abi_version(),
                                   LAGOM_NCCL_ABI_VERSION));
  }
  return module;
}

Result<int> nccl_gpu_count(NcclModule& module) {
  std::array<char, k_err_len> err{};
  const int count = module.device_count(err.data(), k_err_len);
  if (count < 0) return unavailable(std::string("no GPU found (") + err.data() + ")");
  if (count == 0) return unavailable("no GPU found (cudaGetDeviceCount: 0 devices)");
  return count;
}

Status describe_nccl_device(NcclModule& module, int device, db::Run& run) {
  std::array<char, k_err_len> err{};
  lagom_nccl_device_info info{};
  if (module.device_info(device, &info, err.data(), k_err_len) != 0) return unavailable(err.data());
  run.gpu = info.gpu;
  run.driver = info.driver;
  run.cuda_version = info.cuda_runtime;
  run.nccl_version = info.nccl;
  return {};
}

std::vector<NcclConfig> nccl_configs(const Sweep& sweep, bool quick) {
  std::vector<NcclConfig> configs;
  configs.push_back({"", "", 0, sweep.collectives});
  auto wanted = [&](const std::string& c) {
    return std::find(sweep.collectives.begin(), sweep.collectives.end(), c) != sweep.collectives.end();
  };
  std::vector<std::string> ring_collectives;
  for (const auto& c : sweep.collectives) {
    if (c != "alltoall" && c != "sendrecv") ring_collectives.push_back(c);  // point-to-point: no NCCL_ALGO
  }
  const std::vector<std::string> protos =
      quick ? std::vector<std::string>{"simple", "ll"} : std::vector<std::string>{"simple", "ll", "ll128"};
  for (const auto& proto : protos) {
    configs.push_back({"ring", proto, 0, quick ? std::vector<std::string>{"allreduce"} : ring_collectives});
    if (wanted("allreduce")) configs.push_back({"tree", proto, 0, {"allreduce"}});
  }
  // Channel sweep on ring/simple allreduce (NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS = c).
  if (wanted("allreduce")) {
    for (const int channels : quick ? std::vector<int>{2, 8} : std::vector<int>{1, 2, 4, 8, 16, 32}) {
      configs.push_back({"ring", "simple", channels, {"allreduce"}});
    }
  }
  return configs;
}

// The compute suite on this rank's GPU: cuBLAS GEMMs of square sizes in each precision, timed for about
// sweep.target_us each.
Status run_nccl_compute(NcclModule& module, int device, const Sweep& sweep, bool quick, SampleSink& sink,
                        Progress& progress) {
  std::array<char, k_err_len> err{};
  const std::vector<std::int64_t> sizes =
      quick ? std::vector<std::int64_t>{512, 1024, 2048, 4096}
            : std::vector<std::int64_t>{256, 512, 1024, 2048, 4096, 6144, 8192, 12288, 16384};
  const std::vector<std::string> precisions{"bf16", "fp16", "tf32", "fp32"};
  progress.begin("compute: cuBLAS GEMM sweep", static_cast<long>(sizes.size() * precisions.size()));
  long done = 0;
  std::vector<db::ComputeSample> samples;
  for (const auto& precision : precisions) {
    for (const std::int64_t size : sizes) {
      lagom_nccl_gemm_request request{precision_code(precision), size, size, size, 2, 1};
      lagom_nccl_gemm_result result{};
      if (module.gemm(device, &request, &result, err.data(), k_err_len) != 0) {
        return make_error(ErrorCode::failure, "backend nccl: gemm: " + std::string(err.data()));
      }
      const double flops =
          2.0 * static_cast<double>(size) * static_cast<double>(size) * static_cast<double>(size);
      request.iters = std::clamp(static_cast<int>(sweep.target_us / std::max(result.time_us, 0.5)),
                                 sweep.min_iters, sweep.max_iters);
      if (module.gemm(device, &request, &result, err.data(), k_err_len) != 0) {
        return make_error(ErrorCode::failure, "backend nccl: gemm: " + std::string(err.data()));
      }
      db::ComputeSample s;
      s.kind = "gemm";
      s.precision = precision;
      s.m = s.n = s.k = size;
      s.time_us = result.time_us;
      s.tflops = flops / (result.time_us * 1e6);
      samples.push_back(s);
      progress.step(++done, fmt::format("{} {}", precision, size));
    }
  }
  progress.end();
  return sink.compute(samples);
}

Status run_nccl_suites(NcclModule& module, Group& group, int device, int nodes, const Sweep& sweep,
                       bool quick, const std::vector<std::string>& suites, SampleSink& sink,
                       Progress& progress) {
  auto has = [&](const char* suite) {
    return std::find(suites.begin(), suites.end(), suite) != suites.end();
  };
  std::array<char, k_err_len> err{};
  if (has("compute")) LAGOM_TRY_STATUS(run_nccl_compute(module, device, sweep, quick, sink, progress));
  if (has("comm")) {
    for (const NcclConfig& config : nccl_configs(sweep, quick)) {
      const std::string label =
          fmt::format("algo={} proto={} channels={}", config.algo.empty() ? "default" : config.algo,
                      config.proto.empty() ? "default" : config.proto,
                      config.channels > 0 ? std::to_string(config.channels) : "default");
      const std::string channels = config.channels > 0 ? std::to_string(config.channels) : "";
      ScopedEnv algo("NCCL_ALGO", config.algo), proto("NCCL_PROTO", config.proto);
      ScopedEnv min_channels("NCCL_MIN_NCHANNELS", channels), max_channels("NCCL_MAX_NCHANNELS", channels);
      std::string why;
      LAGOM_TRY(lagom_nccl_comm * comm, init_comm(module, group, device, &why));
      if (comm == nullptr) {
        sink.warn("backend nccl: " + label + ": communicator init failed: " + why);
        continue;
      }
      CommGuard guard{module, comm};
      for (const auto& collective : config.collectives) {
        progress.begin(fmt::format("comm: {} {}", collective, label),
                       static_cast<long>(sweep.sizes_bytes.size()));
        std::vector<db::CommSample> series;
        bool rejected = false;
        long done = 0;
        for (const std::int64_t bytes : sweep.sizes_bytes) {
          if (round_collective_bytes(collective, bytes, group.size()) <= 0) continue;
          for (const bool in_place : {false, true}) {
            if (in_place && (collective == "alltoall" || collective == "sendrecv")) continue;
            LAGOM_TRY(auto sample,
                      measure(module, group, comm, collective, bytes, in_place, config, nodes, sweep, &why));
            if (!sample) {
              rejected = true;
              break;
            }
            series.push_back(*sample);
          }
          if (rejected) break;
          progress.step(++done, units::format_size(bytes));
        }
        progress.end();
        if (rejected) sink.warn("backend nccl: " + collective + " " + label + ": " + why);
        if (!series.empty()) LAGOM_TRY_STATUS(sink.comm(series));
        if (rejected) break;  // the communicator may be unusable after an error
      }
    }
  }
  if (has("interference")) {
    std::string why;
    LAGOM_TRY(lagom_nccl_comm * comm, init_comm(module, group, device, &why));
    if (comm == nullptr) return make_error(ErrorCode::failure, "backend nccl: overlap: " + why);
    CommGuard guard{module, comm};
    const std::int64_t gemm_size = quick ? 4096 : 8192;
    const std::vector<std::int64_t> bytes_list =
        quick ? std::vector<std::int64_t>{64LL << 20}
              : std::vector<std::int64_t>{16LL << 20, 64LL << 20, 256LL << 20};
    std::vector<db::OverlapSample> samples;
    progress.begin("overlap: GEMM beside a collective", static_cast<long>(bytes_list.size() * 2));
    long done = 0;
    for (const char* collective : {"allreduce", "allgather"}) {
      for (const std::int64_t bytes : bytes_list) {
        lagom_nccl_overlap_request request{};
        request.gemm = {LAGOM_NCCL_BF16, gemm_size, gemm_size, gemm_size, 2, quick ? 10 : 30};
        request.coll = {collective_code(collective), bytes, 0, 0, 2, quick ? 10 : 30};
        lagom_nccl_overlap_result result{};
        const bool ok = module.overlap(comm, &request, &result, err.data(), k_err_len) == 0;
        LAGOM_TRY(const bool all, all_ok(group, ok));
        if (!all)
          return make_error(ErrorCode::failure, std::string("backend nccl: overlap: ") +
                                                    (ok ? "another rank failed" : err.data()));
        db::OverlapSample s;
        s.name = std::string("gemm+") + collective;
        s.collective = collective;
        s.bytes = bytes;
        s.precision = "bf16";
        s.m = s.n = s.k = gemm_size;
        LAGOM_TRY(const double ga, group.sum(result.gemm_alone_us));
        LAGOM_TRY(const double ca, group.sum(result.comm_alone_us));
        LAGOM_TRY(const double go, group.sum(result.gemm_overlap_us));
        LAGOM_TRY(const double co, group.sum(result.comm_overlap_us));
        s.gemm_alone_us = ga / group.size();
        s.comm_alone_us = ca / group.size();
        s.gemm_overlap_us = go / group.size();
        s.comm_overlap_us = co / group.size();
        samples.push_back(s);
        progress.step(++done, fmt::format("{} {}", collective, units::format_size(bytes)));
      }
    }
    progress.end();
    LAGOM_TRY_STATUS(sink.overlap(samples));
  }
  return {};
}

}  // namespace lagom::profiler
