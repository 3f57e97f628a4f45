// Batched 32-point Walsh-Hadamard transforms (feature hashing / randomized sketching of 1 M short
// signals), one thread per signal. A block of 256 threads copies its 256 signals into shared memory with
// coalesced loads into rows padded to 33 words (signal s at s*33), then each thread transforms its own
// signal in place: the 32 lanes of a warp hit addresses 33 words apart, 32 different banks, so the shared
// loads and stores are conflict-free (the padded copy-in and copy-out are too).
#include "bench.cuh"

constexpr int kLen = 32;      // points per signal
constexpr int kBlock = 256;   // signals (threads) per block
constexpr int kStride = kLen + 1;  // shared-memory words from one signal to the next

__global__ void wht32(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float s[kBlock * kStride];
  const size_t base = (size_t)blockIdx.x * kBlock * kLen;
  for (int i = threadIdx.x; i < kBlock * kLen; i += kBlock) s[(i / kLen) * kStride + i % kLen] = in[base + i];
  __syncthreads();
  float* sig = s + threadIdx.x * kStride;
  for (int h = 1; h < kLen; h *= 2)
    for (int i = 0; i < kLen; i += 2 * h)
      for (int j = i; j < i + h; ++j) {
        float a = sig[j], b = sig[j + h];
        sig[j] = a + b;
        sig[j + h] = a - b;
      }
  __syncthreads();
  for (int i = threadIdx.x; i < kBlock * kLen; i += kBlock) out[base + i] = s[(i / kLen) * kStride + i % kLen];
}

int main() {
  const int signals = 1 << 20;
  const size_t n = (size_t)signals * kLen;
  std::vector<float> x(n), y(n);
  Rng rng(46);
  for (auto& v : x) v = rng.uniform(-1.0f, 1.0f);
  float *d_x, *d_y;
  CK(cudaMalloc(&d_x, n * sizeof(float)));
  CK(cudaMalloc(&d_y, n * sizeof(float)));
  CK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    wht32<<<signals / kBlock, kBlock>>>(d_x, d_y);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int sgn = 0; sgn < signals; sgn += 13) {  // sampled signals; H[k][m] = (-1)^popcount(k & m)
    const float* xs = &x[(size_t)sgn * kLen];
    for (int k = 0; k < kLen; ++k) {
      double want = 0.0;
      for (int m = 0; m < kLen; ++m) want += (__builtin_popcount(k & m) & 1) ? -xs[m] : xs[m];
      bad += !close_enough(y[(size_t)sgn * kLen + k], want, 1e-4, 1e-4);
      ++checked;
    }
  }
  CK(cudaFree(d_x));
  CK(cudaFree(d_y));
  return verdict("wht_shared_stride", bad, checked);
}
