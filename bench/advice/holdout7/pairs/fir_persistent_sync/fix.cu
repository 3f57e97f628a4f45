// 31-tap low-pass FIR over a 64 M-sample float stream in a persistent kernel: one 512-thread block per SM (grid =
// SM count, __launch_bounds__(512, 1), 16 outputs per thread from a 48-float register window), each block
// looping over 8192-sample tiles: load the tile and its 32-sample halo into shared memory, barrier, compute,
// barrier. Fix: two shared-memory buffers filled with cp.async (__pipeline_memcpy_async, 16 bytes per copy), the
// next tile's copy issued before the current tile is computed, so the block loads and computes at once.
#include <cuda_pipeline.h>

#include "bench.cuh"

constexpr int TAPS = 31, THREADS = 512, PER = 16, TILE = THREADS * PER, HALO = 32, WIN4 = (HALO + TILE) / 4;

__constant__ float c_taps[TAPS];

__device__ __forceinline__ void fir_tile(const float* s, float* __restrict__ y) {
  float w[HALO + PER];
  const float4* s4 = reinterpret_cast<const float4*>(s + threadIdx.x * PER);
#pragma unroll
  for (int q = 0; q < (HALO + PER) / 4; ++q) {
    const float4 v = s4[q];
    w[4 * q] = v.x; w[4 * q + 1] = v.y; w[4 * q + 2] = v.z; w[4 * q + 3] = v.w;
  }
  float acc[PER];
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    acc[j] = 0.0f;
#pragma unroll
    for (int k = 0; k < TAPS; ++k) acc[j] = fmaf(c_taps[k], w[HALO + j - k], acc[j]);
  }
  float4* y4 = reinterpret_cast<float4*>(y + threadIdx.x * PER);
#pragma unroll
  for (int q = 0; q < PER / 4; ++q) y4[q] = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
}

// Starts the copy of tile `tile` (and its halo) into buffer `dst`; tile 0's halo is zero, stored directly.
__device__ __forceinline__ void issue_tile(const float* __restrict__ x, int tile, float4* dst) {
  const float4* src = reinterpret_cast<const float4*>(x + static_cast<size_t>(tile) * TILE) - HALO / 4;
  for (int i = threadIdx.x; i < WIN4; i += THREADS) {
    if (tile == 0 && i < HALO / 4) dst[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    else __pipeline_memcpy_async(&dst[i], &src[i], sizeof(float4));
  }
  __pipeline_commit();
}

__global__ void __launch_bounds__(THREADS, 1) fir_stream(const float* __restrict__ x, float* __restrict__ y, int tiles) {
  extern __shared__ float4 win[];  // two buffers of WIN4 float4
  int buf = 0;
  if (blockIdx.x < tiles) issue_tile(x, blockIdx.x, win);
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int next = tile + gridDim.x;
    if (next < tiles) issue_tile(x, next, win + (buf ^ 1) * WIN4);
    else __pipeline_commit();  // an empty group keeps wait_prior(1) meaning "the current tile has landed"
    __pipeline_wait_prior(1);
    __syncthreads();
    fir_tile(reinterpret_cast<const float*>(win + buf * WIN4), y + static_cast<size_t>(tile) * TILE);
    __syncthreads();  // every thread is done with this buffer before it is refilled
    buf ^= 1;
  }
}

int main() {
  const int tiles = 8192;
  const size_t n = static_cast<size_t>(tiles) * TILE;  // 64 M samples
  std::vector<float> x(n), got(n), taps(TAPS);
  double norm = 0.0;
  for (int k = 0; k < TAPS; ++k) {  // Hann-windowed sinc, cut-off 0.2 of the sample rate
    const double m = k - (TAPS - 1) / 2.0, sinc = m == 0 ? 0.4 : std::sin(0.4 * M_PI * m) / (M_PI * m);
    taps[k] = static_cast<float>(sinc * (0.5 - 0.5 * std::cos(2 * M_PI * k / (TAPS - 1))));
    norm += taps[k];
  }
  for (auto& t : taps) t = static_cast<float>(t / norm);
  Rng rng(7104);
  for (auto& v : x) v = rng.uniform(-1.0f, 1.0f);
  float *d_x, *d_y;
  CK(cudaMalloc(&d_x, n * sizeof(float)));
  CK(cudaMalloc(&d_y, n * sizeof(float)));
  CK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpyToSymbol(c_taps, taps.data(), TAPS * sizeof(float)));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int smem = 2 * WIN4 * sizeof(float4);  // 65.8 KB
  CK(cudaFuncSetAttribute(fir_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  for (int rep = 0; rep < 3; ++rep) {
    fir_stream<<<sms, THREADS, smem>>>(d_x, d_y, tiles);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t i = 0; i < n; i += (i < 4096 ? 1 : 1009), ++checked) {
    double want = 0.0;
    for (int k = 0; k < TAPS; ++k) want += i >= static_cast<size_t>(k) ? static_cast<double>(taps[k]) * x[i - k] : 0.0;
    bad += !close_enough(got[i], want, 1e-5, 1e-5);
  }
  CK(cudaFree(d_x));
  CK(cudaFree(d_y));
  return verdict("fir_persistent_sync", bad, checked);
}
