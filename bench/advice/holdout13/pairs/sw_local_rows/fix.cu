// Batched Smith-Waterman local-alignment scores (Smith & Waterman 1981, linear gap) of 262144 short reads
// (32 bases) against their candidate reference windows (64 bases), as in a read mapper's verification step: a
// thread per read/window pair, bases stored position-major (base p of every pair contiguous, coalesced byte
// loads), the score matrix swept row by row over the window with one row of H kept per thread. Three launches
// (three batches, here the same pairs). fix: the query length a template parameter (the mapper instantiates its
// read lengths; 32 here) and the loops over j fully unrolled, so the row H and the query's bases are registers
// instead of local memory; the recurrence unchanged.
#include "bench.cuh"

struct Scoring {
  int match, mismatch, gap;  // +match, -mismatch, -gap per base
  __host__ __device__ int sub(unsigned char a, unsigned char b) const { return a == b ? match : -mismatch; }
};

struct PairBatch {
  const unsigned char* query;  // [qlen][pairs]
  const unsigned char* ref;    // [rlen][pairs]
  int pairs, qlen, rlen;
  __host__ __device__ unsigned char q(int p, int pair) const { return query[static_cast<size_t>(p) * pairs + pair]; }
  __host__ __device__ unsigned char r(int p, int pair) const { return ref[static_cast<size_t>(p) * pairs + pair]; }
};

template <int QLEN>
__global__ void sw_score(PairBatch b, Scoring sc, int* __restrict__ best_out) {
  const int pair = blockIdx.x * blockDim.x + threadIdx.x;
  if (pair >= b.pairs) return;
  unsigned char qs[QLEN];
  int h[QLEN + 1];
#pragma unroll
  for (int j = 0; j < QLEN; ++j) qs[j] = b.q(j, pair);
#pragma unroll
  for (int j = 0; j <= QLEN; ++j) h[j] = 0;
  int best = 0;
  for (int i = 0; i < b.rlen; ++i) {
    const unsigned char rb = b.r(i, pair);
    int diag = 0, left = 0;
#pragma unroll
    for (int j = 1; j <= QLEN; ++j) {
      const int up = h[j];
      const int v = max(0, max(diag + sc.sub(rb, qs[j - 1]), max(up, left) - sc.gap));
      diag = up;
      h[j] = v;
      left = v;
      best = max(best, v);
    }
  }
  best_out[pair] = best;
}

int main() {
  const int pairs = 262144, qlen = 32, rlen = 64;
  std::vector<unsigned char> query(static_cast<size_t>(qlen) * pairs), ref(static_cast<size_t>(rlen) * pairs);
  Rng rng(1981);
  const char* acgt = "ACGT";
  for (auto& v : ref) v = static_cast<unsigned char>(acgt[rng.next() & 3]);
  for (int p = 0; p < pairs; ++p) {  // reads drawn from their window at a random offset with ~8% substitutions
    const int off = static_cast<int>(rng.next() % (rlen - qlen + 1));
    for (int j = 0; j < qlen; ++j) {
      unsigned char base = ref[static_cast<size_t>(off + j) * pairs + p];
      if (rng.next() % 100 < 8) base = static_cast<unsigned char>(acgt[rng.next() & 3]);
      query[static_cast<size_t>(j) * pairs + p] = base;
    }
  }
  unsigned char *dq, *dr;
  int* dbest;
  CK(cudaMalloc(&dq, query.size()));
  CK(cudaMalloc(&dr, ref.size()));
  CK(cudaMalloc(&dbest, pairs * sizeof(int)));
  CK(cudaMemcpy(dq, query.data(), query.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dr, ref.data(), ref.size(), cudaMemcpyHostToDevice));
  const PairBatch b{dq, dr, pairs, qlen, rlen};
  const Scoring sc{2, 1, 2};
  if (qlen != 32) return verdict("sw_local_rows (no instance for this read length)", 1, 1);
  for (int batch = 0; batch < 3; ++batch) {
    sw_score<32><<<(pairs + 127) / 128, 128>>>(b, sc, dbest);
    CK_LAUNCH();
  }
  std::vector<int> got(pairs);
  CK(cudaMemcpy(got.data(), dbest, pairs * sizeof(int), cudaMemcpyDeviceToHost));
  const PairBatch hb{query.data(), ref.data(), pairs, qlen, rlen};
  long bad = 0, checked = 0;
  for (int p = 0; p < pairs; p += 17, ++checked) {  // sampled: the full score matrix on the host
    std::vector<int> H(static_cast<size_t>(rlen + 1) * (qlen + 1), 0);
    int best = 0;
    for (int i = 1; i <= rlen; ++i)
      for (int j = 1; j <= qlen; ++j) {
        const int v = std::max(0, std::max(H[(i - 1) * (qlen + 1) + j - 1] + sc.sub(hb.r(i - 1, p), hb.q(j - 1, p)),
                                           std::max(H[(i - 1) * (qlen + 1) + j], H[i * (qlen + 1) + j - 1]) - sc.gap));
        H[i * (qlen + 1) + j] = v;
        best = std::max(best, v);
      }
    bad += got[p] != best;
  }
  CK(cudaFree(dq));
  CK(cudaFree(dr));
  CK(cudaFree(dbest));
  return verdict("sw_local_rows", bad, checked);
}
