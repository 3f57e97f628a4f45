// Per-tile stream compaction (the first pass of a particle/event filter: keep the values above a cut, each tile's
// survivors packed at the front of its slot, the count per tile beside it), 32 M floats in tiles of 2048 (256
// threads x 8 values, coalesced). Each thread counts its survivors, and thread 0 turns the 256 counts into
// offsets with a serial loop over shared memory while the block's other 255 threads wait at the barrier.
#include "bench.cuh"

constexpr int kThreads = 256, kItems = 8, kTile = kThreads * kItems;

__global__ void select_tiles(const float* __restrict__ in, float cut, float* __restrict__ out,
                             int* __restrict__ tile_count) {
  __shared__ int offset[kThreads];
  const float* tile = in + (size_t)blockIdx.x * kTile;
  float v[kItems];
  int mine = 0;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    v[j] = tile[j * kThreads + threadIdx.x];
    mine += v[j] > cut;
  }
  offset[threadIdx.x] = mine;
  __syncthreads();
  if (threadIdx.x == 0) {  // exclusive scan of the block's counts
    int run = 0;
    for (int t = 0; t < kThreads; ++t) {
      const int c = offset[t];
      offset[t] = run;
      run += c;
    }
    tile_count[blockIdx.x] = run;
  }
  __syncthreads();
  float* dst = out + (size_t)blockIdx.x * kTile + offset[threadIdx.x];
  int k = 0;
#pragma unroll
  for (int j = 0; j < kItems; ++j)
    if (v[j] > cut) dst[k++] = v[j];
}

int main() {
  const int tiles = 16384;
  const size_t n = (size_t)tiles * kTile;
  const float cut = 0.6f;
  std::vector<float> in(n);
  Rng rng(6203);
  for (auto& x : in) x = rng.uniform(0.0f, 1.0f);
  float *d_in, *d_out;
  int* d_cnt;
  CK(cudaMalloc(&d_in, n * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMalloc(&d_cnt, tiles * sizeof(int)));
  CK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    select_tiles<<<tiles, kThreads>>>(d_in, cut, d_out, d_cnt);
    CK_LAUNCH();
  }
  std::vector<float> out(n);
  std::vector<int> cnt(tiles);
  CK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(cnt.data(), d_cnt, tiles * sizeof(int), cudaMemcpyDeviceToHost));
  // reference: survivors of each tile in (thread, item) order; every 16th tile compared in full
  long bad = 0, checked = 0;
  for (int b = 0; b < tiles; ++b) {
    int k = 0;
    const bool full = b % 16 == 0;
    for (int t = 0; t < kThreads; ++t)
      for (int j = 0; j < kItems; ++j) {
        const float x = in[(size_t)b * kTile + j * kThreads + t];
        if (x > cut) {
          if (full) {
            bad += out[(size_t)b * kTile + k] != x;
            ++checked;
          }
          ++k;
        }
      }
    bad += cnt[b] != k;
    ++checked;
  }
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  CK(cudaFree(d_cnt));
  return verdict("compact_serial_scan_ww", bad, checked);
}
