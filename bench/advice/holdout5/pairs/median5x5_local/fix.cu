// 5 x 5 median filter (salt-and-pepper denoising) of a 4096 x 4096 8-bit image, 16 x 16 blocks, clamp-to-edge,
// fixed: a data-independent selection (compare-exchange of fixed pairs with min/max, fully unrolled, stopping
// once the 13 smallest are in place), so every index is a compile-time constant and the window stays in
// registers.
#include "bench.cuh"

constexpr int kR = 2, kWin = (2 * kR + 1) * (2 * kR + 1);

__global__ void median_filter(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  int v[kWin];
#pragma unroll
  for (int dy = -kR; dy <= kR; ++dy)
#pragma unroll
    for (int dx = -kR; dx <= kR; ++dx) {
      const int xx = min(max(x + dx, 0), w - 1), yy = min(max(y + dy, 0), h - 1);
      v[(dy + kR) * (2 * kR + 1) + dx + kR] = in[(size_t)yy * w + xx];
    }
#pragma unroll
  for (int i = 0; i <= kWin / 2; ++i)  // after pass i, v[i] is the i-th smallest
#pragma unroll
    for (int j = i + 1; j < kWin; ++j) {
      const int lo = min(v[i], v[j]), hi = max(v[i], v[j]);
      v[i] = lo;
      v[j] = hi;
    }
  out[(size_t)y * w + x] = (unsigned char)v[kWin / 2];
}

int main() {
  const int w = 4096, h = 4096;
  const size_t n = (size_t)w * h;
  std::vector<unsigned char> img(n), out(n);
  Rng rng(5909);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {  // a smooth gradient with 10% salt-and-pepper noise
      const uint32_t r = rng.next();
      img[(size_t)y * w + x] = r % 10 == 0 ? (r & 1024 ? 255 : 0) : (unsigned char)((x / 16 + y / 32 + (r >> 20) % 8) & 0xff);
    }
  unsigned char *d_in, *d_out;
  CK(cudaMalloc(&d_in, n));
  CK(cudaMalloc(&d_out, n));
  CK(cudaMemcpy(d_in, img.data(), n, cudaMemcpyHostToDevice));
  const dim3 block(16, 16), grid(w / 16, h / 16);
  for (int rep = 0; rep < 3; ++rep) {  // three frames (same frame here)
    median_filter<<<grid, block>>>(d_in, d_out, w, h);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, n, cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int y = 0; y < h; y += 7)
    for (int x = 0; x < w; x += 5, ++checked) {
      int hist[256] = {0};
      for (int dy = -kR; dy <= kR; ++dy)
        for (int dx = -kR; dx <= kR; ++dx)
          ++hist[img[(size_t)std::min(std::max(y + dy, 0), h - 1) * w + std::min(std::max(x + dx, 0), w - 1)]];
      int m = 0, seen = 0;
      while (seen + hist[m] <= kWin / 2) seen += hist[m++];
      bad += out[(size_t)y * w + x] != m;
    }
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return verdict("median5x5_local", bad, checked);
}
