// ELLPACK sparse matrix-vector product y = A x with random column indices. Each iteration loads a
// column index and then the x value it points to, and uses it right away: two dependent global loads
// (index then value) per nonzero, with nothing to hide their latency in between (unrolling is turned
// off, as a compiler often must for loops it cannot prove safe). Long-scoreboard stalls dominate.
#include <cmath>
#include <vector>
#include "common.cuh"

__global__ void spmv_ell(const int* __restrict__ cols, const float* __restrict__ vals,
                         const float* __restrict__ x, float* __restrict__ y, int rows, int width) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float sum = 0.0f;
  // indirect_address_elimination fix: load the next column index one iteration ahead (software prefetch)
  int c = width > 0 ? cols[r] : 0;
#pragma unroll 1
  for (int k = 0; k < width; ++k) {
    int next = k + 1 < width ? cols[(k + 1) * rows + r] : 0;
    sum += vals[k * rows + r] * x[c];
    c = next;
  }
  y[r] = sum;
}

int main() {
  const int rows = 1 << 20, width = 32, nx = 1 << 24;
  const size_t nnz = static_cast<size_t>(rows) * width;
  std::vector<int> cols(nnz);
  std::vector<float> vals(nnz), x(nx), y(rows);
  unsigned long long s = 7;
  for (auto& c : cols) c = static_cast<int>(ww_rand(&s) % nx);
  for (auto& v : vals) v = (ww_rand(&s) % 100) / 50.0f - 1.0f;
  for (auto& v : x) v = (ww_rand(&s) % 100) / 25.0f;
  int* dcols;
  float *dvals, *dx, *dy;
  CHECK(cudaMalloc(&dcols, nnz * sizeof(int)));
  CHECK(cudaMalloc(&dvals, nnz * sizeof(float)));
  CHECK(cudaMalloc(&dx, nx * sizeof(float)));
  CHECK(cudaMalloc(&dy, rows * sizeof(float)));
  CHECK(cudaMemcpy(dcols, cols.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dvals, vals.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dx, x.data(), nx * sizeof(float), cudaMemcpyHostToDevice));
  spmv_ell<<<(rows + 255) / 256, 256>>>(dcols, dvals, dx, dy, rows, width);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(y.data(), dy, rows * sizeof(float), cudaMemcpyDeviceToHost));
  double max_err = 0;
  for (int r = 0; r < rows; r += 97) {
    float sum = 0.0f;
    for (int k = 0; k < width; ++k) sum += vals[static_cast<size_t>(k) * rows + r] * x[cols[static_cast<size_t>(k) * rows + r]];
    max_err = std::fmax(max_err, std::fabs(sum - y[r]));
  }
  std::printf("gather: max |err| = %g -> %s\n", max_err, max_err < 1e-3 ? "PASS" : "FAIL");
  CHECK(cudaFree(dcols));
  CHECK(cudaFree(dvals));
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  return max_err < 1e-3 ? 0 : 1;
}
