// im2col for a 3x3, stride-1, pad-1 convolution of a batch of 4 images of 64 x 128 x 128 floats (NCHW), as
// orig.cu, with the source offsets computed instead of loaded from a map: one thread per (image, channel, output
// pixel), as Caffe's im2col_gpu_kernel, writing that pixel's 9 taps (coalesced along the pixel index).
#include "bench.cuh"

struct ConvShape {
  int n, c, h, w;  // input batch, channels, height, width (3x3 kernel, stride 1, padding 1)
  __host__ __device__ size_t col_size() const { return (size_t)n * c * 9 * h * w; }
};

__global__ void unfold_cols(const float* __restrict__ img, ConvShape s, float* __restrict__ col) {
  const int hw = s.h * s.w;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // over n * c * h * w
  if (i >= s.n * s.c * hw) return;
  const int p = i % hw, bc = i / hw;  // bc = b * c + ch
  const int y = p / s.w, x = p % s.w;
  const float* plane = img + (size_t)bc * hw;
  float* dst = col + (size_t)bc * 9 * hw + p;  // rows ch*9 .. ch*9+8 of image b
#pragma unroll
  for (int ky = 0; ky < 3; ++ky)
#pragma unroll
    for (int kx = 0; kx < 3; ++kx) {
      const int yy = y + ky - 1, xx = x + kx - 1;
      const bool in = yy >= 0 && yy < s.h && xx >= 0 && xx < s.w;
      dst[(size_t)(ky * 3 + kx) * hw] = in ? plane[yy * s.w + xx] : 0.0f;
    }
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
  float *d_img, *d_col;
  CK(cudaMalloc(&d_img, n_img * sizeof(float)));
  CK(cudaMalloc(&d_col, total * sizeof(float)));
  CK(cudaMemcpy(d_img, img.data(), n_img * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    unfold_cols<<<(unsigned)((n_img + 255) / 256), 256>>>(d_img, s, d_col);
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
  return verdict("im2col_indexmap", bad, checked);
}
