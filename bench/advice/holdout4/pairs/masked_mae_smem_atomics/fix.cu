// Masked mean absolute error (orig.cu's program) with the per-block accumulation done in registers first:
// each lane's |error| and count are summed across its warp with __shfl_xor_sync, and only lane 0 of each
// warp adds them to the block's shared accumulators (8 shared atomics per block instead of ~400).
#include "bench.cuh"

__global__ void masked_mae(const float* __restrict__ pred, const float* __restrict__ target,
                           const unsigned char* __restrict__ mask, float* __restrict__ total, unsigned* __restrict__ count,
                           int n) {
  __shared__ float s_sum;
  __shared__ unsigned s_cnt;
  if (threadIdx.x == 0) {
    s_sum = 0.0f;
    s_cnt = 0u;
  }
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float e = 0.0f;
  unsigned k = 0u;
  if (i < n && mask[i]) {
    e = fabsf(pred[i] - target[i]);
    k = 1u;
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    e += __shfl_xor_sync(0xffffffffu, e, o);
    k += __shfl_xor_sync(0xffffffffu, k, o);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&s_sum, e);
    atomicAdd(&s_cnt, k);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(total, s_sum);
    atomicAdd(count, s_cnt);
  }
}

int main() {
  const int n = 32 << 20;
  std::vector<float> pred(n), target(n);
  std::vector<unsigned char> mask(n);
  Rng rng(4409);
  double want = 0.0;
  unsigned want_cnt = 0;
  for (int i = 0; i < n; ++i) {
    target[i] = rng.uniform(0.5f, 80.0f);
    pred[i] = target[i] + rng.uniform(-2.0f, 2.0f);
    mask[i] = rng.next() % 10 < 8;
    if (mask[i]) {
      want += std::fabs((double)pred[i] - target[i]);
      ++want_cnt;
    }
  }
  float *d_pred, *d_target, *d_total;
  unsigned char* d_mask;
  unsigned* d_count;
  CK(cudaMalloc(&d_pred, n * sizeof(float)));
  CK(cudaMalloc(&d_target, n * sizeof(float)));
  CK(cudaMalloc(&d_mask, n));
  CK(cudaMalloc(&d_total, sizeof(float)));
  CK(cudaMalloc(&d_count, sizeof(unsigned)));
  CK(cudaMemcpy(d_pred, pred.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_target, target.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_mask, mask.data(), n, cudaMemcpyHostToDevice));
  long bad = 0;
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemset(d_total, 0, sizeof(float)));
    CK(cudaMemset(d_count, 0, sizeof(unsigned)));
    masked_mae<<<(n + 255) / 256, 256>>>(d_pred, d_target, d_mask, d_total, d_count, n);
    CK_LAUNCH();
    float total;
    unsigned count;
    CK(cudaMemcpy(&total, d_total, sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&count, d_count, sizeof(unsigned), cudaMemcpyDeviceToHost));
    bad += count != want_cnt;
    bad += !close_enough(total, want, 1e-4, 0.0);
    if (rep == 2) std::printf("MAE %.6f over %u valid pixels (want %.6f)\n", total / count, count, want / want_cnt);
  }
  CK(cudaFree(d_pred));
  CK(cudaFree(d_target));
  CK(cudaFree(d_mask));
  CK(cudaFree(d_total));
  CK(cudaFree(d_count));
  return verdict("masked_mae_smem_atomics", bad, 6);
}
