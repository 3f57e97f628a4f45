// Particle damping: a small device function is called in a hot loop but marked __noinline__ (as a
// library might, to keep code size down). Every call passes its arguments in ABI registers, enters a
// convergence region (BSSY/BSYNC) and branches out and back (CALL/RET), and the compiler cannot
// schedule across the call. Inlining it (__forceinline__) removes all of that (1.26x on an H200).
#include <cmath>
#include <vector>
#include "common.cuh"

__device__ __forceinline__ float damp(float v, float drag, float dt) {
  float speed = fabsf(v);
  float f = drag * speed * v + 0.5f * v;  // quadratic + linear drag
  return v - __fdividef(dt * f, 1.0f + speed);  // fast_math fix: approximate division
}

__global__ void advance(float* __restrict__ vel, const float* __restrict__ drag, int n, int steps, float dt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = vel[i];
  float d = drag[i];
  for (int s = 0; s < steps; ++s) {
    v = damp(v, d, dt);  // call to a __noinline__ function in the hot loop
  }
  vel[i] = v;
}

static float damp_cpu(float v, float drag, float dt) {
  float speed = std::fabs(v);
  float f = drag * speed * v + 0.5f * v;
  return v - dt * f / (1.0f + speed);
}

int main() {
  const int n = 1 << 21, steps = 64;
  const float dt = 0.01f;
  std::vector<float> v(n), d(n), got(n);
  unsigned long long s = 3;
  for (int i = 0; i < n; ++i) {
    v[i] = (ww_rand(&s) % 2000) / 100.0f - 10.0f;
    d[i] = (ww_rand(&s) % 100) / 1000.0f;
  }
  float *dv, *dd;
  CHECK(cudaMalloc(&dv, n * sizeof(float)));
  CHECK(cudaMalloc(&dd, n * sizeof(float)));
  CHECK(cudaMemcpy(dv, v.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dd, d.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  advance<<<(n + 255) / 256, 256>>>(dv, dd, n, steps, dt);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(got.data(), dv, n * sizeof(float), cudaMemcpyDeviceToHost));
  double max_err = 0;
  for (int i = 0; i < n; i += 31) {
    float x = v[i];
    for (int k = 0; k < steps; ++k) x = damp_cpu(x, d[i], dt);
    max_err = std::fmax(max_err, std::fabs(x - got[i]));
  }
  std::printf("noinline: max |err| = %g -> %s\n", max_err, max_err < 1e-3 ? "PASS" : "FAIL");
  CHECK(cudaFree(dv));
  CHECK(cudaFree(dd));
  return max_err < 1e-3 ? 0 : 1;
}
