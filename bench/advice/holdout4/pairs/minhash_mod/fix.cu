// MinHash signatures (orig.cu's program) with the remainder by the Mersenne prime p = 2^31 - 1 done by
// shifts and adds: v mod p = fold(fold(v)) with fold(v) = (v & p) + (v >> 31), then one conditional
// subtraction. Exact for every v < 2^64; no 64-bit division.
#include "bench.cuh"

constexpr int kShingles = 256, kHashes = 64;

constexpr unsigned long long kMersenne31 = (1ull << 31) - 1;

__device__ __forceinline__ unsigned long long mod_mersenne31(unsigned long long v) {
  v = (v & kMersenne31) + (v >> 31);  // < 2^33 + 2^31
  v = (v & kMersenne31) + (v >> 31);  // < 2^31 + 8
  return v >= kMersenne31 ? v - kMersenne31 : v;
}

__global__ void minhash(const unsigned* __restrict__ shingles, const unsigned* __restrict__ a,
                        const unsigned* __restrict__ b, unsigned* __restrict__ sig, int docs) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= docs * kHashes) return;
  const int doc = t / kHashes, k = t % kHashes;
  const unsigned long long ak = a[k], bk = b[k];
  const unsigned* s = shingles + (size_t)doc * kShingles;
  unsigned long long m = kMersenne31;
  for (int j = 0; j < kShingles; ++j) {
    const unsigned long long h = mod_mersenne31(ak * s[j] + bk);
    m = h < m ? h : m;
  }
  sig[t] = (unsigned)m;
}

int main() {
  const int docs = 32768;
  const unsigned long long prime = (1ull << 31) - 1;
  std::vector<unsigned> sh((size_t)docs * kShingles), a(kHashes), b(kHashes), sig((size_t)docs * kHashes);
  Rng rng(4405);
  for (auto& v : sh) v = (rng.next() << 1) ^ rng.next();  // 32 random bits
  for (int k = 0; k < kHashes; ++k) {
    a[k] = 1 + rng.next() % (unsigned)(prime - 1);
    b[k] = rng.next() % (unsigned)prime;
  }
  unsigned *d_sh, *d_a, *d_b, *d_sig;
  CK(cudaMalloc(&d_sh, sh.size() * sizeof(unsigned)));
  CK(cudaMalloc(&d_a, kHashes * sizeof(unsigned)));
  CK(cudaMalloc(&d_b, kHashes * sizeof(unsigned)));
  CK(cudaMalloc(&d_sig, sig.size() * sizeof(unsigned)));
  CK(cudaMemcpy(d_sh, sh.data(), sh.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_a, a.data(), kHashes * sizeof(unsigned), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_b, b.data(), kHashes * sizeof(unsigned), cudaMemcpyHostToDevice));
  const int threads = 256, blocks = (docs * kHashes + threads - 1) / threads;
  for (int rep = 0; rep < 3; ++rep) {
    minhash<<<blocks, threads>>>(d_sh, d_a, d_b, d_sig, docs);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(sig.data(), d_sig, sig.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int doc = 0; doc < docs; doc += 37) {
    for (int k = 0; k < kHashes; ++k) {
      unsigned long long m = prime;
      for (int j = 0; j < kShingles; ++j) {
        const unsigned long long h = ((unsigned long long)a[k] * sh[(size_t)doc * kShingles + j] + b[k]) % prime;
        m = h < m ? h : m;
      }
      bad += sig[(size_t)doc * kHashes + k] != (unsigned)m;
      ++checked;
    }
  }
  CK(cudaFree(d_sh));
  CK(cudaFree(d_a));
  CK(cudaFree(d_b));
  CK(cudaFree(d_sig));
  return verdict("minhash_mod", bad, checked);
}
