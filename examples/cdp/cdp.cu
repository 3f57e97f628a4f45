// Dynamic parallelism with skewed work: each parent thread owns a segment of a CSR-like array whose
// lengths follow a power law (most tiny, a few huge) and launches a child grid to scale it. Most child
// grids are one small block, so launch overhead dominates: the pattern the CGO'22 DP framework
// targets with thresholding, coarsening and aggregation. Build with -rdc=true.
#include <algorithm>
#include <cmath>
#include <vector>
#include "../common.cuh"

__global__ void scale_segment(const float* __restrict__ in, float* __restrict__ out, int begin, int len, float a) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < len) out[begin + t] = a * in[begin + t] + 1.0f;
}

__global__ void scale_all(const int* __restrict__ offsets, const float* __restrict__ in, float* __restrict__ out,
                          int segments, float a, int* __restrict__ launch_errors) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= segments) return;
  int begin = offsets[i];
  int len = offsets[i + 1] - begin;
  if (len == 0) return;
  scale_segment<<<(len + 127) / 128, 128>>>(in, out, begin, len, a);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(launch_errors, 1);  // a dropped launch is silent otherwise
}

int main() {
  const int segments = 2000;  // below the device runtime's default pending-launch limit (2048)
  std::vector<int> offsets(segments + 1, 0);
  unsigned long long s = 11;
  for (int i = 0; i < segments; ++i) {
    // power-law lengths: 1..~200k, most short
    double u = (ww_rand(&s) % 100000 + 1) / 100000.0;
    int len = static_cast<int>(std::min(200000.0, 4.0 / (u * u)));
    offsets[i + 1] = offsets[i] + len;
  }
  const int n = offsets[segments];
  std::vector<float> h(n), got(n);
  for (auto& v : h) v = (ww_rand(&s) % 1000) / 10.0f;
  int *doff, *derr;
  float *din, *dout;
  CHECK(cudaMalloc(&doff, (segments + 1) * sizeof(int)));
  CHECK(cudaMalloc(&derr, sizeof(int)));
  CHECK(cudaMalloc(&din, n * sizeof(float)));
  CHECK(cudaMalloc(&dout, n * sizeof(float)));
  CHECK(cudaMemcpy(doff, offsets.data(), (segments + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(din, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dout, 0, n * sizeof(float)));
  CHECK(cudaMemset(derr, 0, sizeof(int)));
  CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4096));
  scale_all<<<(segments + 127) / 128, 128>>>(doff, din, dout, segments, 2.0f, derr);
  CHECK_LAUNCH();
  int errors = 0;
  CHECK(cudaMemcpy(&errors, derr, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += got[i] != 2.0f * h[i] + 1.0f;
  std::printf("cdp: %d elements in %d segments, %d launch errors, %d mismatches -> %s\n", n, segments, errors, bad,
              errors == 0 && bad == 0 ? "PASS" : "FAIL");
  CHECK(cudaFree(doff));
  CHECK(cudaFree(derr));
  CHECK(cudaFree(din));
  CHECK(cudaFree(dout));
  return errors == 0 && bad == 0 ? 0 : 1;
}
