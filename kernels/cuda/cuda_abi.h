/* The C ABI of <build>/lib/liblagom-cuda-kernels.so, the CUDA executor of overlap plans. lagom opens
 * it with dlopen only when a command needs a GPU, so the lagom binary never links cudart, cuBLAS or NCCL.
 * Bump LAGOM_CUDA_KERNELS_ABI on any change to these declarations; the loader refuses a mismatch.
 * The module builds the same plan (model/overlap_plan.h, linked into it) from the request fields. */
#ifndef LAGOM_KERNELS_CUDA_ABI_H
#define LAGOM_KERNELS_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LAGOM_CUDA_KERNELS_ABI 1

#if defined(__GNUC__)
#define LAGOM_CUDA_EXPORT __attribute__((visibility("default")))
#else
#define LAGOM_CUDA_EXPORT
#endif

typedef struct {
  int kernel;      /* model::OverlapKernel: 0 ag-gemm, 1 gemm-rs, 2 a2a */
  int method;      /* model::OverlapMethodKind: 0 none, 1 slice, 2 flash */
  int slices;      /* K of slice:K, 1 otherwise */
  int ranks;       /* P */
  int64_t m, n, k; /* global GEMM shape */
  int reps;        /* timed repetitions (medians reported) */
  int warmup;      /* untimed repetitions */
  uint64_t seed;   /* input generator seed (kernels/overlap_data.h input_value) */
} lagom_cuda_request;

typedef struct {
  double compute_us, gemm_us, reduce_us, comm_us, overlapped_us; /* medians, as BenchResult */
  double max_abs_error, max_abs_ref;                             /* against a cuBLAS fp64 reference */
  int devices_used;                                              /* GPUs the ranks ran on */
  int emulated; /* 1: ranks emulated with streams on one device */
  char device_name[128];
  char transport[128]; /* "nccl send/recv" or "cudaMemcpyAsync D2D" */
} lagom_cuda_result;

/* Returns LAGOM_CUDA_KERNELS_ABI. */
LAGOM_CUDA_EXPORT int lagom_cuda_kernels_abi(void);
/* Number of visible CUDA devices (0 when none or no driver); never fails. */
LAGOM_CUDA_EXPORT int lagom_cuda_device_count(void);
/* Runs the benchmark. Returns 0 on success; otherwise writes a NUL-terminated message of at most
 * error_len bytes into error and returns 2 (bad request / unavailable) or 1 (a CUDA, cuBLAS or NCCL
 * call failed). */
LAGOM_CUDA_EXPORT int lagom_cuda_run_overlap(const lagom_cuda_request* request, lagom_cuda_result* result,
                                             char* error, size_t error_len);

#ifdef __cplusplus
}
#endif

#endif
