// Maximum-inner-product search over int8-quantized embeddings (256 dimensions, four per 32-bit word): 32768
// queries against a 2048-vector database, a thread per query, the database staged in shared memory in tiles of
// 32 vectors, best score and index kept per query. The dot product is the portable byte-by-byte version
// fix: one __dp4a per word (the same signed byte products summed in int32; the host keeps dot_bytes).
#include "bench.cuh"
#include "int8vec.cuh"

constexpr int kTile = 32;

struct Best {
  int score, index;
  __device__ void offer(int s, int i) {
    if (s > score) { score = s; index = i; }
  }
};

__global__ void mips_int8(Int8Vectors queries, Int8Vectors db, int* best_index, int* best_score) {
  __shared__ int tile[kTile][Int8Vectors::kWords];
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  int qw[Int8Vectors::kWords];
#pragma unroll
  for (int w = 0; w < Int8Vectors::kWords; ++w) qw[w] = q < queries.count ? queries.row(q)[w] : 0;
  Best best{-2147483647 - 1, -1};
  for (int base = 0; base < db.count; base += kTile) {
    __syncthreads();
    for (int e = threadIdx.x; e < kTile * Int8Vectors::kWords; e += blockDim.x)
      tile[e / Int8Vectors::kWords][e % Int8Vectors::kWords] = db.row(base)[e];
    __syncthreads();
    for (int v = 0; v < kTile; ++v) {
      int s = 0;
#pragma unroll
      for (int w = 0; w < Int8Vectors::kWords; ++w) s = __dp4a(qw[w], tile[v][w], s);
      best.offer(s, base + v);
    }
  }
  if (q < queries.count) {
    best_index[q] = best.index;
    best_score[q] = best.score;
  }
}

int main() {
  const int nq = 32768, nd = 2048, words = Int8Vectors::kWords;
  Rng rng(1201);
  std::vector<int> hq(static_cast<long>(nq) * words), hd(static_cast<long>(nd) * words);
  for (auto& w : hq) w = static_cast<int>(rng.next() ^ (rng.next() << 1));
  for (auto& w : hd) w = static_cast<int>(rng.next() ^ (rng.next() << 1));
  int *dq, *dd, *di, *ds;
  CK(cudaMalloc(&dq, hq.size() * sizeof(int)));
  CK(cudaMalloc(&dd, hd.size() * sizeof(int)));
  CK(cudaMalloc(&di, nq * sizeof(int)));
  CK(cudaMalloc(&ds, nq * sizeof(int)));
  CK(cudaMemcpy(dq, hq.data(), hq.size() * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dd, hd.data(), hd.size() * sizeof(int), cudaMemcpyHostToDevice));
  const Int8Vectors queries{dq, nq}, db{dd, nd};
  for (int rep = 0; rep < 3; ++rep) {
    mips_int8<<<nq / 128, 128>>>(queries, db, di, ds);
    CK_LAUNCH();
  }
  std::vector<int> gi(nq), gs(nq);
  CK(cudaMemcpy(gi.data(), di, nq * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(gs.data(), ds, nq * sizeof(int), cudaMemcpyDeviceToHost));
  const Int8Vectors hqv{hq.data(), nq}, hdv{hd.data(), nd};
  long bad = 0, checked = 0;
  for (int q = 0; q < nq; q += 61, ++checked) {
    int bs = -2147483647 - 1, bi = -1;
    for (int v = 0; v < nd; ++v) {
      int s = 0;
      for (int w = 0; w < words; ++w) s += dot_bytes(hqv.row(q)[w], hdv.row(v)[w]);
      if (s > bs) { bs = s; bi = v; }
    }
    bad += (gi[q] != bi || gs[q] != bs);
  }
  CK(cudaFree(dq));
  CK(cudaFree(dd));
  CK(cudaFree(di));
  CK(cudaFree(ds));
  return verdict("dp4a_embed_search", bad, checked);
}
