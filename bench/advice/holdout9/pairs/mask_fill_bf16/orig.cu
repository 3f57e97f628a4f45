// Attention-score masking (masked_fill) of a transformer: scores [32 heads x 2048 x 2048] bf16, a [2048 x 2048]
// byte mask shared by all heads, out = mask ? -inf : scale * score. Eight bf16 per thread through one 16-byte
// load and store and an 8-byte mask load (L2-resident after the first heads), 537 MB of DRAM traffic per launch:
// DRAM-bound, nothing to gain.
#include <cuda_bf16.h>
#include "bench.cuh"

struct MaskSpec {
  const unsigned char* mask;  // [q][k], 1 = masked
  int kv, q;                  // keys per row, query rows per head
  float scale;
  __device__ float apply(unsigned char m, float s) const { return m ? -INFINITY : scale * s; }
};

__global__ void masked_fill(const uint4* __restrict__ scores, uint4* __restrict__ out, MaskSpec spec, int per_head8) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;  // 8-value group within the head blockIdx.y
  if (j >= per_head8) return;
  const long i = static_cast<long>(blockIdx.y) * per_head8 + j;
  const uint2 m8 = reinterpret_cast<const uint2*>(spec.mask)[j];
  const uint4 v = scores[i];
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
  const unsigned char* m = reinterpret_cast<const unsigned char*>(&m8);
  uint4 r;
  __nv_bfloat162* o = reinterpret_cast<__nv_bfloat162*>(&r);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = __bfloat1622float2(h[k]);
    o[k] = __floats2bfloat162_rn(spec.apply(m[2 * k], f.x), spec.apply(m[2 * k + 1], f.y));
  }
  out[i] = r;
}

int main() {
  const int heads = 32, q = 2048, kv = 2048;
  const long n = static_cast<long>(heads) * q * kv, per_head = static_cast<long>(q) * kv;
  const int per_head8 = static_cast<int>(per_head / 8);
  std::vector<__nv_bfloat16> sc(n), got(n);
  std::vector<unsigned char> mask(per_head);
  Rng rng(9606);
  for (auto& v : sc) v = __float2bfloat16(rng.uniform(-8, 8));
  for (int r = 0; r < q; ++r)  // causal mask plus some padding keys
    for (int c = 0; c < kv; ++c) mask[static_cast<long>(r) * kv + c] = (c > r) || (rng.next() % 16 == 0);
  __nv_bfloat16 *d_sc, *d_out;
  unsigned char* d_mask;
  CK(cudaMalloc(&d_sc, n * sizeof(__nv_bfloat16)));
  CK(cudaMalloc(&d_out, n * sizeof(__nv_bfloat16)));
  CK(cudaMalloc(&d_mask, per_head));
  CK(cudaMemcpy(d_sc, sc.data(), n * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_mask, mask.data(), per_head, cudaMemcpyHostToDevice));
  const MaskSpec spec{d_mask, kv, q, 0.125f};
  for (int rep = 0; rep < 3; ++rep) {
    masked_fill<<<dim3((per_head8 + 255) / 256, heads), 256>>>(reinterpret_cast<const uint4*>(d_sc),
                                                                   reinterpret_cast<uint4*>(d_out), spec, per_head8);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_out, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (long i = 0; i < n; ++i) {
    const float want = mask[i % per_head] ? -INFINITY : __bfloat162float(__float2bfloat16(0.125f * __bfloat162float(sc[i])));
    const float g = __bfloat162float(got[i]);
    bad += !(g == want);
  }
  CK(cudaFree(d_sc));
  CK(cudaFree(d_out));
  CK(cudaFree(d_mask));
  return verdict("mask_fill_bf16", bad, n);
}
