// Pixel-to-sky mapping of a 4096 x 4096 detector with the FITS WCS "SIP" distortion convention (Shupe et al.
// 2005): u, v relative to the reference pixel, u' = u + sum A_pq u^p v^q, v' = v + sum B_pq u^p v^q over
// p + q <= A_ORDER, then the CD matrix. The order comes from the FITS header at run time (5 here), the
// coefficients sit in __constant__ memory, and the two nested loops run with run-time trip counts: every term
// costs two constant loads at a register index, the multiplies and the loop bookkeeping.
#include "bench.cuh"

constexpr int kMaxOrder = 9;
__constant__ float c_a[kMaxOrder + 1][kMaxOrder + 1], c_b[kMaxOrder + 1][kMaxOrder + 1];

struct SipHeader {
  int order;
  float crpix1, crpix2;  // reference pixel (1-based)
  float cd11, cd12, cd21, cd22;  // degrees per pixel
};

__global__ void sip_distort(SipHeader h, int width, int height, float2* __restrict__ sky) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const float u = x + 1 - h.crpix1, v = y + 1 - h.crpix2;
  float f = 0.0f, g = 0.0f, up = 1.0f;
  for (int p = 0; p <= h.order; ++p) {
    float t = up;
    for (int q = 0; q <= h.order - p; ++q) {
      f += c_a[p][q] * t;
      g += c_b[p][q] * t;
      t *= v;
    }
    up *= u;
  }
  const float uu = u + f, vv = v + g;
  sky[(size_t)y * width + x] = make_float2(h.cd11 * uu + h.cd12 * vv, h.cd21 * uu + h.cd22 * vv);
}

int main() {
  const int width = 4096, height = 4096;
  SipHeader h{5, 2048.5f, 2048.5f, -1.2e-5f, 3.0e-7f, 2.8e-7f, 1.2e-5f};
  float a[kMaxOrder + 1][kMaxOrder + 1] = {}, b[kMaxOrder + 1][kMaxOrder + 1] = {};
  Rng rng(6811);
  for (int p = 0; p <= h.order; ++p)
    for (int q = 0; p + q <= h.order; ++q) {  // each term up to ~1 pixel at the detector's corners
      if (p + q < 2) continue;  // SIP has no constant or linear terms
      const float scale = 1.0f / std::pow(2048.0f, (float)(p + q));
      a[p][q] = rng.uniform(-1.0f, 1.0f) * scale;
      b[p][q] = rng.uniform(-1.0f, 1.0f) * scale;
    }
  CK(cudaMemcpyToSymbol(c_a, a, sizeof(a)));
  CK(cudaMemcpyToSymbol(c_b, b, sizeof(b)));
  const size_t n = (size_t)width * height;
  float2* d_sky;
  CK(cudaMalloc(&d_sky, n * sizeof(float2)));
  const dim3 block(32, 8), grid(width / 32, height / 8);
  for (int rep = 0; rep < 3; ++rep) {
    sip_distort<<<grid, block>>>(h, width, height, d_sky);
    CK_LAUNCH();
  }
  std::vector<float2> got(n);
  CK(cudaMemcpy(got.data(), d_sky, n * sizeof(float2), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t i = 0; i < n; i += 11, checked += 2) {  // reference in double
    const double u = (double)(i % width) + 1 - h.crpix1, v = (double)(i / width) + 1 - h.crpix2;
    double f = 0.0, g = 0.0, up = 1.0;
    for (int p = 0; p <= h.order; ++p, up *= u) {
      double t = up;
      for (int q = 0; p + q <= h.order; ++q, t *= v) {
        f += a[p][q] * t;
        g += b[p][q] * t;
      }
    }
    const double uu = u + f, vv = v + g;
    bad += !close_enough(got[i].x, h.cd11 * uu + h.cd12 * vv, 1e-5, 1e-9) +
           !close_enough(got[i].y, h.cd21 * uu + h.cd22 * vv, 1e-5, 1e-9);
  }
  CK(cudaFree(d_sky));
  return verdict("sip_runtime_order", bad, checked);
}
