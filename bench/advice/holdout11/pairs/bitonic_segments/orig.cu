// Segmented bitonic sort (sorting many short key lists at once: per-tile depth keys in a renderer, per-bucket
// keys after a coarse radix pass), written as the textbook global-memory bitonic network: one launch per
// compare-exchange stage (k, j), each thread one element, every stage reading and writing the whole key array.
// 8192 segments of 512 keys (16 MB): log2(512) * (log2(512) + 1) / 2 = 45 launches per sort, one sort per run.
#include <algorithm>

#include "bench.cuh"

struct Segments {  // count segments of len keys each (len a power of two), stored one after the other
  unsigned* keys;
  int len, count;
  __host__ __device__ long size() const { return static_cast<long>(len) * count; }
  __device__ unsigned* segment_of(long i) const { return keys + (i & ~static_cast<long>(len - 1)); }
};

// One stage of the bitonic network over every segment: element i compares with i ^ j inside its segment,
// ascending where (i & k) == 0.
__global__ void bitonic_segments(Segments segs, int k, int j) {
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= segs.size()) return;
  const int local = static_cast<int>(i & (segs.len - 1));
  const int partner = local ^ j;
  if (partner <= local) return;
  unsigned* s = segs.segment_of(i);
  const unsigned a = s[local], b = s[partner];
  const bool up = (local & k) == 0;
  if ((a > b) == up) {
    s[local] = b;
    s[partner] = a;
  }
}

int main() {
  const int len = 512, count = 8192;
  const long n = static_cast<long>(len) * count;
  std::vector<unsigned> keys(n), got(n);
  Rng rng(1101);
  for (auto& x : keys) x = rng.next() ^ (rng.next() << 16);
  unsigned* d_keys;
  CK(cudaMalloc(&d_keys, n * sizeof(unsigned)));
  CK(cudaMemcpy(d_keys, keys.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  const Segments segs{d_keys, len, count};
  const int threads = 256;
  const int blocks = static_cast<int>((n + threads - 1) / threads);
  for (int k = 2; k <= len; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      bitonic_segments<<<blocks, threads>>>(segs, k, j);
      CK(cudaGetLastError());
    }
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(got.data(), d_keys, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int s = 0; s < count; ++s) {
    std::sort(keys.begin() + static_cast<long>(s) * len, keys.begin() + static_cast<long>(s + 1) * len);
  }
  for (long i = 0; i < n; ++i) bad += got[i] != keys[i];
  CK(cudaFree(d_keys));
  return verdict("bitonic_segments", bad, n);
}
