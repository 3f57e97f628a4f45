// Dinucleotide composition of sequencing reads (a genomic signature used for metagenomic binning): 262144
// reads of 256 bases, 2-bit packed (A=0 C=1 G=2 T=3, 16 bases per word), stored word-interleaved
// (word w of read r at w * reads + r) so the per-thread word loads coalesce. One thread per read counts its
// 255 overlapping 2-mers in 16 counters privatized in shared memory; counts written 2-mer-major. Launched 3
// times. Fix: the counters laid out counter by counter (cnt[code * threads + thread]) instead of thread by
// thread, so the 32 lanes of a warp always touch 32 consecutive words (one per bank) whatever their codes.
#include "bench.cuh"

constexpr int kBases = 256, kWords = kBases / 16, kBins = 16, kThreads = 256;

struct PackedReads {
  const uint32_t* words;  // word-interleaved
  int count;
  __device__ uint32_t word(int r, int w) const { return words[static_cast<long>(w) * count + r]; }
};

struct CounterSlots {  // where thread t keeps counter b in the block's shared array
  __device__ static int at(int t, int b) { return b * kThreads + t; }
};

__global__ void __launch_bounds__(kThreads) dimer_counts(PackedReads reads, uint32_t* __restrict__ counts) {
  __shared__ uint32_t cnt[kThreads * kBins];
  const int t = threadIdx.x;
  const int r = blockIdx.x * blockDim.x + t;
  for (int b = 0; b < kBins; ++b) cnt[CounterSlots::at(t, b)] = 0;
  if (r < reads.count) {
    uint32_t prev = reads.word(r, 0) & 3u;
    for (int w = 0; w < kWords; ++w) {
      const uint32_t bits = reads.word(r, w);
#pragma unroll
      for (int i = (w == 0 ? 1 : 0); i < 16; ++i) {
        const uint32_t base = (bits >> (2 * i)) & 3u;
        cnt[CounterSlots::at(t, (prev << 2) | base)] += 1;
        prev = base;
      }
    }
    for (int b = 0; b < kBins; ++b) counts[static_cast<long>(b) * reads.count + r] = cnt[CounterSlots::at(t, b)];
  }
}

int main() {
  const int nreads = 262144, runs = 3;
  std::vector<uint32_t> words(static_cast<long>(kWords) * nreads);
  Rng rng(1106);
  for (int r = 0; r < nreads; ++r) {
    const int gc = r % 4;  // a few composition classes (GC-rich to AT-rich genomes)
    for (int w = 0; w < kWords; ++w) {
      uint32_t x = 0;
      for (int i = 0; i < 16; ++i) {
        const uint32_t u = rng.next() % 8;
        const uint32_t base = u < 2u + gc ? (u % 2 ? 1u : 2u) : (u % 2 ? 0u : 3u);
        x |= base << (2 * i);
      }
      words[static_cast<long>(w) * nreads + r] = x;
    }
  }
  uint32_t *d_words, *d_counts;
  CK(cudaMalloc(&d_words, words.size() * sizeof(uint32_t)));
  CK(cudaMalloc(&d_counts, static_cast<long>(kBins) * nreads * sizeof(uint32_t)));
  CK(cudaMemcpy(d_words, words.data(), words.size() * sizeof(uint32_t), cudaMemcpyHostToDevice));
  const PackedReads reads{d_words, nreads};
  for (int i = 0; i < runs; ++i) {
    dimer_counts<<<(nreads + kThreads - 1) / kThreads, kThreads>>>(reads, d_counts);
    CK_LAUNCH();
  }
  std::vector<uint32_t> got(static_cast<long>(kBins) * nreads);
  CK(cudaMemcpy(got.data(), d_counts, got.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int r = 0; r < nreads; r += 3) {
    uint32_t want[kBins] = {};
    uint32_t prev = words[r] & 3u;
    for (int k = 1; k < kBases; ++k) {
      const uint32_t base = (words[static_cast<long>(k / 16) * nreads + r] >> (2 * (k % 16))) & 3u;
      ++want[(prev << 2) | base];
      prev = base;
    }
    for (int b = 0; b < kBins; ++b, ++checked) bad += got[static_cast<long>(b) * nreads + r] != want[b];
  }
  CK(cudaFree(d_words));
  CK(cudaFree(d_counts));
  return verdict("kmer_counts_smem", bad, checked);
}
