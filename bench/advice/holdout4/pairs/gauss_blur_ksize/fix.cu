// Gaussian blur of a 4096 x 4096 float image (orig.cu's program) with the kernel size a compile-time
// constant (kK = 5) and both tap loops under #pragma unroll: 25 straight-line loads and FMAs per pixel,
// constant-bank weight offsets, the border clamps of each row and column computed once.
#include "bench.cuh"

constexpr int kMaxK = 15;
constexpr int kK = 5;  // the filter size this build serves
__constant__ float c_w[kMaxK * kMaxK];

__global__ void gauss_blur(const float* __restrict__ in, float* __restrict__ out, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  constexpr int r = kK / 2;
  float s = 0.0f;
#pragma unroll
  for (int dy = -r; dy <= r; ++dy) {
    const int yy = min(max(y + dy, 0), height - 1);
#pragma unroll
    for (int dx = -r; dx <= r; ++dx) {
      const int xx = min(max(x + dx, 0), width - 1);
      s += c_w[(dy + r) * kK + (dx + r)] * in[yy * width + xx];
    }
  }
  out[y * width + x] = s;
}

static void gaussian_weights(float* w, int ksize, double sigma) {
  const int r = ksize / 2;
  double total = 0.0;
  for (int i = 0; i < ksize * ksize; ++i) {
    const int dy = i / ksize - r, dx = i % ksize - r;
    total += std::exp(-(dx * dx + dy * dy) / (2.0 * sigma * sigma));
  }
  for (int i = 0; i < ksize * ksize; ++i) {
    const int dy = i / ksize - r, dx = i % ksize - r;
    w[i] = (float)(std::exp(-(dx * dx + dy * dy) / (2.0 * sigma * sigma)) / total);
  }
}

int main() {
  const int width = 4096, height = 4096, ksize = kK;
  const size_t n = (size_t)width * height;
  std::vector<float> img(n), out(n);
  float w[kMaxK * kMaxK];
  gaussian_weights(w, ksize, 1.1);
  Rng rng(4410);
  for (size_t i = 0; i < n; ++i) img[i] = rng.uniform(0.0f, 1.0f);
  float *d_in, *d_out;
  CK(cudaMalloc(&d_in, n * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_in, img.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpyToSymbol(c_w, w, ksize * ksize * sizeof(float)));
  const dim3 block(16, 16), grid((width + 15) / 16, (height + 15) / 16);
  for (int rep = 0; rep < 3; ++rep) {
    gauss_blur<<<grid, block>>>(d_in, d_out, width, height);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  const int r = ksize / 2;
  for (size_t i = 0; i < n; i += 13) {
    const int x = (int)(i % width), y = (int)(i / width);
    double want = 0.0;
    for (int dy = -r; dy <= r; ++dy)
      for (int dx = -r; dx <= r; ++dx) {
        const int yy = std::min(std::max(y + dy, 0), height - 1), xx = std::min(std::max(x + dx, 0), width - 1);
        want += (double)w[(dy + r) * ksize + dx + r] * img[(size_t)yy * width + xx];
      }
    bad += !close_enough(out[i], want, 1e-5, 1e-6);
    ++checked;
  }
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return verdict("gauss_blur_ksize", bad, checked);
}
