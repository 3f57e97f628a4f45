// Row-wise softmax of attention scores (131072 rows of 512 floats, row-major, 256 MB). Fix: one warp per
// row (eight rows per 256-thread block); the lanes stride the row together, so each load and store
// instruction reads 128 consecutive bytes, and the max and the sum are combined with __shfl_xor_sync.
// The three passes stay; the row (2 KB per warp) is still in L1 for the second and third.
#include "bench.cuh"

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const float* in = x + (size_t)r * cols;
  float* out = y + (size_t)r * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, in[c]);
  for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  float s = 0.0f;
  for (int c = lane; c < cols; c += 32) s += expf(in[c] - m);
  for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
  float inv = 1.0f / s;
  for (int c = lane; c < cols; c += 32) out[c] = expf(in[c] - m) * inv;
}

int main() {
  const int rows = 131072, cols = 512;
  const size_t n = (size_t)rows * cols;
  std::vector<float> x(n), y(n);
  Rng rng(3606);
  for (auto& v : x) v = rng.uniform(-8.0f, 8.0f);
  float *d_x, *d_y;
  CK(cudaMalloc(&d_x, n * sizeof(float)));
  CK(cudaMalloc(&d_y, n * sizeof(float)));
  CK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    softmax_rows<<<(rows * 32 + 255) / 256, 256>>>(d_x, d_y, rows, cols);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int r = 0; r < rows; r += 61) {
    const float* in = x.data() + (size_t)r * cols;
    double m = -INFINITY, s = 0.0;
    for (int c = 0; c < cols; ++c) m = std::fmax(m, (double)in[c]);
    for (int c = 0; c < cols; ++c) s += std::exp(in[c] - m);
    for (int c = 0; c < cols; ++c) {
      bad += !close_enough(y[(size_t)r * cols + c], std::exp(in[c] - m) / s, 1e-4, 1e-9);
      ++checked;
    }
  }
  CK(cudaFree(d_x));
  CK(cudaFree(d_y));
  return verdict("softmax_rowthread", bad, checked);
}
