// 5x5 Gaussian blur of a 4096 x 4096 float field with periodic boundaries (the smoothing step of a spectral
// solver, whose fields wrap around), 32 x 8 blocks, weights in __constant__, a Field struct by value: every
// tap wraps its row and column with ((v % n) + n) % n, also for the 99.9% of pixels whose 5x5 window lies
// inside the field.
#include "bench.cuh"

constexpr int R = 2, K = 2 * R + 1;

__constant__ float c_w[K * K];

struct Field {
  const float* data;
  int width, height;
  __device__ float wrapped(int x, int y) const {
    x = ((x % width) + width) % width;
    y = ((y % height) + height) % height;
    return data[static_cast<size_t>(y) * width + x];
  }
};

__global__ void blur5_periodic(Field f, float* __restrict__ out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= f.width || y >= f.height) return;
  float acc = 0.0f;
#pragma unroll
  for (int dy = -R; dy <= R; ++dy)
#pragma unroll
    for (int dx = -R; dx <= R; ++dx) acc = fmaf(c_w[(dy + R) * K + dx + R], f.wrapped(x + dx, y + dy), acc);
  out[static_cast<size_t>(y) * f.width + x] = acc;
}

int main() {
  const int w = 4096, h = 4096;
  const size_t n = static_cast<size_t>(w) * h;
  std::vector<float> in(n), got(n), wts(K * K);
  const double g[K] = {1, 4, 6, 4, 1};
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < K; ++j) wts[i * K + j] = static_cast<float>(g[i] * g[j] / 256.0);
  Rng rng(7107);
  for (auto& v : in) v = rng.uniform(-1.0f, 1.0f);
  float *d_in, *d_out;
  CK(cudaMalloc(&d_in, n * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpyToSymbol(c_w, wts.data(), K * K * sizeof(float)));
  const Field f{d_in, w, h};
  const dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
  for (int rep = 0; rep < 3; ++rep) {
    blur5_periodic<<<grid, block>>>(f, d_out);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int y = 0; y < h; ++y)
    for (int x = (y < 4 || y >= h - 4) ? 0 : (y * 7) % 13; x < w; x += (y < 4 || y >= h - 4) ? 1 : 13, ++checked) {
      double want = 0.0;
      for (int dy = -R; dy <= R; ++dy)
        for (int dx = -R; dx <= R; ++dx)
          want += wts[(dy + R) * K + dx + R] * static_cast<double>(in[static_cast<size_t>((y + dy + h) % h) * w + (x + dx + w) % w]);
      bad += !close_enough(got[static_cast<size_t>(y) * w + x], want, 1e-5, 1e-6);
    }
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return verdict("blur5_periodic_mod_ww", bad, checked);
}
