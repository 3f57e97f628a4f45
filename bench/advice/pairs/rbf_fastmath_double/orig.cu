// Gaussian radial-basis-function interpolation: every point sums the weighted kernels of 128 centres
// held in constant memory. Built with -use_fast_math, but exp() of a double argument (the -0.5 literal
// promotes the exponent) calls the FP64 exponential, which the flag leaves precise.
#include "../bench.cuh"

constexpr int kCentres = 128;
__constant__ float4 c_centre[kCentres];  // x, y, weight, 1/(2 sigma^2)

__global__ void rbf_eval(const float2* __restrict__ p, float* __restrict__ f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float2 q = p[i];
  float acc = 0.0f;
  for (int j = 0; j < kCentres; ++j) {
    float4 c = c_centre[j];
    float dx = q.x - c.x, dy = q.y - c.y;
    acc += c.z * exp(-0.5 * (dx * dx + dy * dy) * c.w);
  }
  f[i] = acc;
}

int main() {
  const int n = 1 << 21;
  std::vector<float2> p(n);
  std::vector<float> f(n);
  std::vector<float4> centre(kCentres);
  Rng rng(17);
  for (auto& c : centre) c = make_float4(rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.1f, 1), rng.uniform(4, 40));
  for (auto& q : p) q = make_float2(rng.uniform(0, 1), rng.uniform(0, 1));
  float2* d_p;
  float* d_f;
  CK(cudaMalloc(&d_p, n * sizeof(float2)));
  CK(cudaMalloc(&d_f, n * sizeof(float)));
  CK(cudaMemcpy(d_p, p.data(), n * sizeof(float2), cudaMemcpyHostToDevice));
  CK(cudaMemcpyToSymbol(c_centre, centre.data(), kCentres * sizeof(float4)));
  for (int rep = 0; rep < 3; ++rep) {
    rbf_eval<<<(n + 255) / 256, 256>>>(d_p, d_f, n);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(f.data(), d_f, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 37, ++checked) {
    double acc = 0.0;
    for (const auto& c : centre) {
      double dx = p[i].x - c.x, dy = p[i].y - c.y;
      acc += c.z * std::exp(-0.5 * (dx * dx + dy * dy) * c.w);
    }
    bad += !close_enough(f[i], acc, 1e-4, 1e-5);
  }
  CK(cudaFree(d_p));
  CK(cudaFree(d_f));
  return verdict("rbf_fastmath_double", bad, checked);
}
