// Batch-norm statistics (per-channel sum and sum of squares, from which the normalisation computes mean and
// variance) of a channels-last activation tensor, N x H x W x C = 32 x 56 x 56 x 256 floats, written the
// way the NCHW version is: one block per channel, its 256 threads striding over the N*H*W positions. In
// NHWC consecutive positions of one channel are C floats (1 KB) apart, so each lane's load is its own
// sector.
#include "bench.cuh"

constexpr int kThreads = 256;

__global__ void bn_stats(const float* __restrict__ x, float* __restrict__ sum, float* __restrict__ sumsq, int positions,
                         int channels) {
  __shared__ float s1[kThreads], s2[kThreads];
  const int c = blockIdx.x;
  float a = 0.0f, q = 0.0f;
  for (int p = threadIdx.x; p < positions; p += kThreads) {
    const float v = x[(size_t)p * channels + c];
    a += v;
    q += v * v;
  }
  s1[threadIdx.x] = a;
  s2[threadIdx.x] = q;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      s1[threadIdx.x] += s1[threadIdx.x + s];
      s2[threadIdx.x] += s2[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    sum[c] = s1[0];
    sumsq[c] = s2[0];
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
    bn_stats<<<channels, kThreads>>>(d_x, d_sum, d_sumsq, positions, channels);
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
