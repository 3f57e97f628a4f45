// 3x3 binomial blur of a single-channel float image with clamped borders, launched with 4x4-thread
// blocks (as ported CPU tile code often is): half-empty warps and the per-SM block limit cap occupancy.
#include "../bench.cuh"

__global__ void blur3x3(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const float k[3] = {0.25f, 0.5f, 0.25f};
  float acc = 0.0f;
  for (int dy = -1; dy <= 1; ++dy) {
    int yy = min(max(y + dy, 0), h - 1);
    for (int dx = -1; dx <= 1; ++dx) {
      int xx = min(max(x + dx, 0), w - 1);
      acc += k[dy + 1] * k[dx + 1] * in[(size_t)yy * w + xx];
    }
  }
  out[(size_t)y * w + x] = acc;
}

int main() {
  const int w = 6144, h = 6144;
  const size_t n = (size_t)w * h;
  std::vector<float> img(n), res(n);
  Rng rng(11);
  for (auto& v : img) v = rng.uniform(0.1f, 1.0f);
  float *d_in, *d_out;
  CK(cudaMalloc(&d_in, n * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_in, img.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(4, 4);
  dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
  for (int rep = 0; rep < 3; ++rep) {
    blur3x3<<<grid, block>>>(d_in, d_out, w, h);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(res.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  const float k[3] = {0.25f, 0.5f, 0.25f};
  long bad = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double acc = 0.0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          int yy = std::min(std::max(y + dy, 0), h - 1), xx = std::min(std::max(x + dx, 0), w - 1);
          acc += (double)k[dy + 1] * k[dx + 1] * img[(size_t)yy * w + xx];
        }
      bad += !close_enough(res[(size_t)y * w + x], acc, 1e-5, 1e-6);
    }
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return verdict("tiny_blocks_blur", bad, (long)n);
}
