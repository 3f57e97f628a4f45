// Per-thread evaluation of a long series whose arguments come from an L2-resident lookup table: each
// step loads a table entry (coalesced across the warp), feeds it at once into a 48-step dependent
// polynomial and stores the term into a trace. The load latency is exposed once per step, and nvcc
// cannot start the next step's load earlier by itself: the trace store may alias the table.
// A grid of one 256-thread block per SM leaves two warps per scheduler, too few to hide it.
// Fix (warpwise's first advice): the step loop unrolled by 8 and the table read through a
// const __restrict__ pointer, so the unrolled steps may load ahead of the previous steps' stores.
#include "../bench.cuh"

constexpr int kDeg = 48;
__constant__ float c_poly[kDeg];

__global__ void series_eval(const float* __restrict__ tab, unsigned mask, float* trace, float* out, int iters) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
  float acc = 0.0f;
#pragma unroll 8
  for (int k = 0; k < iters; ++k) {
    float v = tab[(i + 4099u * k) & mask];
    float p = 0.0f;
#pragma unroll
    for (int j = 0; j < kDeg; ++j) p = fmaf(p, v, c_poly[j]);
    trace[(size_t)k * n + i] = p;
    acc += p;
  }
  out[i] = acc;
}

int main() {
  const unsigned table = 1u << 21, mask = table - 1;  // 8 MB: stays in L2
  const int iters = 512;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int threads = 256, n = sms * threads;
  std::vector<float> tab(table), out(n), trace((size_t)iters * n), poly(kDeg);
  Rng rng(25);
  for (auto& v : tab) v = rng.uniform(-0.9f, 0.9f);
  for (auto& c : poly) c = rng.uniform(-0.5f, 0.5f);
  float *d_tab, *d_trace, *d_out;
  CK(cudaMalloc(&d_tab, table * sizeof(float)));
  CK(cudaMalloc(&d_trace, trace.size() * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_tab, tab.data(), table * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpyToSymbol(c_poly, poly.data(), kDeg * sizeof(float)));
  for (int rep = 0; rep < 3; ++rep) {
    series_eval<<<sms, threads>>>(d_tab, mask, d_trace, d_out, iters);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(trace.data(), d_trace, trace.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 131, ++checked) {
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) {
      float v = tab[((unsigned)i + 4099u * (unsigned)k) & mask], p = 0.0f;
      for (int j = 0; j < kDeg; ++j) p = std::fmaf(p, v, poly[j]);
      bad += !close_enough(trace[(size_t)k * n + i], p, 1e-6, 1e-6);
      acc += p;
    }
    bad += !close_enough(out[i], acc, 1e-5, 1e-5);
  }
  CK(cudaFree(d_tab));
  CK(cudaFree(d_trace));
  CK(cudaFree(d_out));
  return verdict("table_prefetch_unroll", bad, checked);
}
