// 2x bicubic (Catmull-Rom) upscaling of a 4096 x 4096 float image to 8192 x 8192, 32x8-thread blocks,
// clamped borders. The tap weights come from a small helper kept out of line with __noinline__ (as
// libraries do to keep code size down): eight calls per output pixel, each a real CALL with its argument
// moves and a switch on the tap index that cannot be resolved at compile time inside the callee.
#include <algorithm>

#include "bench.cuh"

// Catmull-Rom (a = -0.5) weight of tap k (0..3, at offsets -1, 0, 1, 2) at fractional position t
__device__ __noinline__ float cubic_weight(float t, int k) {
  switch (k) {
    case 0: return ((-0.5f * t + 1.0f) * t - 0.5f) * t;
    case 1: return (1.5f * t - 2.5f) * t * t + 1.0f;
    case 2: return ((-1.5f * t + 2.0f) * t + 0.5f) * t;
    default: return (0.5f * t - 0.5f) * t * t;
  }
}

__global__ void resize_bicubic(const float* __restrict__ src, int sw, int sh, float* __restrict__ dst, int dw,
                               int dh, float scale_x, float scale_y) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= dw || y >= dh) return;
  float sx = (x + 0.5f) * scale_x - 0.5f, sy = (y + 0.5f) * scale_y - 0.5f;
  float fx = floorf(sx), fy = floorf(sy);
  float tx = sx - fx, ty = sy - fy;
  int ix = (int)fx, iy = (int)fy;
  float wx[4], wy[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    wx[k] = cubic_weight(tx, k);
    wy[k] = cubic_weight(ty, k);
  }
  float acc = 0.0f;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    int yy = min(max(iy - 1 + j, 0), sh - 1);
    float row = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      int xx = min(max(ix - 1 + i, 0), sw - 1);
      row += wx[i] * src[(size_t)yy * sw + xx];
    }
    acc += wy[j] * row;
  }
  dst[(size_t)y * dw + x] = acc;
}

static double weight_ref(double t, int k) {
  switch (k) {
    case 0: return ((-0.5 * t + 1.0) * t - 0.5) * t;
    case 1: return (1.5 * t - 2.5) * t * t + 1.0;
    case 2: return ((-1.5 * t + 2.0) * t + 0.5) * t;
    default: return (0.5 * t - 0.5) * t * t;
  }
}

int main() {
  const int sw = 4096, sh = 4096, dw = 8192, dh = 8192;
  const float scale_x = (float)sw / dw, scale_y = (float)sh / dh;
  std::vector<float> src((size_t)sw * sh), dst((size_t)dw * dh);
  Rng rng(3505);
  for (auto& v : src) v = rng.uniform(0.0f, 1.0f);
  float *d_src, *d_dst;
  CK(cudaMalloc(&d_src, src.size() * sizeof(float)));
  CK(cudaMalloc(&d_dst, dst.size() * sizeof(float)));
  CK(cudaMemcpy(d_src, src.data(), src.size() * sizeof(float), cudaMemcpyHostToDevice));
  const dim3 block(32, 8), grid(dw / 32, dh / 8);
  for (int rep = 0; rep < 3; ++rep) {
    resize_bicubic<<<grid, block>>>(d_src, sw, sh, d_dst, dw, dh, scale_x, scale_y);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(dst.data(), d_dst, dst.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t p = 0; p < dst.size(); p += 1009) {  // includes the clamped border rows and columns
    int x = (int)(p % dw), y = (int)(p / dw);
    float sx = (x + 0.5f) * scale_x - 0.5f, sy = (y + 0.5f) * scale_y - 0.5f;
    float fx = std::floor(sx), fy = std::floor(sy);
    double tx = sx - fx, ty = sy - fy, acc = 0.0;
    for (int j = 0; j < 4; ++j) {
      int yy = std::min(std::max((int)fy - 1 + j, 0), sh - 1);
      for (int i = 0; i < 4; ++i) {
        int xx = std::min(std::max((int)fx - 1 + i, 0), sw - 1);
        acc += weight_ref(ty, j) * weight_ref(tx, i) * src[(size_t)yy * sw + xx];
      }
    }
    bad += !close_enough(dst[p], acc, 1e-5, 1e-5);
    ++checked;
  }
  CK(cudaFree(d_src));
  CK(cudaFree(d_dst));
  return verdict("bicubic_noinline", bad, checked);
}
