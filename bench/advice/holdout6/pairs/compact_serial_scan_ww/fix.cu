// Per-tile stream compaction (the first pass of a particle/event filter: keep the values above a cut, each tile's
// survivors packed at the front of its slot, the count per tile beside it), 32 M floats in tiles of 2048 (256
// threads x 8 values, coalesced). Each thread counts its survivors, and thread 0 turns the 256 counts into
// offsets with a serial loop over shared memory while the block's other 255 threads wait at the barrier.
// compact_serial_scan_ww, fix: warpwise's first advice on compact_serial_scan (global_memory_coalesce) applied as
// its suggestion words it ("the global accesses at line 36 use only 21% ... of the sectors they fetch: make
// consecutive threads touch consecutive addresses"): line 36 stores each thread's survivors at its own offset, so
// neighbouring threads write ~5 floats apart. The packed layout is what the program must produce, so the tile is
// packed in shared memory first and then copied out with thread t storing survivors t, t + 256, ... The serial
// scan by thread 0 is unchanged. Otherwise identical to orig.cu.
#include "bench.cuh"

constexpr int kThreads = 256, kItems = 8, kTile = kThreads * kItems;

__global__ void select_tiles(const float* __restrict__ in, float cut, float* __restrict__ out,
                             int* __restrict__ tile_count) {
  __shared__ int offset[kThreads];
  __shared__ float packed[kTile];  // the tile's survivors, packed, before the coalesced copy out
  __shared__ int total;
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
    total = run;
  }
  __syncthreads();
  float* dst = packed + offset[threadIdx.x];
  int k = 0;
#pragma unroll
  for (int j = 0; j < kItems; ++j)
    if (v[j] > cut) dst[k++] = v[j];
  __syncthreads();
  float* tile_out = out + (size_t)blockIdx.x * kTile;
  for (int i = threadIdx.x; i < total; i += kThreads) tile_out[i] = packed[i];
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
