// RMSNorm forward of a transformer's hidden states, 16384 tokens x 4096 bf16 (y = x / rms(x) * weight), done
// the way fused LLM kernels do it: one 512-thread block per row, each thread one 16-byte load of 8 values kept in
// registers, the sum of squares in float reduced by warp shuffles and one shared-memory step (one barrier), the
// weights read as 16-byte vectors (L2-resident), one 16-byte store per thread. 16 bytes of DRAM traffic per
// 8 values and a handful of instructions: DRAM-bound.
#include <cuda_bf16.h>

#include "bench.cuh"

constexpr int kHidden = 4096, kThreads = 512, kVec = 8;  // kThreads * kVec == kHidden

union Pack8 {
  uint4 raw;
  __nv_bfloat162 h[4];
};

__global__ void rmsnorm_rows(const uint4* __restrict__ x, const uint4* __restrict__ weight, float eps,
                             uint4* __restrict__ y) {
  __shared__ float part[kThreads / 32];
  const size_t base = (size_t)blockIdx.x * (kHidden / kVec);
  Pack8 v, w;
  v.raw = x[base + threadIdx.x];
  float f[kVec], ss = 0.0f;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 p = __bfloat1622float2(v.h[k]);
    f[2 * k] = p.x;
    f[2 * k + 1] = p.y;
    ss += p.x * p.x + p.y * p.y;
  }
#pragma unroll
  for (int d = 16; d > 0; d /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, d);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = ss;
  __syncthreads();
  ss = threadIdx.x % 32 < kThreads / 32 ? part[threadIdx.x % 32] : 0.0f;
#pragma unroll
  for (int d = 16; d > 0; d /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, d);
  const float r = rsqrtf(ss / kHidden + eps);
  w.raw = weight[threadIdx.x];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 g = __bfloat1622float2(w.h[k]);
    v.h[k] = __floats2bfloat162_rn(f[2 * k] * r * g.x, f[2 * k + 1] * r * g.y);
  }
  y[base + threadIdx.x] = v.raw;
}

int main() {
  const int rows = 16384;
  const size_t n = (size_t)rows * kHidden;
  const float eps = 1e-6f;
  std::vector<__nv_bfloat16> x(n), w(kHidden), got(n);
  Rng rng(7019);
  for (auto& v : x) v = __float2bfloat16(rng.uniform(-2.0f, 2.0f));
  for (auto& v : w) v = __float2bfloat16(rng.uniform(0.5f, 1.5f));
  uint4 *d_x, *d_w, *d_y;
  CK(cudaMalloc(&d_x, n * 2));
  CK(cudaMalloc(&d_w, kHidden * 2));
  CK(cudaMalloc(&d_y, n * 2));
  CK(cudaMemcpy(d_x, x.data(), n * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_w, w.data(), kHidden * 2, cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    rmsnorm_rows<<<rows, kThreads>>>(d_x, d_w, eps, d_y);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_y, n * 2, cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int r = 0; r < rows; r += 17) {
    double ss = 0.0;
    for (int c = 0; c < kHidden; ++c) ss += (double)__bfloat162float(x[(size_t)r * kHidden + c]) * __bfloat162float(x[(size_t)r * kHidden + c]);
    const double inv = 1.0 / std::sqrt(ss / kHidden + eps);
    for (int c = 0; c < kHidden; ++c, ++checked) {
      const double want = __bfloat162float(x[(size_t)r * kHidden + c]) * inv * __bfloat162float(w[c]);
      bad += !close_enough(__bfloat162float(got[(size_t)r * kHidden + c]), want, 1e-2, 1e-3);
    }
  }
  CK(cudaFree(d_x));
  CK(cudaFree(d_w));
  CK(cudaFree(d_y));
  return verdict("rmsnorm_bf16", bad, checked);
}
