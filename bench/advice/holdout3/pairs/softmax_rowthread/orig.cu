// Row-wise softmax of attention scores (131072 rows of 512 floats, row-major, 256 MB), one thread per
// row: three passes over its row (max, sum of expf(x - max), normalised write). At each step the 32 lanes
// of a warp read 32 different rows 2 KB apart, so every load and store instruction touches 32 sectors in
// 32 cache lines; the rows do not stay in cache between passes (64 KB per warp), so each pass comes back
// from DRAM.
#include "bench.cuh"

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* in = x + (size_t)r * cols;
  float* out = y + (size_t)r * cols;
  float m = -INFINITY;
  for (int c = 0; c < cols; ++c) m = fmaxf(m, in[c]);
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += expf(in[c] - m);
  float inv = 1.0f / s;
  for (int c = 0; c < cols; ++c) out[c] = expf(in[c] - m) * inv;
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
    softmax_rows<<<(rows + 255) / 256, 256>>>(d_x, d_y, rows, cols);
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
