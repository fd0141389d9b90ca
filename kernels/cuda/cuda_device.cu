#include <math_constants.h>

#include "kernels/cuda/cuda_device.h"

namespace lagom::kernels::cuda {

namespace {

constexpr int k_threads = 256;

// The same hash as kernels/overlap_data.cpp's input_value (splitmix64; Steele, Lea, Flood 2014), so the
// GPU and the CPU executors see the same inputs.
__device__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

__device__ float input_value(std::uint64_t seed, int matrix, std::int64_t row, std::int64_t col) {
  std::uint64_t h = splitmix64(seed ^ (static_cast<std::uint64_t>(matrix) << 62));
  h = splitmix64(h ^ static_cast<std::uint64_t>(row));
  h = splitmix64(h ^ static_cast<std::uint64_t>(col));
  return static_cast<float>(static_cast<double>(h >> 40) / 8388608.0 - 1.0);
}

template <typename T>
__global__ void fill_input_kernel(T* out, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                  std::uint64_t seed, int matrix, std::int64_t row0, std::int64_t col0,
                                  std::int64_t real_rows, std::int64_t real_cols) {
  const std::int64_t total = rows * cols;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / cols, j = e % cols;
    const std::int64_t gr = row0 + i, gc = col0 + j;
    out[i * ld + j] =
        (gr < real_rows && gc < real_cols) ? static_cast<T>(input_value(seed, matrix, gr, gc)) : T(0);
  }
}

__global__ void fill_nan_kernel(float* out, std::int64_t count) {
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[e] = CUDART_NAN_F;
  }
}

__global__ void sum_in_order_kernel(float* out, const float* const* terms, int nterms, std::int64_t count) {
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float acc = terms[0][e];
    for (int q = 1; q < nterms; ++q) acc = __fadd_rn(acc, terms[q][e]);  // no contraction: plain fp32 adds
    out[e] = acc;
  }
}

__global__ void max_error_kernel(const float* out, std::int64_t ld_out, const double* ref, std::int64_t rows,
                                 std::int64_t cols, double* partial) {
  __shared__ double err[k_threads];
  __shared__ double mag[k_threads];
  double e_max = 0, r_max = 0;
  const std::int64_t total = rows * cols;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / cols, j = e % cols;
    const double o = out[i * ld_out + j];
    const double r = ref[e];
    const double d = isnan(o) ? CUDART_INF : fabs(o - r);
    e_max = fmax(e_max, d);
    r_max = fmax(r_max, fabs(r));
  }
  err[threadIdx.x] = e_max;
  mag[threadIdx.x] = r_max;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) {
      err[threadIdx.x] = fmax(err[threadIdx.x], err[threadIdx.x + stride]);
      mag[threadIdx.x] = fmax(mag[threadIdx.x], mag[threadIdx.x + stride]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[2 * blockIdx.x] = err[0];
    partial[2 * blockIdx.x + 1] = mag[0];
  }
}

int blocks_for(std::int64_t count) {
  const std::int64_t blocks = (count + k_threads - 1) / k_threads;
  return static_cast<int>(blocks < 4096 ? (blocks < 1 ? 1 : blocks) : 4096);
}

}  // namespace

void fill_input_f32(float* out, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint64_t seed,
                    int matrix, std::int64_t row0, std::int64_t col0, std::int64_t real_rows,
                    std::int64_t real_cols, cudaStream_t stream) {
  fill_input_kernel<float><<<blocks_for(rows * cols), k_threads, 0, stream>>>(
      out, rows, cols, ld, seed, matrix, row0, col0, real_rows, real_cols);
}

void fill_input_f64(double* out, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint64_t seed,
                    int matrix, std::int64_t row0, std::int64_t col0, std::int64_t real_rows,
                    std::int64_t real_cols, cudaStream_t stream) {
  fill_input_kernel<double><<<blocks_for(rows * cols), k_threads, 0, stream>>>(
      out, rows, cols, ld, seed, matrix, row0, col0, real_rows, real_cols);
}

void fill_nan(float* out, std::int64_t count, cudaStream_t stream) {
  fill_nan_kernel<<<blocks_for(count), k_threads, 0, stream>>>(out, count);
}

void sum_in_order(float* out, const float* const* terms, int nterms, std::int64_t count,
                  cudaStream_t stream) {
  sum_in_order_kernel<<<blocks_for(count), k_threads, 0, stream>>>(out, terms, nterms, count);
}

int max_error(const float* out, std::int64_t ld_out, const double* ref, std::int64_t rows, std::int64_t cols,
              double* partial, cudaStream_t stream) {
  max_error_kernel<<<k_error_blocks, k_threads, 0, stream>>>(out, ld_out, ref, rows, cols, partial);
  return k_error_blocks;
}

}  // namespace lagom::kernels::cuda
