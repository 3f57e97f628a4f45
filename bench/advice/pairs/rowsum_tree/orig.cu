// Row sums of a row-major matrix, one 256-thread block per row (a softmax/layer-norm denominator):
// each thread loads one element, then a shared-memory tree reduction with a barrier per level in which
// fewer and fewer warps work while the rest wait at __syncthreads.
#include "../bench.cuh"

constexpr int kCols = 256;

__global__ void __launch_bounds__(kCols) row_sums(const float* __restrict__ a, float* __restrict__ sums) {
  __shared__ float s[kCols];
  const int t = threadIdx.x;
  s[t] = a[(size_t)blockIdx.x * kCols + t];
  __syncthreads();
  for (int stride = kCols / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) sums[blockIdx.x] = s[0];
}

int main() {
  const int rows = 196608;
  const size_t n = (size_t)rows * kCols;
  std::vector<float> a(n), sums(rows);
  Rng rng(14);
  for (auto& v : a) v = rng.uniform(0.01f, 1.0f);
  float *d_a, *d_s;
  CK(cudaMalloc(&d_a, n * sizeof(float)));
  CK(cudaMalloc(&d_s, rows * sizeof(float)));
  CK(cudaMemcpy(d_a, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    row_sums<<<rows, kCols>>>(d_a, d_s);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(sums.data(), d_s, rows * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int r = 0; r < rows; ++r) {
    double want = 0.0;
    for (int c = 0; c < kCols; ++c) want += a[(size_t)r * kCols + c];
    bad += !close_enough(sums[r], want, 1e-5, 0.0);
  }
  CK(cudaFree(d_a));
  CK(cudaFree(d_s));
  return verdict("rowsum_tree", bad, rows);
}
