// Residual connection of a transformer block in bf16: out = x + residual over 128 M elements (three
// 256 MB streams), eight bf16 per thread through 16-byte loads and stores and four __hadd2. Coalesced,
// vectorised, two flops per 6 bytes: DRAM-bound. fix.cu, the plausible change that should gain nothing:
// a grid-stride loop over one wave of blocks (cudaOccupancyMaxActiveBlocksPerMultiprocessor x SMs).
#include <cuda_bf16.h>

#include "bench.cuh"

__global__ void residual_add(const uint4* __restrict__ x, const uint4* __restrict__ r, uint4* __restrict__ out,
                             size_t n_vec) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += (size_t)gridDim.x * blockDim.x) {
    uint4 a = x[i], b = r[i], c;
    const __nv_bfloat162* pa = reinterpret_cast<const __nv_bfloat162*>(&a);
    const __nv_bfloat162* pb = reinterpret_cast<const __nv_bfloat162*>(&b);
    __nv_bfloat162* pc = reinterpret_cast<__nv_bfloat162*>(&c);
#pragma unroll
    for (int k = 0; k < 4; ++k) pc[k] = __hadd2(pa[k], pb[k]);
    out[i] = c;
  }
}

int main() {
  const size_t n = 128u << 20, n_vec = n / 8;
  std::vector<__nv_bfloat16> x(n), r(n), out(n);
  Rng rng(4212);
  for (size_t i = 0; i < n; ++i) {
    x[i] = __float2bfloat16(rng.uniform(-4.0f, 4.0f));
    r[i] = __float2bfloat16(rng.uniform(-1.0f, 1.0f));
  }
  uint4 *d_x, *d_r, *d_out;
  CK(cudaMalloc(&d_x, n * 2));
  CK(cudaMalloc(&d_r, n * 2));
  CK(cudaMalloc(&d_out, n * 2));
  CK(cudaMemcpy(d_x, x.data(), n * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_r, r.data(), n * 2, cudaMemcpyHostToDevice));
  int sms = 0, per_sm = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, residual_add, 256, 0));
  for (int rep = 0; rep < 3; ++rep) {
    residual_add<<<sms * per_sm, 256>>>(d_x, d_r, d_out, n_vec);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, n * 2, cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t i = 0; i < n; i += 11) {
    // the exact sum (in double), within one bf16 ulp (2^-7 relative; a correctly rounded add is within half)
    double want = (double)__bfloat162float(x[i]) + (double)__bfloat162float(r[i]);
    bad += !close_enough(__bfloat162float(out[i]), want, 1.0 / 128, 0.0);
    ++checked;
  }
  CK(cudaFree(d_x));
  CK(cudaFree(d_r));
  CK(cudaFree(d_out));
  return verdict("residual_add_bf16", bad, checked);
}
