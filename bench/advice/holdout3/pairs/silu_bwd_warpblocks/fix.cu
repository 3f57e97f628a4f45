// Backward pass of the SiLU activation over 64 M floats (dx = dy * s * (1 + x (1 - s)), s = sigmoid(x)):
// two loads and one store per element, DRAM-streaming. Fix: 256-thread blocks instead of 32 (one warp), so
// the 32-blocks-per-SM limit no longer caps an SM at 32 of its 64 warps (and 8x fewer blocks are started).
#include "bench.cuh"

__global__ void silu_backward(const float* __restrict__ x, const float* __restrict__ dy, float* __restrict__ dx,
                              int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  float s = 1.0f / (1.0f + expf(-v));
  dx[i] = dy[i] * s * (1.0f + v * (1.0f - s));
}

int main() {
  const int n = 64 << 20;
  const int threads = 256;
  std::vector<float> x(n), dy(n), dx(n);
  Rng rng(3707);
  for (int i = 0; i < n; ++i) {
    x[i] = rng.uniform(-6.0f, 6.0f);
    dy[i] = rng.uniform(-1.0f, 1.0f);
  }
  float *d_x, *d_dy, *d_dx;
  CK(cudaMalloc(&d_x, (size_t)n * sizeof(float)));
  CK(cudaMalloc(&d_dy, (size_t)n * sizeof(float)));
  CK(cudaMalloc(&d_dx, (size_t)n * sizeof(float)));
  CK(cudaMemcpy(d_x, x.data(), (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_dy, dy.data(), (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    silu_backward<<<(n + threads - 1) / threads, threads>>>(d_x, d_dy, d_dx, n);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(dx.data(), d_dx, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 13) {
    double v = x[i], s = 1.0 / (1.0 + std::exp(-v));
    bad += !close_enough(dx[i], dy[i] * s * (1.0 + v * (1.0 - s)), 1e-5, 1e-6);
    ++checked;
  }
  CK(cudaFree(d_x));
  CK(cudaFree(d_dy));
  CK(cudaFree(d_dx));
  return verdict("silu_bwd_warpblocks", bad, checked);
}
