// Weight-only int8 dequantisation (per-row scale) of a 16384 x 8192 matrix to fp32, as an inference
// runtime does before a non-quantised GEMM: 128 MB of int8 in, 512 MB of float out. Each thread converts
// 16 consecutive weights: one 16-byte load, four float4 stores, a few instructions per weight. Coalesced
// and vectorised: DRAM-bound.
#include "bench.cuh"

__global__ void dequant_rows(const int8_t* __restrict__ q, const float* __restrict__ scale, float* __restrict__ w,
                             int cols) {
  int row = blockIdx.y;
  int c = (blockIdx.x * blockDim.x + threadIdx.x) * 16;
  if (c >= cols) return;
  size_t base = (size_t)row * cols + c;
  int4 packed = *reinterpret_cast<const int4*>(q + base);
  float s = scale[row];
  const int8_t* b = reinterpret_cast<const int8_t*>(&packed);
  float4* out = reinterpret_cast<float4*>(w + base);
#pragma unroll
  for (int k = 0; k < 4; ++k)
    out[k] = make_float4(s * b[4 * k], s * b[4 * k + 1], s * b[4 * k + 2], s * b[4 * k + 3]);
}

int main() {
  const int rows = 16384, cols = 8192;
  const size_t n = (size_t)rows * cols;
  std::vector<int8_t> q(n);
  std::vector<float> scale(rows), w(n);
  Rng rng(4111);
  for (auto& v : q) v = (int8_t)((int)(rng.next() % 255) - 127);
  for (auto& s : scale) s = rng.uniform(0.001f, 0.02f);
  int8_t* d_q;
  float *d_scale, *d_w;
  CK(cudaMalloc(&d_q, n));
  CK(cudaMalloc(&d_scale, rows * sizeof(float)));
  CK(cudaMalloc(&d_w, n * sizeof(float)));
  CK(cudaMemcpy(d_q, q.data(), n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_scale, scale.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
  const int threads = 256;
  const dim3 grid((cols / 16 + threads - 1) / threads, rows);
  for (int rep = 0; rep < 3; ++rep) {
    dequant_rows<<<grid, threads>>>(d_q, d_scale, d_w, cols);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(w.data(), d_w, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t i = 0; i < n; i += 7) {
    bad += w[i] != scale[i / cols] * (float)q[i];  // one rounding on both sides: exact
    ++checked;
  }
  CK(cudaFree(d_q));
  CK(cudaFree(d_scale));
  CK(cudaFree(d_w));
  return verdict("dequant_int8", bad, checked);
}
