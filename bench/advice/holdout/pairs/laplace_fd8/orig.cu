// Eighth-order finite-difference Laplacian (radius 4, 17-point star) of a 8192 x 8192 float field, the
// spatial operator of a 2D acoustic wave solver. 16x16 blocks, one thread per point, every one of the 17
// taps read from global memory: each value is requested 17 times (through L1), by 16-wide half-warp rows.
#include "bench.cuh"

constexpr int kR = 4;
constexpr int kB = 16;
__constant__ float c_w[kR + 1];  // second-derivative weights for offsets 0..4 (unit grid spacing)

__global__ void laplace8(const float* __restrict__ u, float* __restrict__ lap, int nx, int ny) {
  int x = blockIdx.x * kB + threadIdx.x;
  int y = blockIdx.y * kB + threadIdx.y;
  if (x >= nx || y >= ny) return;
  size_t c = (size_t)y * nx + x;
  if (x < kR || x >= nx - kR || y < kR || y >= ny - kR) {
    lap[c] = 0.0f;  // the solver's absorbing layer handles the rim
    return;
  }
  float acc = 2.0f * c_w[0] * u[c];
#pragma unroll
  for (int r = 1; r <= kR; ++r)
    acc += c_w[r] * (u[c - r] + u[c + r] + u[c - (size_t)r * nx] + u[c + (size_t)r * nx]);
  lap[c] = acc;
}

int main() {
  const int nx = 8192, ny = 8192;  // multiples of kB
  const size_t n = (size_t)nx * ny;
  const float w[kR + 1] = {-205.0f / 144.0f, 8.0f / 5.0f, -1.0f / 5.0f, 8.0f / 315.0f, -1.0f / 560.0f};
  CK(cudaMemcpyToSymbol(c_w, w, sizeof(w)));
  std::vector<float> u(n), lap(n);
  Rng rng(47);
  for (auto& v : u) v = rng.uniform(-1.0f, 1.0f);
  float *d_u, *d_lap;
  CK(cudaMalloc(&d_u, n * sizeof(float)));
  CK(cudaMalloc(&d_lap, n * sizeof(float)));
  CK(cudaMemcpy(d_u, u.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(kB, kB), grid(nx / kB, ny / kB);
  for (int rep = 0; rep < 3; ++rep) {
    laplace8<<<grid, block>>>(d_u, d_lap, nx, ny);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(lap.data(), d_lap, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t c = 0; c < n; c += 37, ++checked) {  // sampled points, rim included
    int x = (int)(c % nx), y = (int)(c / nx);
    double want = 0.0;
    if (x >= kR && x < nx - kR && y >= kR && y < ny - kR) {
      want = 2.0 * w[0] * u[c];
      for (int r = 1; r <= kR; ++r)
        want += (double)w[r] * ((double)u[c - r] + u[c + r] + u[c - (size_t)r * nx] + u[c + (size_t)r * nx]);
    }
    bad += !close_enough(lap[c], want, 1e-4, 1e-5);
  }
  CK(cudaFree(d_u));
  CK(cudaFree(d_lap));
  return verdict("laplace_fd8", bad, checked);
}
