// mpm_polar_fastmath, fix: the same source built with -use_fast_math (pair.json fix_nvcc_flags): approximate
// division, reciprocal and square root in the polar iteration; this file differs from orig.cu only in this comment.
#include "bench.cuh"

struct Mat3 {
  float m[9];
};

struct ParticleSoA {
  float* f[9];    // deformation gradient, component-major
  float* tau[9];  // stress out
  __device__ __host__ Mat3 load(int p) const {
    Mat3 a;
    for (int k = 0; k < 9; ++k) a.m[k] = f[k][p];
    return a;
  }
};

struct Material {
  float mu, lambda;
};

__device__ __host__ inline Mat3 inv_transpose(const Mat3& a, float& det) {
  const float* m = a.m;
  const float c0 = m[4] * m[8] - m[5] * m[7], c1 = m[5] * m[6] - m[3] * m[8], c2 = m[3] * m[7] - m[4] * m[6];
  det = m[0] * c0 + m[1] * c1 + m[2] * c2;
  const float r = 1.0f / det;
  Mat3 t;
  t.m[0] = c0 * r, t.m[1] = c1 * r, t.m[2] = c2 * r;
  t.m[3] = (m[2] * m[7] - m[1] * m[8]) * r, t.m[4] = (m[0] * m[8] - m[2] * m[6]) * r, t.m[5] = (m[1] * m[6] - m[0] * m[7]) * r;
  t.m[6] = (m[1] * m[5] - m[2] * m[4]) * r, t.m[7] = (m[2] * m[3] - m[0] * m[5]) * r, t.m[8] = (m[0] * m[4] - m[1] * m[3]) * r;
  return t;
}

__device__ __host__ inline void stress(const Mat3& F, const Material& mat, float* out) {
  Mat3 R = F;
  float det = 1.0f;
  for (int it = 0; it < 12; ++it) {
    const Mat3 T = inv_transpose(R, det);
    float nr = 0.0f, nt = 0.0f;  // Higham's Frobenius-norm scaling: R <- (g R + T / g) / 2, g = (|T| / |R|)^(1/2)
    for (int k = 0; k < 9; ++k) nr += R.m[k] * R.m[k], nt += T.m[k] * T.m[k];
    const float g = sqrtf(sqrtf(nt / nr)), ig = 1.0f / g;
    for (int k = 0; k < 9; ++k) R.m[k] = 0.5f * (g * R.m[k] + ig * T.m[k]);
  }
  float J;
  inv_transpose(F, J);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      float s = 0.0f;
      for (int k = 0; k < 3; ++k) s += (F.m[3 * i + k] - R.m[3 * i + k]) * F.m[3 * j + k];
      out[3 * i + j] = 2.0f * mat.mu * s + (i == j ? mat.lambda * (J - 1.0f) * J : 0.0f);
    }
}

__global__ void __launch_bounds__(1024, 2) mpm_stress(ParticleSoA ps, Material mat, int n) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= n) return;
  float out[9];
  stress(ps.load(p), mat, out);
#pragma unroll
  for (int k = 0; k < 9; ++k) ps.tau[k][p] = out[k];
}

int main() {
  const int n = 1 << 21;
  std::vector<float> f(9 * static_cast<size_t>(n)), tau(9 * static_cast<size_t>(n));
  Rng rng(9707);
  for (int p = 0; p < n; ++p)  // near-identity deformations with some rotation and stretch
    for (int k = 0; k < 9; ++k) f[static_cast<size_t>(k) * n + p] = (k % 4 == 0 ? 1.0f : 0.0f) + rng.uniform(-0.3f, 0.3f);
  float *d_f, *d_tau;
  CK(cudaMalloc(&d_f, f.size() * sizeof(float)));
  CK(cudaMalloc(&d_tau, tau.size() * sizeof(float)));
  CK(cudaMemcpy(d_f, f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
  ParticleSoA ps;
  for (int k = 0; k < 9; ++k) ps.f[k] = d_f + static_cast<size_t>(k) * n, ps.tau[k] = d_tau + static_cast<size_t>(k) * n;
  const Material mat{3.0f, 5.0f};
  for (int rep = 0; rep < 3; ++rep) {
    mpm_stress<<<(n + 1023) / 1024, 1024>>>(ps, mat, n);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(tau.data(), d_tau, tau.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int p = 0; p < n; p += 13) {
    Mat3 F;
    for (int k = 0; k < 9; ++k) F.m[k] = f[static_cast<size_t>(k) * n + p];
    float want[9];
    stress(F, mat, want);
    for (int k = 0; k < 9; ++k, ++checked) bad += !close_enough(tau[static_cast<size_t>(k) * n + p], want[k], 1e-3, 1e-3);
  }
  CK(cudaFree(d_f));
  CK(cudaFree(d_tau));
  return verdict("mpm_polar_fastmath", bad, checked);
}
