// Row softmax of attention scores, 32768 rows of 1024 floats (batch x heads x queries over 1024 keys), one
// 1024-thread block per row and one score per thread: the row maximum and the row sum are each a shared-memory
// tree reduction in the textbook form, halving the active threads per level with a __syncthreads() after each
// of the 10 levels (23 barriers per row for one load and one store per thread).
#include "bench.cuh"

constexpr int kCols = 1024;

__global__ void softmax_scores(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float red[kCols];
  const size_t row = blockIdx.x;
  const int t = threadIdx.x;
  const float x = in[row * kCols + t];
  red[t] = x;
  __syncthreads();
  for (int s = kCols / 2; s > 0; s /= 2) {
    if (t < s) red[t] = fmaxf(red[t], red[t + s]);
    __syncthreads();
  }
  const float m = red[0];
  __syncthreads();
  const float e = __expf(x - m);
  red[t] = e;
  __syncthreads();
  for (int s = kCols / 2; s > 0; s /= 2) {
    if (t < s) red[t] += red[t + s];
    __syncthreads();
  }
  out[row * kCols + t] = e / red[0];
}

int main() {
  const int rows = 32768;
  const size_t n = (size_t)rows * kCols;
  std::vector<float> in(n), got(n);
  Rng rng(6401);
  for (auto& v : in) v = rng.uniform(-8.0f, 8.0f);
  float *d_in, *d_out;
  CK(cudaMalloc(&d_in, n * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    softmax_scores<<<rows, kCols>>>(d_in, d_out);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int r = 0; r < rows; r += 13) {  // every 13th row in full
    const float* x = &in[(size_t)r * kCols];
    double m = x[0], sum = 0.0;
    for (int c = 1; c < kCols; ++c) m = std::max(m, (double)x[c]);
    for (int c = 0; c < kCols; ++c) sum += std::exp(x[c] - m);
    for (int c = 0; c < kCols; ++c, ++checked)
      bad += !close_enough(got[(size_t)r * kCols + c], std::exp(x[c] - m) / sum, 1e-4, 1e-9);
  }
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return verdict("softmax_tree1024", bad, checked);
}
