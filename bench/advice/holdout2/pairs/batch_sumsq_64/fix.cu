// Per-sample squared gradient norms for per-example clipping (64 samples of 256 K floats each, 64 MB).
// The grid is 2D: 16 blocks of 256 threads per sample (1024 blocks, every SM busy with several blocks);
// each block reduces its 16 K-float slice (warp shuffles, one shared-memory step) and adds it to the
// sample's sum with one atomicAdd.
#include "bench.cuh"

__global__ void sample_sumsq(const float* __restrict__ g, float* __restrict__ sumsq, int len) {
  const float* row = g + (size_t)blockIdx.y * len;
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < len; i += gridDim.x * blockDim.x) s += row[i] * row[i];
  for (int off = 16; off > 0; off /= 2) s += __shfl_down_sync(0xffffffffu, s, off);
  __shared__ float warp_sum[8];
  if (threadIdx.x % 32 == 0) warp_sum[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < blockDim.x / 32 ? warp_sum[threadIdx.x] : 0.0f;
    for (int off = 4; off > 0; off /= 2) s += __shfl_down_sync(0xffffffffu, s, off);
    if (threadIdx.x == 0) atomicAdd(&sumsq[blockIdx.y], s);
  }
}

int main() {
  const int batch = 64, len = 256 << 10;
  const size_t n = (size_t)batch * len;
  std::vector<float> g(n), sumsq(batch);
  Rng rng(808);
  for (auto& v : g) v = rng.uniform(-1.0f, 1.0f);
  float *d_g, *d_sumsq;
  CK(cudaMalloc(&d_g, n * sizeof(float)));
  CK(cudaMalloc(&d_sumsq, batch * sizeof(float)));
  CK(cudaMemcpy(d_g, g.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemset(d_sumsq, 0, batch * sizeof(float)));
    sample_sumsq<<<dim3(16, batch), 256>>>(d_g, d_sumsq, len);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(sumsq.data(), d_sumsq, batch * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int b = 0; b < batch; ++b) {
    double want = 0.0;
    for (int i = 0; i < len; ++i) want += (double)g[(size_t)b * len + i] * g[(size_t)b * len + i];
    bad += !close_enough(sumsq[b], want, 1e-4, 0.0);
  }
  CK(cudaFree(d_g));
  CK(cudaFree(d_sumsq));
  return verdict("batch_sumsq_64", bad, batch);
}
