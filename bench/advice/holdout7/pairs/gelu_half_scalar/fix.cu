// Bias + GELU (tanh form) epilogue over fp16 activations of a 16384 x 4096 layer, written element-wise: one
// __half per thread in the original. Fix: eight halves per thread through one 16-byte load of activations, one of
// bias and one 16-byte store (__half2 unpacked to float2 for the math, which is unchanged).
#include <cuda_fp16.h>

#include "bench.cuh"

constexpr int ROWS = 16384, COLS = 4096;

__device__ __forceinline__ float gelu_tanh(float v) {
  return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
}

__global__ void bias_gelu(const __half* __restrict__ act, const __half* __restrict__ bias, __half* __restrict__ out) {
  const size_t i = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 8;
  const int col = static_cast<int>(i % COLS);
  const uint4 a = *reinterpret_cast<const uint4*>(act + i), b = *reinterpret_cast<const uint4*>(bias + col);
  const __half2* a2 = reinterpret_cast<const __half2*>(&a);
  const __half2* b2 = reinterpret_cast<const __half2*>(&b);
  uint4 r;
  __half2* r2 = reinterpret_cast<__half2*>(&r);
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const float2 x = __half22float2(a2[q]), y = __half22float2(b2[q]);
    r2[q] = __floats2half2_rn(gelu_tanh(x.x + y.x), gelu_tanh(x.y + y.y));
  }
  *reinterpret_cast<uint4*>(out + i) = r;
}

int main() {
  const size_t n = static_cast<size_t>(ROWS) * COLS;
  std::vector<__half> act(n), bias(COLS), got(n);
  Rng rng(7106);
  for (auto& v : act) v = __float2half(rng.uniform(-4.0f, 4.0f));
  for (auto& v : bias) v = __float2half(rng.uniform(-0.5f, 0.5f));
  __half *d_act, *d_bias, *d_out;
  CK(cudaMalloc(&d_act, n * sizeof(__half)));
  CK(cudaMalloc(&d_bias, COLS * sizeof(__half)));
  CK(cudaMalloc(&d_out, n * sizeof(__half)));
  CK(cudaMemcpy(d_act, act.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_bias, bias.data(), COLS * sizeof(__half), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    bias_gelu<<<n / (256 * 8), 256>>>(d_act, d_bias, d_out);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_out, n * sizeof(__half), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t i = 0; i < n; i += 5, ++checked) {
    const double v = static_cast<double>(__half2float(act[i])) + __half2float(bias[i % COLS]);
    const double want = 0.5 * v * (1.0 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
    bad += !close_enough(__half2float(got[i]), want, 2e-3, 2e-3);
  }
  CK(cudaFree(d_act));
  CK(cudaFree(d_bias));
  CK(cudaFree(d_out));
  return verdict("gelu_half_scalar", bad, checked);
}
