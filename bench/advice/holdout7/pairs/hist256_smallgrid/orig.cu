// Luminance histogram of a 32 M-pixel 8-bit image (an auto-exposure pass), the kernel in the project's header
// include/hist256.cuh (built with -I as the Makefile does): 256 bins privatized per block in shared memory, but
// one pixel per thread, so each 256-pixel block zeroes 256 bins, does 256 shared atomics and flushes ~65
// non-zero bins with global atomics on the same 256 addresses as every other of the 131072 blocks.
#include "bench.cuh"
#include "hist256.cuh"

int main() {
  const int n = 8192 * 4096;
  std::vector<uint8_t> img(n);
  Rng rng(7102);
  for (int i = 0; i < n; ++i) {  // a smooth gradient plus noise: mid-tones dominate, like a real frame
    const int base = 40 + ((i % 8192) * 160) / 8192 + (i / 8192) % 16;
    const int v = base + static_cast<int>(rng.next() % 64) - 32;
    img[i] = static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
  }
  uint8_t* d_img;
  unsigned* d_bins;
  CK(cudaMalloc(&d_img, n));
  CK(cudaMalloc(&d_bins, 256 * sizeof(unsigned)));
  CK(cudaMemcpy(d_img, img.data(), n, cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemset(d_bins, 0, 256 * sizeof(unsigned)));
    hist256_tiles<<<hist256_blocks(n), HIST_THREADS>>>(d_img, n, d_bins);
    CK_LAUNCH();
  }
  std::vector<unsigned> got(256), want(256, 0);
  CK(cudaMemcpy(got.data(), d_bins, 256 * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ++want[img[i]];
  long bad = 0;
  for (int b = 0; b < 256; ++b) bad += got[b] != want[b];
  CK(cudaFree(d_img));
  CK(cudaFree(d_bins));
  return verdict("hist256_smallgrid", bad, 256);
}
