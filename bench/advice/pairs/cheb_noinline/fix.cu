// Mean squared amplitude of fitted trajectories: each particle's motion is a degree-7 Chebyshev series
// (coefficients stored per coefficient, coalesced), evaluated at 4096 time points. The evaluator is a
// library-style helper marked __forceinline__: inlined, the degree is a constant, the Clenshaw loop
// unrolls and the coefficient array stays in registers.
#include "../bench.cuh"

constexpr int kCoef = 8;

__device__ __forceinline__ float cheb_eval(const float* c, int n, float t) {
  float b1 = 0.0f, b2 = 0.0f;
  for (int k = n - 1; k >= 1; --k) {
    float b0 = fmaf(2.0f * t, b1, c[k] - b2);
    b2 = b1;
    b1 = b0;
  }
  return fmaf(t, b1, c[0] - b2);
}

__global__ void trajectory_power(const float* __restrict__ coef, float* __restrict__ out, int n, int steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float c[kCoef];
#pragma unroll
  for (int k = 0; k < kCoef; ++k) c[k] = coef[(size_t)k * n + i];
  const float dt = 2.0f / (steps - 1);
  float acc = 0.0f;
  for (int s = 0; s < steps; ++s) {
    float v = cheb_eval(c, kCoef, fmaf((float)s, dt, -1.0f));
    acc = fmaf(v, v, acc);
  }
  out[i] = acc / steps;
}

static float cheb_ref(const float* c, int n, float t) {
  float b1 = 0.0f, b2 = 0.0f;
  for (int k = n - 1; k >= 1; --k) {
    float b0 = std::fmaf(2.0f * t, b1, c[k] - b2);
    b2 = b1;
    b1 = b0;
  }
  return std::fmaf(t, b1, c[0] - b2);
}

int main() {
  const int n = 65536, steps = 4096;
  std::vector<float> coef((size_t)kCoef * n), out(n);
  Rng rng(33);
  for (auto& v : coef) v = rng.uniform(-1.0f, 1.0f) + 1e-3f;
  float *d_coef, *d_out;
  CK(cudaMalloc(&d_coef, coef.size() * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_coef, coef.data(), coef.size() * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    trajectory_power<<<n / 256, 256>>>(d_coef, d_out, n, steps);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  const float dt = 2.0f / (steps - 1);
  for (int i = 0; i < n; i += 97, ++checked) {
    float c[kCoef];
    for (int k = 0; k < kCoef; ++k) c[k] = coef[(size_t)k * n + i];
    double acc = 0.0;
    for (int s = 0; s < steps; ++s) {
      double v = cheb_ref(c, kCoef, std::fmaf((float)s, dt, -1.0f));
      acc += v * v;
    }
    bad += !close_enough(out[i], acc / steps, 1e-4, 1e-6);
  }
  CK(cudaFree(d_coef));
  CK(cudaFree(d_out));
  return verdict("cheb_noinline", bad, checked);
}
