// Causal exponential smoothing inside 512-sample tiles (a chunked linear-attention / decay scan): row r
// of a tile sums x[j] * w[r - j] over j <= r, a triangular amount of work. A persistent grid (one
// 256-thread block per SM) walks the tiles; thread t takes rows t and 511 - t, a short row and a long
// one, so every thread does 513 steps and no warp waits long at the tile's barrier.
#include "../bench.cuh"

constexpr int kTile = 512, kThreads = 256;

__global__ void __launch_bounds__(kThreads) causal_decay(const float* __restrict__ x, const float* __restrict__ w,
                                                         float* __restrict__ y, int tiles) {
  __shared__ float xs[kTile], ws[kTile];
  const int t = threadIdx.x;
  for (int k = t; k < kTile; k += kThreads) ws[k] = w[k];
  const int rows[2] = {t, kTile - 1 - t};
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    __syncthreads();  // the previous tile's rows are done with xs
    for (int k = t; k < kTile; k += kThreads) xs[k] = x[(size_t)tile * kTile + k];
    __syncthreads();
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int r = rows[q];
      float acc = 0.0f;
      for (int j = 0; j <= r; ++j) acc += xs[j] * ws[r - j];
      y[(size_t)tile * kTile + r] = acc;
    }
  }
}

int main() {
  const int tiles = 8192;
  const size_t n = (size_t)tiles * kTile;
  std::vector<float> x(n), y(n), w(kTile);
  Rng rng(30);
  for (auto& v : x) v = rng.uniform(0.1f, 1.0f);
  for (int k = 0; k < kTile; ++k) w[k] = std::pow(0.99f, (float)k);
  float *d_x, *d_w, *d_y;
  CK(cudaMalloc(&d_x, n * sizeof(float)));
  CK(cudaMalloc(&d_w, kTile * sizeof(float)));
  CK(cudaMalloc(&d_y, n * sizeof(float)));
  CK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_w, w.data(), kTile * sizeof(float), cudaMemcpyHostToDevice));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int rep = 0; rep < 3; ++rep) {
    causal_decay<<<sms, kThreads>>>(d_x, d_w, d_y, tiles);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int tile = 0; tile < tiles; tile += 17)
    for (int r = 0; r < kTile; ++r, ++checked) {
      double acc = 0.0;
      for (int j = 0; j <= r; ++j) acc += (double)x[(size_t)tile * kTile + j] * w[r - j];
      bad += !close_enough(y[(size_t)tile * kTile + r], acc, 1e-4, 1e-5);
    }
  CK(cudaFree(d_x));
  CK(cudaFree(d_w));
  CK(cudaFree(d_y));
  return verdict("causal_tiles", bad, checked);
}
