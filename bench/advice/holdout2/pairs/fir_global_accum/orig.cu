// A 32-tap FIR filter over a 16 M-sample signal (the filter stage of a software radio / audio chain),
// one thread per output. The output is accumulated in global memory, out[i] += taps[t] * in[i + t], and
// the pointers are not restrict-qualified: each tap's store may change in[] or taps[], so every tap is a
// store to L2 followed by fresh loads that cannot be moved ahead of it.
#include "bench.cuh"

__global__ void fir(const float* in, const float* taps, float* out, int n, int ntaps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = 0.0f;
  for (int t = 0; t < ntaps; ++t) out[i] += taps[t] * in[i + t];
}

int main() {
  const int n = 16 << 20, ntaps = 32;
  std::vector<float> in(n + ntaps), taps(ntaps), out(n);
  Rng rng(707);
  for (auto& v : in) v = rng.uniform(-1.0f, 1.0f);
  for (auto& v : taps) v = rng.uniform(-0.25f, 0.25f);
  float *d_in, *d_taps, *d_out;
  CK(cudaMalloc(&d_in, (n + ntaps) * sizeof(float)));
  CK(cudaMalloc(&d_taps, ntaps * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_in, in.data(), (n + ntaps) * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_taps, taps.data(), ntaps * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    fir<<<n / 256, 256>>>(d_in, d_taps, d_out, n, ntaps);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int i = 0; i < n; ++i) {
    double want = 0.0;
    for (int t = 0; t < ntaps; ++t) want += (double)taps[t] * in[i + t];
    bad += !close_enough(out[i], want, 1e-4, 1e-5);
  }
  CK(cudaFree(d_in));
  CK(cudaFree(d_taps));
  CK(cudaFree(d_out));
  return verdict("fir_global_accum", bad, n);
}
