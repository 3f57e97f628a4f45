// MinHash signatures for near-duplicate detection: 32768 documents of 256 hashed shingles (uint32), 64
// universal hash functions h_k(x) = (a_k x + b_k) mod p with p = 2^31 - 1, the signature the minimum per
// function. One thread per (document, function), a warp reading the same shingle (a broadcast). The prime
// is a run-time argument, so every hash is a 64-bit remainder by a run-time divisor.
#include "bench.cuh"

constexpr int kShingles = 256, kHashes = 64;

__global__ void minhash(const unsigned* __restrict__ shingles, const unsigned* __restrict__ a,
                        const unsigned* __restrict__ b, unsigned* __restrict__ sig, int docs, unsigned long long prime) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= docs * kHashes) return;
  const int doc = t / kHashes, k = t % kHashes;
  const unsigned long long ak = a[k], bk = b[k];
  const unsigned* s = shingles + (size_t)doc * kShingles;
  unsigned long long m = prime;
  for (int j = 0; j < kShingles; ++j) {
    const unsigned long long h = (ak * s[j] + bk) % prime;
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
    minhash<<<blocks, threads>>>(d_sh, d_a, d_b, d_sig, docs, prime);
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
