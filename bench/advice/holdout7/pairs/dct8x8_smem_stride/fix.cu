// Forward 8x8 DCT-II (orthonormal, the JPEG encoder's transform) of a 8192 x 8192 float image: a 256-thread
// block stages a strip of 32 tiles (256 x 8 pixels) in shared memory as tiles[32][8][8], each thread transforms
// one row of a tile (8 loads, 64 FMAs with __constant__ coefficients, 8 stores), then one column, then the strip
// is written back. Fix: each tile row padded to 9 floats (tiles[32][8][9], as in the CUDA samples' DCT8x8), so
// a warp's row reads, column reads and staging stores all fall on 32 distinct banks.
#include "bench.cuh"

constexpr int W = 8192, H = 8192, STRIP = 32, THREADS = 256, ROW = 9;  // one pad float per row

__constant__ float c_dct[8][8];

__global__ void dct8x8_forward(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tiles[STRIP][8][ROW];
  const int t = threadIdx.x, tile = t / 8, lane8 = t % 8;
  const int x0 = blockIdx.x * (STRIP * 8), y0 = blockIdx.y * 8;
#pragma unroll
  for (int i = 0; i < 8; ++i) tiles[tile][i][lane8] = in[static_cast<size_t>(y0 + i) * W + x0 + t];
  __syncthreads();
  float v[8], r[8];
#pragma unroll
  for (int x = 0; x < 8; ++x) v[x] = tiles[tile][lane8][x];  // row lane8 of the tile
#pragma unroll
  for (int u = 0; u < 8; ++u) {
    r[u] = 0.0f;
#pragma unroll
    for (int x = 0; x < 8; ++x) r[u] = fmaf(c_dct[u][x], v[x], r[u]);
  }
#pragma unroll
  for (int u = 0; u < 8; ++u) tiles[tile][lane8][u] = r[u];
  __syncthreads();
#pragma unroll
  for (int y = 0; y < 8; ++y) v[y] = tiles[tile][y][lane8];  // column lane8 of the tile
#pragma unroll
  for (int u = 0; u < 8; ++u) {
    r[u] = 0.0f;
#pragma unroll
    for (int y = 0; y < 8; ++y) r[u] = fmaf(c_dct[u][y], v[y], r[u]);
  }
#pragma unroll
  for (int u = 0; u < 8; ++u) tiles[tile][u][lane8] = r[u];
  __syncthreads();
#pragma unroll
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(y0 + i) * W + x0 + t] = tiles[tile][i][lane8];
}

int main() {
  const size_t n = static_cast<size_t>(W) * H;
  std::vector<float> img(n), got(n);
  double c[8][8];
  float cf[8][8];
  for (int u = 0; u < 8; ++u)
    for (int x = 0; x < 8; ++x) {
      c[u][x] = (u == 0 ? std::sqrt(1.0 / 8) : std::sqrt(2.0 / 8)) * std::cos((2 * x + 1) * u * M_PI / 16);
      cf[u][x] = static_cast<float>(c[u][x]);
    }
  Rng rng(7111);
  for (auto& p : img) p = rng.uniform(-128.0f, 127.0f);  // level-shifted 8-bit samples
  float *d_in, *d_out;
  CK(cudaMalloc(&d_in, n * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_in, img.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpyToSymbol(c_dct, cf, sizeof(cf)));
  const dim3 grid(W / (STRIP * 8), H / 8);
  for (int rep = 0; rep < 3; ++rep) {
    dct8x8_forward<<<grid, THREADS>>>(d_in, d_out);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t tile = 0; tile < n / 64; tile += 97) {
    const size_t tx = tile % (W / 8) * 8, ty = tile / (W / 8) * 8;
    for (int v = 0; v < 8; ++v)
      for (int u = 0; u < 8; ++u, ++checked) {
        double want = 0.0;  // Y[v][u] = sum_y sum_x c[v][y] c[u][x] X[y][x]
        for (int y = 0; y < 8; ++y)
          for (int x = 0; x < 8; ++x) want += cf[v][y] * static_cast<double>(cf[u][x]) * img[(ty + y) * W + tx + x];
        bad += !close_enough(got[(ty + v) * W + tx + u], want, 1e-4, 2e-3);
      }
  }
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return verdict("dct8x8_smem_stride", bad, checked);
}
