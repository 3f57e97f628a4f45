// Intensity histogram of a stack of 15-bit detector frames (32768 bins), privatized per block: each 1024-thread
// block zeroes a full 128 KB histogram in shared memory, counts one fixed chunk of 512 K samples into it with
// shared atomics, and merges its non-zero bins into the global histogram. The grid is one block per chunk,
// 160 chunks; at 128 KB of shared memory one block fits per SM, so 132 blocks run and then a second wave of 28
// blocks runs with 104 SMs idle.
#include "bench.cuh"

constexpr int kBins = 1 << 15, kThreads = 1024;
constexpr size_t kChunk = (size_t)512 << 10;

struct Frames {
  const uint16_t* px;
  size_t n;
};

__global__ void __launch_bounds__(kThreads) hist15(Frames f, unsigned* __restrict__ hist) {
  extern __shared__ unsigned h[];
  for (int b = threadIdx.x; b < kBins; b += kThreads) h[b] = 0;
  __syncthreads();
  const size_t lo = blockIdx.x * kChunk, hi = min(f.n, lo + kChunk);
  for (size_t i = lo + threadIdx.x; i < hi; i += kThreads) atomicAdd(&h[f.px[i] & (kBins - 1)], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < kBins; b += kThreads)
    if (h[b]) atomicAdd(&hist[b], h[b]);
}

int main() {
  const size_t n = 160 * kChunk;  // 80 frames of 1024 x 1024 samples
  std::vector<uint16_t> px(n);
  Rng rng(6313);
  for (size_t i = 0; i < n; ++i) {  // a dark background with a bright spot distribution
    const uint32_t r = rng.next();
    px[i] = (uint16_t)(r % 8 == 0 ? 16384 + (r >> 8) % 16384 : 1000 + (r >> 8) % 3000);
  }
  uint16_t* d_px;
  unsigned* d_hist;
  CK(cudaMalloc(&d_px, n * sizeof(uint16_t)));
  CK(cudaMalloc(&d_hist, kBins * sizeof(unsigned)));
  CK(cudaMemcpy(d_px, px.data(), n * sizeof(uint16_t), cudaMemcpyHostToDevice));
  const Frames f{d_px, n};
  const int smem = kBins * sizeof(unsigned);
  CK(cudaFuncSetAttribute(hist15, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  for (int rep = 0; rep < 3; ++rep) {  // three acquisitions (same data here)
    CK(cudaMemset(d_hist, 0, kBins * sizeof(unsigned)));
    hist15<<<(unsigned)((n + kChunk - 1) / kChunk), kThreads, smem>>>(f, d_hist);
    CK_LAUNCH();
  }
  std::vector<unsigned> got(kBins), want(kBins, 0);
  CK(cudaMemcpy(got.data(), d_hist, kBins * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; ++i) ++want[px[i] & (kBins - 1)];
  long bad = 0;
  for (int b = 0; b < kBins; ++b) bad += got[b] != want[b];
  CK(cudaFree(d_px));
  CK(cudaFree(d_hist));
  return verdict("hist15_tailwave_unroll", bad, kBins);
}
