// Horizontal 9-tap blur of a 2D float image. The weight is written as a double literal (0.1), so every
// tap converts float -> double and back (F2F) and multiplies in FP64: the strength-reduction pattern
// GPA targets. The fix is `0.1f`.
#include <cmath>
#include <vector>
#include "common.cuh"

constexpr int R = 4;  // taps on each side

__global__ void blur_rows(const float* __restrict__ in, float* __restrict__ out, int nx, int ny) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < R || x >= nx - R || y >= ny) return;
  const float* row = in + static_cast<size_t>(y) * nx;
  float acc = 0.0f;
#pragma unroll
  for (int k = -R; k <= R; ++k) {
    acc += 0.1f * row[x + k];  // double literal: F2F.F64.F32 + DFMA + F2F.F32.F64 per tap
  }
  out[static_cast<size_t>(y) * nx + x] = acc;
}

int main() {
  const int nx = 8192, ny = 4096;
  const size_t n = static_cast<size_t>(nx) * ny;
  std::vector<float> h(n), got(n);
  unsigned long long s = 42;
  for (auto& v : h) v = (ww_rand(&s) % 1000) / 100.0f;
  float *din, *dout;
  CHECK(cudaMalloc(&din, n * sizeof(float)));
  CHECK(cudaMalloc(&dout, n * sizeof(float)));
  CHECK(cudaMemcpy(din, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dout, 0, n * sizeof(float)));
  dim3 block(128, 2), grid((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y);
  blur_rows<<<grid, block>>>(din, dout, nx, ny);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(got.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
  double max_err = 0;
  for (int y = 0; y < ny; y += 7)
    for (int x = R; x < nx - R; x += 3) {
      float acc = 0.0f;
      for (int k = -R; k <= R; ++k) acc += 0.1 * h[static_cast<size_t>(y) * nx + x + k];
      max_err = std::fmax(max_err, std::fabs(acc - got[static_cast<size_t>(y) * nx + x]));
    }
  std::printf("stencil: max |err| = %g -> %s\n", max_err, max_err < 1e-4 ? "PASS" : "FAIL");
  CHECK(cudaFree(din));
  CHECK(cudaFree(dout));
  return max_err < 1e-4 ? 0 : 1;
}
