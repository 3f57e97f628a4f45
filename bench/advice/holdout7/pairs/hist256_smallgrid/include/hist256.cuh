// 256-bin histogram of an 8-bit image, privatized per block in shared memory (the project's imaging header,
// found through -I include/ as the Makefile has it).
#pragma once
#include <cstdint>

constexpr int HIST_THREADS = 256;

// One pixel per thread: zero the block's bins, one shared-memory atomic, flush the non-zero bins.
__global__ void hist256_tiles(const uint8_t* __restrict__ img, int n, unsigned* __restrict__ bins) {
  __shared__ unsigned local[256];
  local[threadIdx.x] = 0;
  __syncthreads();
  const int i = blockIdx.x * HIST_THREADS + threadIdx.x;
  if (i < n) atomicAdd(&local[img[i]], 1u);
  __syncthreads();
  const unsigned c = local[threadIdx.x];
  if (c) atomicAdd(&bins[threadIdx.x], c);
}

inline int hist256_blocks(int n) { return (n + HIST_THREADS - 1) / HIST_THREADS; }
