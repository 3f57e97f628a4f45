// Log-likelihood of 4 M points (4-D, float4) under a 64-component diagonal Gaussian mixture, as in an EM
// or anomaly-scoring step: per point and component the standardised distance ((x - mu) / sd)^2 (four IEEE
// divisions), then a streaming log-sum-exp over the components (two expf each) and a final logf. The
// mixture lives in __constant__ memory (read uniformly, broadcast). Built without -use_fast_math, so the
// divisions are the precise div.rn sequence with its slow-path check and expf/logf the full-range
// precise forms: compute-bound float math.
#include "bench.cuh"

constexpr int kComp = 64;
__constant__ float4 c_mu[kComp];
__constant__ float4 c_sd[kComp];
__constant__ float c_lognorm[kComp];  // log weight - sum log sd - 2 log(2 pi)

__device__ __forceinline__ float component(float4 x, int k) {
  float4 mu = c_mu[k], sd = c_sd[k];
  float zx = (x.x - mu.x) / sd.x, zy = (x.y - mu.y) / sd.y, zz = (x.z - mu.z) / sd.z, zw = (x.w - mu.w) / sd.w;
  return c_lognorm[k] - 0.5f * (zx * zx + zy * zy + zz * zz + zw * zw);
}

__global__ void gmm_loglik(const float4* __restrict__ pts, float* __restrict__ loglik, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 x = pts[i];
  float m = component(x, 0), s = 1.0f;
  for (int k = 1; k < kComp; ++k) {
    float l = component(x, k);
    float m_new = fmaxf(m, l);
    s = s * expf(m - m_new) + expf(l - m_new);
    m = m_new;
  }
  loglik[i] = m + logf(s);
}

int main() {
  const int n = 4 << 20;
  std::vector<float4> pts(n), mu(kComp), sd(kComp);
  std::vector<float> lognorm(kComp), loglik(n);
  Rng rng(3808);
  double wsum = 0.0;
  std::vector<double> w(kComp);
  for (int k = 0; k < kComp; ++k) {
    mu[k] = make_float4(rng.uniform(-4, 4), rng.uniform(-4, 4), rng.uniform(-4, 4), rng.uniform(-4, 4));
    sd[k] = make_float4(rng.uniform(0.3f, 2), rng.uniform(0.3f, 2), rng.uniform(0.3f, 2), rng.uniform(0.3f, 2));
    w[k] = rng.uniform(0.1f, 1.0f);
    wsum += w[k];
  }
  for (int k = 0; k < kComp; ++k)
    lognorm[k] = (float)(std::log(w[k] / wsum) - std::log((double)sd[k].x * sd[k].y * sd[k].z * sd[k].w) -
                         2.0 * std::log(2.0 * M_PI));
  for (auto& p : pts) p = make_float4(rng.uniform(-6, 6), rng.uniform(-6, 6), rng.uniform(-6, 6), rng.uniform(-6, 6));
  CK(cudaMemcpyToSymbol(c_mu, mu.data(), kComp * sizeof(float4)));
  CK(cudaMemcpyToSymbol(c_sd, sd.data(), kComp * sizeof(float4)));
  CK(cudaMemcpyToSymbol(c_lognorm, lognorm.data(), kComp * sizeof(float)));
  float4* d_pts;
  float* d_ll;
  CK(cudaMalloc(&d_pts, n * sizeof(float4)));
  CK(cudaMalloc(&d_ll, n * sizeof(float)));
  CK(cudaMemcpy(d_pts, pts.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    gmm_loglik<<<(n + 255) / 256, 256>>>(d_pts, d_ll, n);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(loglik.data(), d_ll, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 101) {
    const float4 x = pts[i];
    double l[kComp], m = -INFINITY, s = 0.0;
    for (int k = 0; k < kComp; ++k) {
      double zx = ((double)x.x - mu[k].x) / sd[k].x, zy = ((double)x.y - mu[k].y) / sd[k].y;
      double zz = ((double)x.z - mu[k].z) / sd[k].z, zw = ((double)x.w - mu[k].w) / sd[k].w;
      l[k] = lognorm[k] - 0.5 * (zx * zx + zy * zy + zz * zz + zw * zw);
      m = std::fmax(m, l[k]);
    }
    for (int k = 0; k < kComp; ++k) s += std::exp(l[k] - m);
    bad += !close_enough(loglik[i], m + std::log(s), 1e-4, 1e-4);
    ++checked;
  }
  CK(cudaFree(d_pts));
  CK(cudaFree(d_ll));
  return verdict("gmm_loglik", bad, checked);
}
