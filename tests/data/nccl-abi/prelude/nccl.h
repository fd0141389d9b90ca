// Lagom's stand-in for NCCL's generated nccl.h (src/nccl.h.in), which the carried plugin headers include
// for ncclResult_t only. Values as in NVIDIA/nccl@v2.30.7-1:src/nccl.h.in:44-53 (v2.24.3-1:src/nccl.h.in:40-48
// has the same first eight; ncclTimeout came later). Written by Lagom, not copied.
#ifndef LAGOM_NCCL_ABI_PRELUDE_NCCL_H_
#define LAGOM_NCCL_ABI_PRELUDE_NCCL_H_
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclTimeout = 8,
  ncclNumResults = 9
} ncclResult_t;
#endif
