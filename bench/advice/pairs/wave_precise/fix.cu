// Synthetic seismogram: each receiver sums 32 damped wavelets, every term through the precise
// single-precision math library calls (sinf, expf, powf, a division), built with -use_fast_math.
#include "../bench.cuh"

constexpr int kTerms = 32;

__global__ void seismogram(const float* __restrict__ dist, float* __restrict__ trace, int n, float t) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float r = dist[i], acc = 0.0f;
  for (int k = 1; k <= kTerms; ++k) {
    float f = 0.75f * k;
    acc += expf(-0.05f * f * r) * sinf(f * (t - r) + 0.3f * k) * powf(r, -0.5f) / (1.0f + 0.1f * f * r);
  }
  trace[i] = acc;
}

int main() {
  const int n = 1 << 22;
  const float t = 3.0f;
  std::vector<float> d(n), tr(n);
  Rng rng(18);
  for (auto& v : d) v = rng.uniform(0.5f, 4.0f);
  float *d_d, *d_t;
  CK(cudaMalloc(&d_d, n * sizeof(float)));
  CK(cudaMalloc(&d_t, n * sizeof(float)));
  CK(cudaMemcpy(d_d, d.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    seismogram<<<(n + 255) / 256, 256>>>(d_d, d_t, n, t);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(tr.data(), d_t, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 53, ++checked) {
    double r = d[i], acc = 0.0;
    for (int k = 1; k <= kTerms; ++k) {
      double f = 0.75 * k;
      acc += std::exp(-0.05 * f * r) * std::sin(f * (t - r) + 0.3 * k) * std::pow(r, -0.5) / (1.0 + 0.1 * f * r);
    }
    // loose enough for the fast-math build of the same source (MUFU.SIN on arguments up to ~30 rad)
    bad += !close_enough(tr[i], acc, 1e-3, 1e-3);
  }
  CK(cudaFree(d_d));
  CK(cudaFree(d_t));
  return verdict("wave_precise", bad, checked);
}
