// Bias + GELU (tanh form) epilogue over fp16 activations of a 16384 x 4096 layer, written element-wise: one
// __half per thread, converted to float, bias added, GELU, converted back; 2-byte loads and stores (64 bytes
// per warp request), so a full SM has only 4 KB of activation loads in flight.
#include <cuda_fp16.h>

#include "bench.cuh"

constexpr int ROWS = 16384, COLS = 4096;

__device__ __forceinline__ float gelu_tanh(float v) {
  return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
}

__global__ void bias_gelu(const __half* __restrict__ act, const __half* __restrict__ bias, __half* __restrict__ out) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int col = static_cast<int>(i % COLS);
  out[i] = __float2half(gelu_tanh(__half2float(act[i]) + __half2float(bias[col])));
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
    bias_gelu<<<n / 256, 256>>>(d_act, d_bias, d_out);
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
