// DL pre-processing of a 32 M-pixel interleaved RGB8 frame to normalized planar float (NCHW, per-channel mean
// and std, a Normalize struct by value): 128-thread blocks of 512 pixels stage their 1536 bytes as 384 words in
// shared memory, then each thread converts 4 pixels and writes a float4 per plane. The stage buffer is a static
// array sized for the largest tile the code supports (16384 pixels, 48 KB), so only 4 blocks (16 warps) fit on
// an SM, each with 12 bytes of loads in flight per thread.
#include "bench.cuh"

constexpr int THREADS = 128, MAX_TILE_PIXELS = 16384;

struct Normalize {
  float mean[3], inv_std[3];
  int tile_pixels;  // 512: THREADS x 4
};

__global__ void rgb_to_planar(const uint32_t* __restrict__ rgb, float* __restrict__ planes, int pixels, Normalize nz) {
  __shared__ uint32_t stage[MAX_TILE_PIXELS * 3 / 4];
  const int words = nz.tile_pixels * 3 / 4;
  const uint32_t* src = rgb + static_cast<size_t>(blockIdx.x) * words;
  for (int i = threadIdx.x; i < words; i += THREADS) stage[i] = src[i];
  __syncthreads();
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(stage);
  const int p0 = threadIdx.x * 4;  // this thread's 4 pixels within the tile
  const size_t out = static_cast<size_t>(blockIdx.x) * nz.tile_pixels + p0;
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    float v[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) v[q] = (bytes[3 * (p0 + q) + c] * (1.0f / 255.0f) - nz.mean[c]) * nz.inv_std[c];
    *reinterpret_cast<float4*>(planes + c * static_cast<size_t>(pixels) + out) = make_float4(v[0], v[1], v[2], v[3]);
  }
}

int main() {
  const int pixels = 8192 * 4096;
  const Normalize nz{{0.485f, 0.456f, 0.406f}, {1.0f / 0.229f, 1.0f / 0.224f, 1.0f / 0.225f}, THREADS * 4};
  std::vector<uint8_t> rgb(3 * static_cast<size_t>(pixels));
  Rng rng(7105);
  for (auto& b : rgb) b = static_cast<uint8_t>(rng.next() & 255);
  std::vector<float> got(3 * static_cast<size_t>(pixels));
  uint32_t* d_rgb;
  float* d_planes;
  CK(cudaMalloc(&d_rgb, rgb.size()));
  CK(cudaMalloc(&d_planes, got.size() * sizeof(float)));
  CK(cudaMemcpy(d_rgb, rgb.data(), rgb.size(), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    rgb_to_planar<<<pixels / nz.tile_pixels, THREADS>>>(d_rgb, d_planes, pixels, nz);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_planes, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t p = 0; p < static_cast<size_t>(pixels); p += 7)
    for (int c = 0; c < 3; ++c, ++checked) {
      const double want = (rgb[3 * p + c] / 255.0 - nz.mean[c]) * nz.inv_std[c];
      bad += !close_enough(got[c * static_cast<size_t>(pixels) + p], want, 1e-5, 1e-5);
    }
  CK(cudaFree(d_rgb));
  CK(cudaFree(d_planes));
  return verdict("rgb8_planar_bigsmem", bad, checked);
}
