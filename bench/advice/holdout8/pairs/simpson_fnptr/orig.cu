// Batched numerical integration from a small quadrature library with a C-style callback API: the integrand is a
// device function pointer (looked up on the host from a __device__ table) and each thread integrates one item's
// parameterized integrand over [lo, hi] with composite Simpson's rule (512 intervals). Every one of the 513
// samples per thread is an indirect call (CALL through a register): the callee cannot be inlined, so each
// 8-instruction integrand costs a call, a return and the argument moves, and nothing is scheduled across calls.
#include "bench.cuh"

typedef float (*Integrand)(float x, float4 p);

__device__ float gauss_peak(float x, float4 p) {  // p.x exp(-p.y (x - p.z)^2) + p.w
  const float d = x - p.z;
  return fmaf(p.x, __expf(-p.y * d * d), p.w);
}
__device__ float lorentz_peak(float x, float4 p) {  // p.x / (1 + p.y (x - p.z)^2) + p.w
  const float d = x - p.z;
  return __fdividef(p.x, fmaf(p.y * d, d, 1.0f)) + p.w;
}
__device__ float damped_cos(float x, float4 p) {  // p.x exp(-p.y x) cos(p.z x) + p.w
  return fmaf(p.x * __expf(-p.y * x), __cosf(p.z * x), p.w);
}
__device__ Integrand integrand_table[3] = {gauss_peak, lorentz_peak, damped_cos};

struct Interval {
  float lo, hi;
  int intervals;  // even
};

__global__ void simpson_batch(Integrand f, const float4* __restrict__ params, float* __restrict__ out, int items,
                              Interval iv) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= items) return;
  const float4 p = params[i];
  const float h = (iv.hi - iv.lo) / iv.intervals;
  float odd = 0.0f, even = 0.0f;
  for (int k = 1; k < iv.intervals; k += 2) odd += f(iv.lo + k * h, p);
  for (int k = 2; k < iv.intervals; k += 2) even += f(iv.lo + k * h, p);
  out[i] = h / 3.0f * (f(iv.lo, p) + 4.0f * odd + 2.0f * even + f(iv.hi, p));
}

static double host_f(int kind, double x, const float4& p) {
  const double d = x - p.z;
  if (kind == 0) return p.x * std::exp(-p.y * d * d) + p.w;
  if (kind == 1) return p.x / (1.0 + p.y * d * d) + p.w;
  return p.x * std::exp(-p.y * x) * std::cos(p.z * x) + p.w;
}

int main() {
  const int items = 1 << 20;
  const Interval iv{0.0f, 4.0f, 512};
  std::vector<float4> params(items);
  std::vector<float> got(3L * items);
  Rng rng(8105);
  for (int i = 0; i < items; ++i)
    params[i] = make_float4(rng.uniform(0.5f, 2.0f), rng.uniform(0.5f, 4.0f), rng.uniform(0.5f, 3.5f), rng.uniform(-0.2f, 0.2f));
  float4* d_p;
  float* d_out;
  CK(cudaMalloc(&d_p, items * sizeof(float4)));
  CK(cudaMalloc(&d_out, 3L * items * sizeof(float)));
  CK(cudaMemcpy(d_p, params.data(), items * sizeof(float4), cudaMemcpyHostToDevice));
  Integrand table[3];
  CK(cudaMemcpyFromSymbol(table, integrand_table, sizeof(table)));
  for (int kind = 0; kind < 3; ++kind) {  // three integrals per item: one launch per integrand
    simpson_batch<<<(items + 255) / 256, 256>>>(table[kind], d_p, d_out + static_cast<long>(kind) * items, items, iv);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_out, 3L * items * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int kind = 0; kind < 3; ++kind)
    for (int i = 0; i < items; i += 509, ++checked) {
      const double h = (iv.hi - iv.lo) / iv.intervals;
      double s = host_f(kind, iv.lo, params[i]) + host_f(kind, iv.hi, params[i]), mag = 0.0;
      for (int k = 1; k < iv.intervals; ++k) s += (k % 2 ? 4.0 : 2.0) * host_f(kind, iv.lo + k * h, params[i]);
      for (int k = 0; k <= iv.intervals; ++k) mag += std::fabs(host_f(kind, iv.lo + k * h, params[i]));
      bad += !close_enough(got[static_cast<long>(kind) * items + i], h / 3.0 * s, 1e-3, 1e-4 * h * mag);
    }
  CK(cudaFree(d_p));
  CK(cudaFree(d_out));
  return verdict("simpson_fnptr", bad, checked);
}
