// Greedy decoding: the argmax over a 151936-token vocabulary (Qwen2's) of each sequence's logits, for three
// decode steps whose batch sizes differ as requests join and finish (continuous batching: 1, 4 and 16 rows).
// One 1024-thread block per row: each thread scans its strided share of the row, then a warp-shuffle reduction
// and a shared-memory step pick the block's best (value, index). The grid is the batch size, so the three
// launches run on 1, 4 and 16 of the GPU's SMs.
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

__global__ void argmax_rows(const float* __restrict__ logits, int* __restrict__ token) {
  __shared__ Best part[kThreads / 32];
  const float* row = logits + (size_t)blockIdx.x * kVocab;
  Best b{-INFINITY, kVocab};
  for (int j = threadIdx.x; j < kVocab; j += kThreads) b.take(row[j], j);
  b = warp_best(b);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = b;
  __syncthreads();
  if (threadIdx.x < 32) {
    b = warp_best(part[threadIdx.x]);
    if (threadIdx.x == 0) token[blockIdx.x] = b.i;
  }
}

int main() {
  const int batches[3] = {1, 4, 16}, max_batch = 16;
  std::vector<float> logits((size_t)max_batch * kVocab);
  Rng rng(6913);
  for (auto& v : logits) v = rng.uniform(-20.0f, 20.0f);
  float* d_logits;
  int* d_token;
  CK(cudaMalloc(&d_logits, logits.size() * sizeof(float)));
  CK(cudaMalloc(&d_token, max_batch * sizeof(int)));
  CK(cudaMemcpy(d_logits, logits.data(), logits.size() * sizeof(float), cudaMemcpyHostToDevice));
  long bad = 0, checked = 0;
  for (int batch : batches) {
    argmax_rows<<<batch, kThreads>>>(d_logits, d_token);
    CK_LAUNCH();
    int got[max_batch];
    CK(cudaMemcpy(got, d_token, batch * sizeof(int), cudaMemcpyDeviceToHost));
    for (int r = 0; r < batch; ++r, ++checked) {
      const float* row = &logits[(size_t)r * kVocab];
      int best = 0;
      for (int j = 1; j < kVocab; ++j)
        if (row[j] > row[best]) best = j;
      bad += got[r] != best;
    }
  }
  CK(cudaFree(d_logits));
  CK(cudaFree(d_token));
  return verdict("argmax_vocab", bad, checked);
}
