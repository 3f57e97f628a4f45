// Affine image warp (rotation + scale about the centre, bilinear sampling, zero outside), as in an image
// registration / augmentation library, on a 4096 x 4096 float image. The kernel is launched with 8 x 2-thread
// blocks (16 threads: half a warp), a shape kept from a CPU tile size: the 32-blocks-per-SM limit leaves 32
// half-empty warps per SM, a quarter of the lanes the SM can hold. Kernel in
// include/warp_affine.cuh.
#include "bench.cuh"
#include "warp_affine.cuh"

int main() {
  const int w = 4096, h = 4096;
  const long n = static_cast<long>(w) * h;
  std::vector<float> img(n), out(n);
  Rng rng(9202);
  for (auto& v : img) v = rng.uniform(0, 1);
  const float ang = 0.12f, s = 1.05f, cs = s * std::cos(ang), sn = s * std::sin(ang);
  const AffineMap m{cs, -sn, sn, cs, 0.5f * w - cs * 0.5f * w + sn * 0.5f * h, 0.5f * h - sn * 0.5f * w - cs * 0.5f * h};
  float *d_img, *d_out;
  CK(cudaMalloc(&d_img, n * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_img, img.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const Image src{d_img, w, h};
  const dim3 block(8, 2), grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
  for (int rep = 0; rep < 3; ++rep) {
    warp_affine<<<grid, block>>>(src, m, d_out);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  const Image host{img.data(), w, h};
  long bad = 0, checked = 0;
  for (int y = 0; y < h; y += 7)
    for (int x = 0; x < w; x += 3, ++checked) {
      const float want = host.bilinear(m.apply(static_cast<float>(x), static_cast<float>(y)));
      bad += !close_enough(out[static_cast<long>(y) * w + x], want, 0.0, 2e-3);  // FMA contraction moves the
      // source position by about an ulp of 4096 (5e-4 px)
    }
  CK(cudaFree(d_img));
  CK(cudaFree(d_out));
  return verdict("warp_affine_8x2", bad, checked);
}
