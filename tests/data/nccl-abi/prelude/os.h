// Lagom's stand-in for NCCL's src/include/os.h, which v2.30.7-1:src/include/plugin/nccl_profiler.h:84
// includes for ncclPid_t only: on Linux it is pid_t (v2.30.7-1:src/include/os/linux.h:34). The including
// test declares pid_t (<sys/types.h>) first. Written by Lagom, not copied.
#ifndef LAGOM_NCCL_ABI_PRELUDE_OS_H_
#define LAGOM_NCCL_ABI_PRELUDE_OS_H_
typedef pid_t ncclPid_t;
#endif
