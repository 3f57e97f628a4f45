// Column means of a tall row-major sample matrix (feature means of a data set), one thread
// per column walking down the rows. The loop is unrolled 8 times, so each warp issues eight coalesced
// loads before it waits on the first.
#include "../bench.cuh"

__global__ void column_means(const float* __restrict__ a, float* __restrict__ mean, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float acc = 0.0f;
#pragma unroll 8
  for (int r = 0; r < rows; ++r) acc += a[(size_t)r * cols + c];
  mean[c] = acc / rows;
}

int main() {
  const int rows = 2048, cols = 32768;
  const size_t n = (size_t)rows * cols;
  std::vector<float> a(n), mean(cols);
  Rng rng(24);
  for (auto& v : a) v = rng.uniform(0.5f, 1.5f);
  float *d_a, *d_m;
  CK(cudaMalloc(&d_a, n * sizeof(float)));
  CK(cudaMalloc(&d_m, cols * sizeof(float)));
  CK(cudaMemcpy(d_a, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    column_means<<<cols / 256, 256>>>(d_a, d_m, rows, cols);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(mean.data(), d_m, cols * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<double> want(cols, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) want[c] += a[(size_t)r * cols + c];
  long bad = 0;
  for (int c = 0; c < cols; ++c) bad += !close_enough(mean[c], want[c] / rows, 1e-4, 0.0);
  CK(cudaFree(d_a));
  CK(cudaFree(d_m));
  return verdict("colsum_unroll1", bad, cols);
}
