// Per-tensor statistics (sum, sum of squares, min, max: the mean/variance and amax of a 64 M-float activation
// before quantization), written the way a CPU code splits work: each thread takes its own contiguous chunk of 64
// values, then the warp combines its 32 chunks with shuffles and writes one partial result per warp. Within a
// warp load the lanes are 256 bytes apart, so each load touches 32 different cache lines.
#include <algorithm>

#include "bench.cuh"

constexpr int kChunk = 64, kWarpSpan = 32 * kChunk;  // values per thread, per warp

__device__ inline float4 combine(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, fminf(a.z, b.z), fmaxf(a.w, b.w));
}

__global__ void tensor_stats(const float* __restrict__ x, float4* __restrict__ partial) {
  const size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const float* mine = x + g * kChunk;
  float4 s = make_float4(0.0f, 0.0f, INFINITY, -INFINITY);
  for (int k = 0; k < kChunk; ++k) {
    const float v = mine[k];
    s = combine(s, make_float4(v, v * v, v, v));
  }
#pragma unroll
  for (int d = 16; d > 0; d /= 2) {
    const float4 o = make_float4(__shfl_xor_sync(0xffffffffu, s.x, d), __shfl_xor_sync(0xffffffffu, s.y, d),
                                 __shfl_xor_sync(0xffffffffu, s.z, d), __shfl_xor_sync(0xffffffffu, s.w, d));
    s = combine(s, o);
  }
  if (threadIdx.x % 32 == 0) partial[g / 32] = s;
}

int main() {
  const size_t n = (size_t)64 << 20;
  const int warps = (int)(n / kWarpSpan);
  std::vector<float> x(n);
  Rng rng(6604);
  for (auto& v : x) v = rng.uniform(-3.0f, 3.0f);
  float* d_x;
  float4* d_part;
  CK(cudaMalloc(&d_x, n * sizeof(float)));
  CK(cudaMalloc(&d_part, warps * sizeof(float4)));
  CK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    tensor_stats<<<warps * 32 / 256, 256>>>(d_x, d_part);
    CK_LAUNCH();
  }
  std::vector<float4> part(warps);
  CK(cudaMemcpy(part.data(), d_part, warps * sizeof(float4), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int w = 0; w < warps; w += 7) {  // every 7th warp's partial against a double-precision reference
    double sum = 0.0, sq = 0.0;
    float lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < kWarpSpan; ++k) {
      const float v = x[(size_t)w * kWarpSpan + k];
      sum += v;
      sq += (double)v * v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    bad += !close_enough(part[w].x, sum, 1e-4, 1e-2) + !close_enough(part[w].y, sq, 1e-4, 1e-2) +
           (part[w].z != lo) + (part[w].w != hi);
    checked += 4;
  }
  CK(cudaFree(d_x));
  CK(cudaFree(d_part));
  return verdict("stats_blocked_chunks", bad, checked);
}
