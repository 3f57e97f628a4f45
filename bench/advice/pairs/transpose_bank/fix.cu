// Out-of-place transpose of a row-major float matrix through a 32x32 shared-memory tile (32x8 threads,
// four rows each). The tile is padded to [32][33], so the column-wise reads of the write phase spread
// a warp's 32 lanes over 32 banks.
#include "../bench.cuh"

constexpr int kTile = 32, kRows = 8;

__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  __shared__ float tile[kTile][kTile + 1];
  int x = blockIdx.x * kTile + threadIdx.x, y = blockIdx.y * kTile + threadIdx.y;
#pragma unroll
  for (int j = 0; j < kTile; j += kRows) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
#pragma unroll
  for (int j = 0; j < kTile; j += kRows) out[(size_t)(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
  const int w = 8192, h = 4096;  // w and h multiples of the tile
  const size_t n = (size_t)w * h;
  std::vector<float> a(n), t(n);
  Rng rng(26);
  for (auto& v : a) v = rng.uniform(1.0f, 2.0f);
  float *d_in, *d_out;
  CK(cudaMalloc(&d_in, n * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_in, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(kTile, kRows), grid(w / kTile, h / kTile);
  for (int rep = 0; rep < 3; ++rep) {
    transpose_tiled<<<grid, block>>>(d_in, d_out, w, h);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(t.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) bad += t[(size_t)x * h + y] != a[(size_t)y * w + x];
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return verdict("transpose_bank", bad, (long)n);
}
