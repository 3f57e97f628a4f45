// y = A x for a tall row-major float matrix (65536 x 1024, a dense layer applied to one input), one
// thread per row: at each step the 32 threads of a warp read 32 different rows, 4 KB apart, so every
// warp load touches 32 sectors for 128 useful bytes.
#include "bench.cuh"

__global__ void gemv(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y,
                     int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* row = a + (size_t)r * cols;
  float acc = 0.0f;
  for (int c = 0; c < cols; ++c) acc += row[c] * x[c];
  y[r] = acc;
}

int main() {
  const int rows = 65536, cols = 1024;
  const size_t n = (size_t)rows * cols;
  std::vector<float> a(n), x(cols), y(rows);
  Rng rng(43);
  for (auto& v : a) v = rng.uniform(-1.0f, 1.0f);
  for (auto& v : x) v = rng.uniform(-1.0f, 1.0f);
  float *d_a, *d_x, *d_y;
  CK(cudaMalloc(&d_a, n * sizeof(float)));
  CK(cudaMalloc(&d_x, cols * sizeof(float)));
  CK(cudaMalloc(&d_y, rows * sizeof(float)));
  CK(cudaMemcpy(d_a, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_x, x.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    gemv<<<rows / 256, 256>>>(d_a, d_x, d_y, rows, cols);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(y.data(), d_y, rows * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int r = 0; r < rows; ++r) {
    double want = 0.0;
    for (int c = 0; c < cols; ++c) want += (double)a[(size_t)r * cols + c] * x[c];
    bad += !close_enough(y[r], want, 1e-4, 1e-3);
  }
  CK(cudaFree(d_a));
  CK(cudaFree(d_x));
  CK(cudaFree(d_y));
  return verdict("gemv_rowthread", bad, rows);
}
