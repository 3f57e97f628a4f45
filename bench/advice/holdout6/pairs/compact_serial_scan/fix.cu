// Per-tile stream compaction (the first pass of a particle/event filter: keep the values above a cut, each tile's
// survivors packed at the front of its slot, the count per tile beside it), 32 M floats in tiles of 2048 (256
// threads x 8 values, coalesced), as orig.cu, with the counts turned into offsets by a block-wide scan in the
// style of CUB's BlockScan (WARP_SCANS): a shuffle scan in each warp, the 8 warp totals scanned by the first warp,
// two barriers; no thread loops over the block's counts alone.
#include "bench.cuh"

constexpr int kThreads = 256, kItems = 8, kTile = kThreads * kItems, kWarps = kThreads / 32;

__global__ void select_tiles(const float* __restrict__ in, float cut, float* __restrict__ out,
                             int* __restrict__ tile_count) {
  __shared__ int warp_total[kWarps];
  const float* tile = in + (size_t)blockIdx.x * kTile;
  float v[kItems];
  int mine = 0;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    v[j] = tile[j * kThreads + threadIdx.x];
    mine += v[j] > cut;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int incl = mine;  // inclusive scan within the warp
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const int up = __shfl_up_sync(0xffffffffu, incl, d);
    if (lane >= d) incl += up;
  }
  if (lane == 31) warp_total[warp] = incl;
  __syncthreads();
  if (warp == 0) {  // exclusive scan of the warp totals
    const int w = lane < kWarps ? warp_total[lane] : 0;
    int s = w;
#pragma unroll
    for (int d = 1; d < kWarps; d *= 2) {
      const int up = __shfl_up_sync(0xffffffffu, s, d);
      if (lane >= d) s += up;
    }
    if (lane < kWarps) warp_total[lane] = s - w;
    if (lane == kWarps - 1) tile_count[blockIdx.x] = s;
  }
  __syncthreads();
  const int first = warp_total[warp] + incl - mine;
  float* dst = out + (size_t)blockIdx.x * kTile + first;
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
  return verdict("compact_serial_scan", bad, checked);
}
