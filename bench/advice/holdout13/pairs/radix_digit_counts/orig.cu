// Upsweep (digit-counting) pass of an LSD radix sort of 32 M uint32 keys, 4-bit digits: each block counts the
// digits of its 4096-key tile into counts[digit][tile] (digit-major, the layout the following exclusive scan
// reads). Three launches: the counting pass of the first three digits (shift 0, 4, 8). Each thread reads 16 keys
// (coalesced, a block-wide stride) and does atomicAdd(&counts[digit][tile], 1) in global memory for every key:
// a block's 4096 atomics land on its 16 counters.
#include "bench.cuh"

struct DigitTiles {
  uint32_t* counts;  // [kRadix][tiles]
  int tiles;
  __device__ uint32_t* at(uint32_t digit, int tile) const { return counts + digit * tiles + tile; }
};

constexpr int kBits = 4, kRadix = 1 << kBits, kThreads = 256, kPerThread = 16, kTile = kThreads * kPerThread;

__host__ __device__ inline uint32_t digit_of(uint32_t key, int shift) { return (key >> shift) & (kRadix - 1); }

__global__ void digit_counts(const uint32_t* __restrict__ keys, DigitTiles out, int shift) {
  const int tile = blockIdx.x;
  const uint32_t* k = keys + static_cast<size_t>(tile) * kTile;
#pragma unroll 4
  for (int j = 0; j < kPerThread; ++j) atomicAdd(out.at(digit_of(k[j * kThreads + threadIdx.x], shift), tile), 1u);
}

int main() {
  const int n = 32 << 20, tiles = n / kTile;
  std::vector<uint32_t> keys(n);
  Rng rng(1313);
  for (auto& v : keys) v = (rng.next() << 1) ^ rng.next() ^ 1u;  // 32 random bits, never 0
  uint32_t *dkeys, *dcounts;
  CK(cudaMalloc(&dkeys, n * sizeof(uint32_t)));
  CK(cudaMalloc(&dcounts, 3 * kRadix * tiles * sizeof(uint32_t)));
  CK(cudaMemcpy(dkeys, keys.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
  CK(cudaMemset(dcounts, 0, 3 * kRadix * tiles * sizeof(uint32_t)));
  for (int pass = 0; pass < 3; ++pass) {
    digit_counts<<<tiles, kThreads>>>(dkeys, DigitTiles{dcounts + pass * kRadix * tiles, tiles}, pass * kBits);
    CK_LAUNCH();
  }
  std::vector<uint32_t> got(3 * kRadix * tiles), want(3 * kRadix * tiles, 0u);
  CK(cudaMemcpy(got.data(), dcounts, got.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    for (int pass = 0; pass < 3; ++pass) ++want[(pass * kRadix + digit_of(keys[i], pass * kBits)) * tiles + i / kTile];
  long bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += got[i] != want[i];
  CK(cudaFree(dkeys));
  CK(cudaFree(dcounts));
  return verdict("radix_digit_counts", bad, static_cast<long>(got.size()));
}
