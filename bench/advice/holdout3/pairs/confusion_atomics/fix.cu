// Confusion matrix of a 10-class classifier over 8 M predictions (int32 labels and predictions, 90%
// correct), as a metrics library computes it after an evaluation pass. Fix: privatise the 100 counters
// per block in shared memory (shared atomicAdd), a grid-stride loop over one wave of blocks
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor x SMs), then one global atomicAdd per non-zero counter
// per block.
#include "bench.cuh"

constexpr int kClasses = 10;

__global__ void confusion_counts(const int* __restrict__ labels, const int* __restrict__ preds,
                                 unsigned* __restrict__ cm, int n) {
  __shared__ unsigned local[kClasses * kClasses];
  for (int b = threadIdx.x; b < kClasses * kClasses; b += blockDim.x) local[b] = 0u;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[labels[i] * kClasses + preds[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < kClasses * kClasses; b += blockDim.x)
    if (local[b] != 0u) atomicAdd(&cm[b], local[b]);
}

int main() {
  const int n = 8 << 20;
  std::vector<int> labels(n), preds(n);
  std::vector<unsigned> cm(kClasses * kClasses), want(kClasses * kClasses, 0u);
  Rng rng(3909);
  for (int i = 0; i < n; ++i) {
    labels[i] = (int)(rng.next() % kClasses);
    preds[i] = rng.next() % 10 < 9 ? labels[i] : (int)(rng.next() % kClasses);
    want[labels[i] * kClasses + preds[i]] += 3;  // three launches accumulate
  }
  int *d_labels, *d_preds;
  unsigned* d_cm;
  CK(cudaMalloc(&d_labels, n * sizeof(int)));
  CK(cudaMalloc(&d_preds, n * sizeof(int)));
  CK(cudaMalloc(&d_cm, kClasses * kClasses * sizeof(unsigned)));
  CK(cudaMemcpy(d_labels, labels.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_preds, preds.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(d_cm, 0, kClasses * kClasses * sizeof(unsigned)));
  int sms = 0, per_sm = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, confusion_counts, 256, 0));
  for (int rep = 0; rep < 3; ++rep) {
    confusion_counts<<<sms * per_sm, 256>>>(d_labels, d_preds, d_cm, n);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(cm.data(), d_cm, kClasses * kClasses * sizeof(unsigned), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int b = 0; b < kClasses * kClasses; ++b) bad += cm[b] != want[b];
  CK(cudaFree(d_labels));
  CK(cudaFree(d_preds));
  CK(cudaFree(d_cm));
  return verdict("confusion_atomics", bad, kClasses * kClasses);
}
