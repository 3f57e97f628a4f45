// Batch-norm statistics of a channels-last 32 x 56 x 56 x 256 tensor (orig.cu's program) with the threads
// laid out like the data: 32 x 8 blocks, threadIdx.x along 32 consecutive channels (one coalesced 128-byte
// load per warp), threadIdx.y and blockIdx.y striding over positions; the 8 rows of a block are reduced in
// shared memory and each block adds its 32 channel sums to the totals with one atomicAdd each.
#include "bench.cuh"

constexpr int kCh = 32, kRows = 8, kPosBlocks = 128;  // channels per block, position rows per block, blocks along positions

__global__ void bn_stats(const float* __restrict__ x, float* __restrict__ sum, float* __restrict__ sumsq, int positions,
                         int channels) {
  __shared__ float s1[kRows][kCh], s2[kRows][kCh];
  const int c = blockIdx.x * kCh + threadIdx.x;
  float a = 0.0f, q = 0.0f;
  for (int p = blockIdx.y * kRows + threadIdx.y; p < positions; p += kRows * gridDim.y) {
    const float v = x[(size_t)p * channels + c];
    a += v;
    q += v * v;
  }
  s1[threadIdx.y][threadIdx.x] = a;
  s2[threadIdx.y][threadIdx.x] = q;
  __syncthreads();
  if (threadIdx.y == 0) {
#pragma unroll
    for (int r = 1; r < kRows; ++r) {
      a += s1[r][threadIdx.x];
      q += s2[r][threadIdx.x];
    }
    atomicAdd(&sum[c], a);
    atomicAdd(&sumsq[c], q);
  }
}

int main() {
  const int positions = 32 * 56 * 56, channels = 256;
  const size_t n = (size_t)positions * channels;
  std::vector<float> x(n), sum(channels), sumsq(channels);
  Rng rng(4408);
  for (size_t i = 0; i < n; ++i) x[i] = rng.uniform(-1.0f, 3.0f);
  float *d_x, *d_sum, *d_sumsq;
  CK(cudaMalloc(&d_x, n * sizeof(float)));
  CK(cudaMalloc(&d_sum, channels * sizeof(float)));
  CK(cudaMalloc(&d_sumsq, channels * sizeof(float)));
  CK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemsetAsync(d_sum, 0, channels * sizeof(float)));
    CK(cudaMemsetAsync(d_sumsq, 0, channels * sizeof(float)));
    bn_stats<<<dim3(channels / kCh, kPosBlocks), dim3(kCh, kRows)>>>(d_x, d_sum, d_sumsq, positions, channels);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(sum.data(), d_sum, channels * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(sumsq.data(), d_sumsq, channels * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<double> want1(channels, 0.0), want2(channels, 0.0), mag(channels, 0.0);
  for (size_t i = 0; i < n; ++i) {
    const int c = (int)(i % channels);
    want1[c] += x[i];
    want2[c] += (double)x[i] * x[i];
    mag[c] += std::fabs(x[i]);
  }
  long bad = 0;
  for (int c = 0; c < channels; ++c) {
    bad += !close_enough(sum[c], want1[c], 0.0, 1e-5 * mag[c]);
    bad += !close_enough(sumsq[c], want2[c], 1e-5, 0.0);
  }
  CK(cudaFree(d_x));
  CK(cudaFree(d_sum));
  CK(cudaFree(d_sumsq));
  return verdict("bn_stats_nhwc", bad, 2L * channels);
}
