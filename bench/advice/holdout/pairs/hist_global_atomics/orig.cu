// Intensity histogram of an 8-bit image (256 bins), one thread per pixel: every pixel adds one to its
// bin in global memory, so 32 M atomics go to 256 addresses in L2 and the warps queue behind them.
#include "bench.cuh"

__global__ void histogram256(const unsigned char* __restrict__ img, unsigned int* __restrict__ hist, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&hist[img[i]], 1u);
}

int main() {
  const int n = 32 << 20;
  std::vector<unsigned char> img(n);
  Rng rng(41);
  for (auto& p : img) p = static_cast<unsigned char>(rng.next() >> 23);
  unsigned char* d_img;
  unsigned int* d_hist;
  CK(cudaMalloc(&d_img, n));
  CK(cudaMalloc(&d_hist, 256 * sizeof(unsigned int)));
  CK(cudaMemcpy(d_img, img.data(), n, cudaMemcpyHostToDevice));
  CK(cudaMemset(d_hist, 0, 256 * sizeof(unsigned int)));
  for (int rep = 0; rep < 3; ++rep) {  // three frames accumulate into one histogram
    histogram256<<<(n + 255) / 256, 256>>>(d_img, d_hist, n);
    CK_LAUNCH();
  }
  std::vector<unsigned int> hist(256);
  CK(cudaMemcpy(hist.data(), d_hist, 256 * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  std::vector<unsigned long> want(256, 0);
  for (int i = 0; i < n; ++i) want[img[i]] += 3;
  long bad = 0;
  for (int b = 0; b < 256; ++b) bad += hist[b] != want[b];
  CK(cudaFree(d_img));
  CK(cudaFree(d_hist));
  return verdict("hist_global_atomics", bad, 256);
}
