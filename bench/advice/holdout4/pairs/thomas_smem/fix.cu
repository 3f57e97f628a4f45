// Batched tridiagonal solves (orig.cu's program) with each system padded to 33 words in shared memory,
// s[t * 33 + i]: the 32 lanes of a warp now touch 32 different banks on every access of the sweeps. Same
// coalesced copies in and out (element j of the block goes to (j / 32) * 33 + j % 32).
#include "bench.cuh"

constexpr int kN = 32, kSys = 64;  // unknowns per system, systems (threads) per block
constexpr int kPad = kN + 1;       // shared-memory stride of one system

__global__ void thomas_batch(const float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c,
                             const float* __restrict__ d, float* __restrict__ x, int nsys) {
  __shared__ float sa[kSys * kPad], sb[kSys * kPad], sc[kSys * kPad], sd[kSys * kPad];
  const size_t base = (size_t)blockIdx.x * kSys * kN;
  for (int j = threadIdx.x; j < kSys * kN; j += kSys) {  // coalesced copy-in
    const int p = (j / kN) * kPad + j % kN;
    sa[p] = a[base + j];
    sb[p] = b[base + j];
    sc[p] = c[base + j];
    sd[p] = d[base + j];
  }
  __syncthreads();
  const int s = threadIdx.x * kPad;
  if (blockIdx.x * kSys + threadIdx.x < nsys) {
    // forward sweep: c'_i = c_i / (b_i - a_i c'_{i-1}), d'_i = (d_i - a_i d'_{i-1}) / (b_i - a_i c'_{i-1})
    sc[s] = sc[s] / sb[s];
    sd[s] = sd[s] / sb[s];
    for (int i = 1; i < kN; ++i) {
      const float m = 1.0f / (sb[s + i] - sa[s + i] * sc[s + i - 1]);
      sc[s + i] = sc[s + i] * m;
      sd[s + i] = (sd[s + i] - sa[s + i] * sd[s + i - 1]) * m;
    }
    // back substitution, x overwrites d'
    for (int i = kN - 2; i >= 0; --i) sd[s + i] = sd[s + i] - sc[s + i] * sd[s + i + 1];
  }
  __syncthreads();
  for (int j = threadIdx.x; j < kSys * kN; j += kSys) x[base + j] = sd[(j / kN) * kPad + j % kN];  // coalesced copy-out
}

int main() {
  const int nsys = 262144;
  const size_t n = (size_t)nsys * kN;
  std::vector<float> a(n), b(n), c(n), d(n), x(n);
  Rng rng(4407);
  for (size_t i = 0; i < n; ++i) {
    a[i] = i % kN == 0 ? 0.0f : rng.uniform(-1.0f, 1.0f);
    c[i] = i % kN == kN - 1 ? 0.0f : rng.uniform(-1.0f, 1.0f);
    b[i] = rng.uniform(3.0f, 5.0f);  // diagonally dominant: the sweep is stable without pivoting
    d[i] = rng.uniform(-1.0f, 1.0f);
  }
  float *d_a, *d_b, *d_c, *d_d, *d_x;
  for (float** p : {&d_a, &d_b, &d_c, &d_d, &d_x}) CK(cudaMalloc(p, n * sizeof(float)));
  CK(cudaMemcpy(d_a, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_b, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_c, c.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_d, d.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    thomas_batch<<<(nsys + kSys - 1) / kSys, kSys>>>(d_a, d_b, d_c, d_d, d_x, nsys);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(x.data(), d_x, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  std::vector<double> cp(kN), dp(kN);
  for (int sys = 0; sys < nsys; sys += 17) {
    const size_t o = (size_t)sys * kN;
    cp[0] = (double)c[o] / b[o];
    dp[0] = (double)d[o] / b[o];
    for (int i = 1; i < kN; ++i) {
      const double m = 1.0 / ((double)b[o + i] - (double)a[o + i] * cp[i - 1]);
      cp[i] = c[o + i] * m;
      dp[i] = ((double)d[o + i] - (double)a[o + i] * dp[i - 1]) * m;
    }
    for (int i = kN - 2; i >= 0; --i) dp[i] -= cp[i] * dp[i + 1];
    for (int i = 0; i < kN; ++i) {
      bad += !close_enough(x[o + i], dp[i], 1e-4, 1e-5);
      ++checked;
    }
  }
  for (float* p : {d_a, d_b, d_c, d_d, d_x}) CK(cudaFree(p));
  return verdict("thomas_smem", bad, checked);
}
