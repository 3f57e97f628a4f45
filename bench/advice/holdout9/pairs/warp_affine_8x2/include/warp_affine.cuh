// Affine warp with bilinear sampling (zero outside the image): the kernel of the warp_affine_8x2 pair, kept in
// a header as an image library ships it (found through -I, see pair.json).
#pragma once

struct AffineMap {  // maps an output pixel to its source position
  float a, b, c, d, tx, ty;
  __device__ __host__ float2 apply(float x, float y) const { return make_float2(a * x + b * y + tx, c * x + d * y + ty); }
};

struct Image {
  const float* px;
  int w, h;
  __device__ __host__ float at(int x, int y) const {
    return (x >= 0 && x < w && y >= 0 && y < h) ? px[static_cast<long>(y) * w + x] : 0.0f;
  }
  __device__ __host__ float bilinear(float2 p) const {
    const float fx = floorf(p.x), fy = floorf(p.y);
    const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy);
    const float ax = p.x - fx, ay = p.y - fy;
    const float top = at(x0, y0) + ax * (at(x0 + 1, y0) - at(x0, y0));
    const float bot = at(x0, y0 + 1) + ax * (at(x0 + 1, y0 + 1) - at(x0, y0 + 1));
    return top + ay * (bot - top);
  }
};

__global__ void warp_affine(Image src, AffineMap m, float* __restrict__ dst) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= src.w || y >= src.h) return;
  dst[static_cast<long>(y) * src.w + x] = src.bilinear(m.apply(static_cast<float>(x), static_cast<float>(y)));
}
