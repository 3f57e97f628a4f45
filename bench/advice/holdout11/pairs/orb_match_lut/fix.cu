// Brute-force matcher for 256-bit binary descriptors (ORB keypoints: 65536 queries from a frame batch x 2048 train descriptors of a keyframe),
// ported from a portable CPU matcher: one thread per query descriptor, the train descriptors staged per block
// in shared memory 128 at a time, best and second-best Hamming distance kept for the ratio test. Launched 3
// times. Fix: the bits of each 32-bit word counted with the hardware population count (__popc, one POPC)
// instead of the CPU code's byte table (four shared-memory lookups per word); same distances.
#include "bench.cuh"
#include "descriptors.cuh"

constexpr int kTile = 128;

struct BitCounter {
  __device__ int bits(uint32_t v) const { return __popc(v); }
};

__global__ void __launch_bounds__(kTile) match_hamming(const Descriptor256* __restrict__ query, int nq,
                                                       const Descriptor256* __restrict__ train, int nt,
                                                       Match* __restrict__ out) {
  __shared__ Descriptor256 tile[kTile];
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  Descriptor256 d{};
  if (q < nq) d = query[q];
  const BitCounter pc{};
  Match m{-1, 257, 257};
  for (int t0 = 0; t0 < nt; t0 += kTile) {
    __syncthreads();
    if (t0 + threadIdx.x < nt) tile[threadIdx.x] = train[t0 + threadIdx.x];
    __syncthreads();
    const int n = min(kTile, nt - t0);
    for (int t = 0; t < n; ++t) {
      int dist = 0;
#pragma unroll
      for (int k = 0; k < 8; ++k) dist += pc.bits(d.w[k] ^ tile[t].w[k]);
      if (dist < m.best) {
        m.second = m.best;
        m.best = dist;
        m.best_idx = t0 + t;
      } else if (dist < m.second) {
        m.second = dist;
      }
    }
  }
  if (q < nq) out[q] = m;
}

int main() {
  const int nq = 65536, nt = 2048, runs = 3;
  std::vector<Descriptor256> query(nq), train(nt);
  Rng rng(1105);
  for (auto& d : train)
    for (auto& w : d.w) w = rng.next() ^ (rng.next() << 16);
  for (int i = 0; i < nq; ++i) {  // half the queries are noisy copies of a train descriptor (true matches)
    Descriptor256 d = train[(i * 7919) % nt];
    for (auto& w : d.w) w ^= (i % 2) ? (rng.next() ^ (rng.next() << 16)) : (1u << (rng.next() % 32)) | (1u << (rng.next() % 32));
    query[i] = d;
  }
  uint8_t table[256];
  fill_byte_popcounts(table);
  Descriptor256 *d_q, *d_t;
  Match* d_out;
  CK(cudaMalloc(&d_q, nq * sizeof(Descriptor256)));
  CK(cudaMalloc(&d_t, nt * sizeof(Descriptor256)));
  CK(cudaMalloc(&d_out, nq * sizeof(Match)));
  CK(cudaMemcpy(d_q, query.data(), nq * sizeof(Descriptor256), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_t, train.data(), nt * sizeof(Descriptor256), cudaMemcpyHostToDevice));
  for (int r = 0; r < runs; ++r) {
    match_hamming<<<(nq + kTile - 1) / kTile, kTile>>>(d_q, nq, d_t, nt, d_out);
    CK_LAUNCH();
  }
  std::vector<Match> got(nq);
  CK(cudaMemcpy(got.data(), d_out, nq * sizeof(Match), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int q = 0; q < nq; q += 17, ++checked) {
    Match m{-1, 257, 257};
    for (int t = 0; t < nt; ++t) {
      int dist = 0;
      for (int k = 0; k < 8; ++k) {
        const uint32_t v = query[q].w[k] ^ train[t].w[k];
        dist += table[v & 0xff] + table[(v >> 8) & 0xff] + table[(v >> 16) & 0xff] + table[v >> 24];
      }
      if (dist < m.best) {
        m.second = m.best;
        m.best = dist;
        m.best_idx = t;
      } else if (dist < m.second) {
        m.second = dist;
      }
    }
    bad += got[q].best_idx != m.best_idx || got[q].best != m.best || got[q].second != m.second;
  }
  CK(cudaFree(d_q));
  CK(cudaFree(d_t));
  CK(cudaFree(d_out));
  return verdict("orb_match_lut", bad, checked);
}
