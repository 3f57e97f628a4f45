// SwiGLU activation of an LLM MLP block (out = silu(gate) * up) over 8192 tokens x 8192 features in bf16 (gate and
// up as two separate tensors), done right: eight bf16 per thread through 16-byte loads of each input and one
// 16-byte store, math in float with __expf, 256-thread blocks, 403 MB per launch: DRAM-bound. Probe (should not
// pay): 1024-thread blocks.
#include "bench.cuh"

#include <cuda_bf16.h>

struct Bf16x8 {
  __nv_bfloat162 h[4];
};

__global__ void swiglu_fwd(const uint4* __restrict__ gate, const uint4* __restrict__ up, uint4* __restrict__ out, int vecs) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= vecs) return;
  const uint4 gv = gate[i], uv = up[i];
  const Bf16x8 g = *reinterpret_cast<const Bf16x8*>(&gv), u = *reinterpret_cast<const Bf16x8*>(&uv);
  Bf16x8 o;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 gf = __bfloat1622float2(g.h[k]), uf = __bfloat1622float2(u.h[k]);
    const float a = gf.x / (1.0f + __expf(-gf.x)) * uf.x, b = gf.y / (1.0f + __expf(-gf.y)) * uf.y;
    o.h[k] = __floats2bfloat162_rn(a, b);
  }
  out[i] = *reinterpret_cast<const uint4*>(&o);
}

static float bf2f(__nv_bfloat16 v) { return __bfloat162float(v); }

int main() {
  const long n = 8192L * 8192;
  const int vecs = static_cast<int>(n / 8);
  std::vector<__nv_bfloat16> gate(n), up(n), got(n);
  Rng rng(8111);
  for (long i = 0; i < n; ++i) gate[i] = __float2bfloat16(rng.uniform(-4, 4)), up[i] = __float2bfloat16(rng.uniform(-2, 2));
  uint4 *d_g, *d_u, *d_o;
  CK(cudaMalloc(&d_g, n * 2));
  CK(cudaMalloc(&d_u, n * 2));
  CK(cudaMalloc(&d_o, n * 2));
  CK(cudaMemcpy(d_g, gate.data(), n * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_u, up.data(), n * 2, cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    swiglu_fwd<<<(vecs + 1023) / 1024, 1024>>>(d_g, d_u, d_o, vecs);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_o, n * 2, cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (long i = 0; i < n; i += 7, ++checked) {
    const double g = bf2f(gate[i]), u = bf2f(up[i]), want = g / (1.0 + std::exp(-g)) * u;
    bad += !close_enough(bf2f(got[i]), want, 1e-2, 1e-3);  // bf16 keeps 8 bits of mantissa
  }
  CK(cudaFree(d_g));
  CK(cudaFree(d_u));
  CK(cudaFree(d_o));
  return verdict("swiglu_bf16", bad, checked);
}
