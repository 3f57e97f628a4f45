// Greedy decoding: the argmax over a 151936-token vocabulary (Qwen2's) of each sequence's logits, for three
// decode steps whose batch sizes differ as requests join and finish (continuous batching: 1, 4 and 16 rows).
// As orig.cu, with each row split over enough blocks to fill the GPU (two 1024-thread blocks per SM, from the
// device's SM count, shared out over the batch): each block reduces its slice the same way and merges its best
// into the row's result with one 64-bit atomicMax on a packed (order-preserving value bits, inverted index) key.
#include "bench.cuh"

constexpr int kVocab = 151936, kThreads = 1024;

struct Best {
  float v;
  int i;
  __device__ void take(float ov, int oi) {  // larger value wins, the smaller index on ties
    if (ov > v || (ov == v && oi < i)) {
      v = ov;
      i = oi;
    }
  }
};

__device__ Best warp_best(Best b) {
#pragma unroll
  for (int d = 16; d > 0; d /= 2) b.take(__shfl_xor_sync(0xffffffffu, b.v, d), __shfl_xor_sync(0xffffffffu, b.i, d));
  return b;
}

__device__ inline unsigned long long pack(Best b) {  // larger key = larger value, then smaller index
  const unsigned u = __float_as_uint(b.v), ordered = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return ((unsigned long long)ordered << 32) | (unsigned)(kVocab - b.i);
}

__global__ void argmax_rows(const float* __restrict__ logits, int slice, unsigned long long* __restrict__ key) {
  __shared__ Best part[kThreads / 32];
  const float* row = logits + (size_t)blockIdx.y * kVocab;
  const int begin = blockIdx.x * slice, end = min(begin + slice, kVocab);
  Best b{-INFINITY, kVocab};
  for (int j = begin + threadIdx.x; j < end; j += kThreads) b.take(row[j], j);
  b = warp_best(b);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = b;
  __syncthreads();
  if (threadIdx.x < 32) {
    b = warp_best(part[threadIdx.x]);
    if (threadIdx.x == 0) atomicMax(&key[blockIdx.y], pack(b));
  }
}

int main() {
  const int batches[3] = {1, 4, 16}, max_batch = 16;
  std::vector<float> logits((size_t)max_batch * kVocab);
  Rng rng(6913);
  for (auto& v : logits) v = rng.uniform(-20.0f, 20.0f);
  float* d_logits;
  unsigned long long* d_key;
  CK(cudaMalloc(&d_logits, logits.size() * sizeof(float)));
  CK(cudaMalloc(&d_key, max_batch * sizeof(unsigned long long)));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaMemcpy(d_logits, logits.data(), logits.size() * sizeof(float), cudaMemcpyHostToDevice));
  long bad = 0, checked = 0;
  for (int batch : batches) {
    const int per_row = (2 * sms + batch - 1) / batch, slice = (kVocab + per_row - 1) / per_row;
    CK(cudaMemset(d_key, 0, batch * sizeof(unsigned long long)));
    argmax_rows<<<dim3(per_row, batch), kThreads>>>(d_logits, slice, d_key);
    CK_LAUNCH();
    unsigned long long key[max_batch];
    int got[max_batch];
    CK(cudaMemcpy(key, d_key, batch * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    for (int r = 0; r < batch; ++r) got[r] = kVocab - (int)(key[r] & 0xffffffffu);
    for (int r = 0; r < batch; ++r, ++checked) {
      const float* row = &logits[(size_t)r * kVocab];
      int best = 0;
      for (int j = 1; j < kVocab; ++j)
        if (row[j] > row[best]) best = j;
      bad += got[r] != best;
    }
  }
  CK(cudaFree(d_logits));
  CK(cudaFree(d_key));
  return verdict("argmax_vocab", bad, checked);
}
