// Device kernels of the CUDA executor (cuda_device.cu), callable from host C++ (cuda_module.cpp).
// Every launch is asynchronous on `stream`; the caller checks errors.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace lagom::kernels::cuda {

// out[i·ld + j] for i < rows, j < cols = input_value(seed, matrix, row0 + i, col0 + j)
// (kernels/overlap_data.h) when row0 + i < real_rows and col0 + j < real_cols, else 0.
void fill_input_f32(float* out, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint64_t seed,
                    int matrix, std::int64_t row0, std::int64_t col0, std::int64_t real_rows,
                    std::int64_t real_cols, cudaStream_t stream);
void fill_input_f64(double* out, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint64_t seed,
                    int matrix, std::int64_t row0, std::int64_t col0, std::int64_t real_rows,
                    std::int64_t real_cols, cudaStream_t stream);
// out[e] = NaN for e < count.
void fill_nan(float* out, std::int64_t count, cudaStream_t stream);
// out[e] = terms[0][e] + terms[1][e] + ... in that order, fp32 (gemm-rs's rank-order reduction).
// `terms` is a device array of `nterms` device pointers.
void sum_in_order(float* out, const float* const* terms, int nterms, std::int64_t count, cudaStream_t stream);
// Per block b < blocks: partial[2b] = max |out − ref| (infinity for NaN), partial[2b+1] = max |ref| over the
// rows×cols region (out with leading dimension ld_out, ref dense). Returns the number of blocks launched
// (partial must hold 2·k_error_blocks doubles).
inline constexpr int k_error_blocks = 256;
int max_error(const float* out, std::int64_t ld_out, const double* ref, std::int64_t rows, std::int64_t cols,
              double* partial, cudaStream_t stream);

}  // namespace lagom::kernels::cuda
