// im2col for a 3x3, stride-1, pad-1 convolution of a batch of 4 images of 64 x 128 x 128 floats (NCHW) through a
// generic gather: a precomputed offset map (one int per output element, -1 for the zero padding) says where
// each element of the column matrix comes from, built once on the host and reused for every call. Every output
// element first loads its offset, then the pixel at that offset: an index-then-value load, and the map is as
// large as the output itself.
#include "bench.cuh"

struct ConvShape {
  int n, c, h, w;  // input batch, channels, height, width (3x3 kernel, stride 1, padding 1)
  __host__ __device__ size_t col_size() const { return (size_t)n * c * 9 * h * w; }
};

__global__ void unfold_cols(const float* __restrict__ img, const int* __restrict__ map, float* __restrict__ col,
                            size_t total) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int src = map[i];
  col[i] = src >= 0 ? img[src] : 0.0f;
}

// col[b][c*9 + ky*3 + kx][y*w + x] = img[b][c][y + ky - 1][x + kx - 1] (0 outside the image)
static int source_of(const ConvShape& s, size_t i) {
  const size_t hw = (size_t)s.h * s.w;
  const size_t p = i % hw, r = (i / hw) % ((size_t)s.c * 9), b = i / (hw * s.c * 9);
  const int ch = (int)(r / 9), ky = (int)(r % 9) / 3, kx = (int)(r % 3);
  const int y = (int)(p / s.w) + ky - 1, x = (int)(p % s.w) + kx - 1;
  if (y < 0 || y >= s.h || x < 0 || x >= s.w) return -1;
  return (int)(((b * s.c + ch) * s.h + y) * s.w + x);
}

int main() {
  const ConvShape s{4, 64, 128, 128};
  const size_t n_img = (size_t)s.n * s.c * s.h * s.w, total = s.col_size();
  std::vector<float> img(n_img);
  Rng rng(6317);
  for (auto& v : img) v = rng.uniform(-1.0f, 1.0f);
  std::vector<int> map(total);
  for (size_t i = 0; i < total; ++i) map[i] = source_of(s, i);
  float *d_img, *d_col;
  int* d_map;
  CK(cudaMalloc(&d_img, n_img * sizeof(float)));
  CK(cudaMalloc(&d_col, total * sizeof(float)));
  CK(cudaMalloc(&d_map, total * sizeof(int)));
  CK(cudaMemcpy(d_img, img.data(), n_img * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_map, map.data(), total * sizeof(int), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    unfold_cols<<<(unsigned)((total + 255) / 256), 256>>>(d_img, d_map, d_col, total);
    CK_LAUNCH();
  }
  std::vector<float> got(total);
  CK(cudaMemcpy(got.data(), d_col, total * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t i = 0; i < total; i += 7, ++checked) {
    const int src = source_of(s, i);
    bad += got[i] != (src >= 0 ? img[src] : 0.0f);
  }
  CK(cudaFree(d_img));
  CK(cudaFree(d_col));
  CK(cudaFree(d_map));
  return verdict("im2col_indexmap", bad, checked);
}
