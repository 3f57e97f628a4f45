// Sobel gradient magnitude of a 8192 x 8192 float image (row-major), 32x8 blocks. The index math maps
// threadIdx.x to the row and threadIdx.y to the column, so the 32 lanes of a warp walk down a column:
// each of the nine loads and the store touches 32 rows, 32 KB apart, for one float from each.
#include "bench.cuh"

__global__ void sobel(const float* __restrict__ img, float* __restrict__ mag, int w, int h) {
  int y = blockIdx.x * blockDim.x + threadIdx.x;  // row
  int x = blockIdx.y * blockDim.y + threadIdx.y;  // column
  if (x >= w || y >= h) return;
  size_t c = (size_t)y * w + x;
  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
    mag[c] = 0.0f;
    return;
  }
  const float* up = img + c - w;
  const float* mid = img + c;
  const float* dn = img + c + w;
  float gx = (up[1] + 2.0f * mid[1] + dn[1]) - (up[-1] + 2.0f * mid[-1] + dn[-1]);
  float gy = (dn[-1] + 2.0f * dn[0] + dn[1]) - (up[-1] + 2.0f * up[0] + up[1]);
  mag[c] = sqrtf(gx * gx + gy * gy);
}

int main() {
  const int w = 8192, h = 8192;
  const size_t n = (size_t)w * h;
  std::vector<float> img(n), mag(n);
  Rng rng(48);
  for (auto& v : img) v = rng.uniform(0.0f, 1.0f);
  float *d_img, *d_mag;
  CK(cudaMalloc(&d_img, n * sizeof(float)));
  CK(cudaMalloc(&d_mag, n * sizeof(float)));
  CK(cudaMemcpy(d_img, img.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(32, 8), grid((h + 31) / 32, (w + 7) / 8);
  for (int rep = 0; rep < 3; ++rep) {
    sobel<<<grid, block>>>(d_img, d_mag, w, h);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(mag.data(), d_mag, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t c = 0; c < n; c += 29, ++checked) {  // sampled pixels, border included
    int x = (int)(c % w), y = (int)(c / w);
    double want = 0.0;
    if (x > 0 && y > 0 && x < w - 1 && y < h - 1) {
      auto at = [&](int dy, int dx) { return (double)img[(size_t)(y + dy) * w + (x + dx)]; };
      double gx = (at(-1, 1) + 2 * at(0, 1) + at(1, 1)) - (at(-1, -1) + 2 * at(0, -1) + at(1, -1));
      double gy = (at(1, -1) + 2 * at(1, 0) + at(1, 1)) - (at(-1, -1) + 2 * at(-1, 0) + at(-1, 1));
      want = std::sqrt(gx * gx + gy * gy);
    }
    bad += !close_enough(mag[c], want, 1e-4, 1e-5);
  }
  CK(cudaFree(d_img));
  CK(cudaFree(d_mag));
  return verdict("sobel_swapped", bad, checked);
}
