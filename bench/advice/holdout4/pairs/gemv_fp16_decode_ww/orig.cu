// The matrix-vector products of one decoder layer of a 7B-class LLM at batch size 1 (token generation),
// fp16 weights and activations, fp32 accumulation: fused QKV (12288 x 4096), MLP up (11008 x 4096) and
// down (4096 x 11008), the same kernel launched three times with different shapes. One warp per output
// row, the lanes striding the row one __half at a time (2-byte loads), a __shfl_xor_sync reduction.
#include <cuda_fp16.h>

#include "bench.cuh"

__global__ void gemv_f16(const __half* __restrict__ W, const __half* __restrict__ x, __half* __restrict__ y,
                         int rows, int cols) {
  const int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const __half* w = W + (size_t)row * cols;
  float acc = 0.0f;
  for (int k = lane; k < cols; k += 32) acc += __half2float(w[k]) * __half2float(x[k]);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0) y[row] = __float2half(acc);
}

// Seeded random fp16 bit patterns (no host-side float->half conversion, which would take seconds):
// sign, a random 10-bit mantissa and one of three exponents, |v| in [2^(e_lo-15), 2^(e_lo-12)).
static void fill_half(std::vector<__half>& v, Rng& rng, unsigned e_lo) {
  for (auto& h : v) {
    const unsigned r = rng.next();
    const unsigned short bits = (unsigned short)(((r & 1u) << 15) | ((e_lo + (r >> 11) % 3u) << 10) | ((r >> 1) & 0x3ffu));
    h = __ushort_as_half(bits);
  }
}

struct Layer {
  int rows, cols;
};

int main() {
  const Layer layers[3] = {{12288, 4096}, {11008, 4096}, {4096, 11008}};  // qkv, up, down
  Rng rng(4403);
  std::vector<__half> hW[3], hx[3], hy[3];
  __half *dW[3], *dx[3], *dy[3];
  for (int l = 0; l < 3; ++l) {
    const size_t rows = layers[l].rows, cols = layers[l].cols;
    hW[l].resize(rows * cols);
    hx[l].resize(cols);
    hy[l].resize(rows);
    fill_half(hW[l], rng, 8);   // |w| in [2^-7, 2^-4)
    fill_half(hx[l], rng, 13);  // |x| in [0.25, 2)
    CK(cudaMalloc(&dW[l], rows * cols * sizeof(__half)));
    CK(cudaMalloc(&dx[l], cols * sizeof(__half)));
    CK(cudaMalloc(&dy[l], rows * sizeof(__half)));
    CK(cudaMemcpy(dW[l], hW[l].data(), rows * cols * sizeof(__half), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dx[l], hx[l].data(), cols * sizeof(__half), cudaMemcpyHostToDevice));
  }
  for (int l = 0; l < 3; ++l) {
    const int threads = 256, rows_per_block = threads / 32;
    gemv_f16<<<(layers[l].rows + rows_per_block - 1) / rows_per_block, threads>>>(dW[l], dx[l], dy[l], layers[l].rows,
                                                                              layers[l].cols);
    CK_LAUNCH();
  }
  long bad = 0, checked = 0;
  for (int l = 0; l < 3; ++l) {
    const int rows = layers[l].rows, cols = layers[l].cols;
    CK(cudaMemcpy(hy[l].data(), dy[l], rows * sizeof(__half), cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; r += 13) {
      double want = 0.0, mag = 0.0;
      for (int k = 0; k < cols; ++k) {
        const double p = (double)__half2float(hW[l][(size_t)r * cols + k]) * (double)__half2float(hx[l][k]);
        want += p;
        mag += std::fabs(p);
      }
      // fp32 accumulation error (<< 1e-4 of the magnitude) plus the fp16 rounding of the result (2^-11)
      bad += !close_enough(__half2float(hy[l][r]), want, 1.0 / 1024, 1e-4 * mag);
      ++checked;
    }
    CK(cudaFree(dW[l]));
    CK(cudaFree(dx[l]));
    CK(cudaFree(dy[l]));
  }
  return verdict("gemv_fp16_decode_ww", bad, checked);
}
