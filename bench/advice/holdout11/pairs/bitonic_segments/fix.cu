// Segmented bitonic sort (sorting many short key lists at once: per-tile depth keys in a renderer, per-bucket
// keys after a coarse radix pass), 8192 segments of 512 keys (16 MB). Fix: a segment fits in one block, so the
// whole network runs in one launch: a 256-thread block per segment loads its 512 keys into shared memory, runs
// the 45 compare-exchange stages there with a barrier between stages, and writes the sorted segment back.
// The compare-exchange is the same as orig's.
#include <algorithm>

#include "bench.cuh"

struct Segments {  // count segments of len keys each (len a power of two), stored one after the other
  unsigned* keys;
  int len, count;
  __host__ __device__ long size() const { return static_cast<long>(len) * count; }
  __device__ unsigned* segment(int s) const { return keys + static_cast<long>(s) * len; }
};

// The whole bitonic network of one LEN-key segment per block of LEN / 2 threads (each thread owns one
// compare-exchange pair per stage).
template <int LEN>
__global__ void __launch_bounds__(LEN / 2) bitonic_segments(Segments segs) {
  __shared__ unsigned s[LEN];
  unsigned* g = segs.segment(blockIdx.x);
  for (int t = threadIdx.x; t < LEN; t += blockDim.x) s[t] = g[t];
  __syncthreads();
  for (int k = 2; k <= LEN; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      // pair p: local index with bit j clear, partner = local | j
      const int p = threadIdx.x;
      const int local = 2 * p - (p & (j - 1));
      const int partner = local ^ j;
      const unsigned a = s[local], b = s[partner];
      const bool up = (local & k) == 0;
      if ((a > b) == up) {
        s[local] = b;
        s[partner] = a;
      }
      __syncthreads();
    }
  }
  for (int t = threadIdx.x; t < LEN; t += blockDim.x) g[t] = s[t];
}

int main() {
  constexpr int len = 512;
  const int count = 8192;
  const long n = static_cast<long>(len) * count;
  std::vector<unsigned> keys(n), got(n);
  Rng rng(1101);
  for (auto& x : keys) x = rng.next() ^ (rng.next() << 16);
  unsigned* d_keys;
  CK(cudaMalloc(&d_keys, n * sizeof(unsigned)));
  CK(cudaMemcpy(d_keys, keys.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  const Segments segs{d_keys, len, count};
  bitonic_segments<len><<<count, len / 2>>>(segs);
  CK_LAUNCH();
  CK(cudaMemcpy(got.data(), d_keys, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int s = 0; s < count; ++s) {
    std::sort(keys.begin() + static_cast<long>(s) * len, keys.begin() + static_cast<long>(s + 1) * len);
  }
  for (long i = 0; i < n; ++i) bad += got[i] != keys[i];
  CK(cudaFree(d_keys));
  return verdict("bitonic_segments", bad, n);
}
