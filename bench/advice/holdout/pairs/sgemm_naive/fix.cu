// C = A * B for square row-major float matrices (N = 1024), tiled: one thread per element of C in 16x16
// blocks; each block stages a 16x16 tile of A and one of B in shared memory per step along k, so each
// element of A and B is read from global memory N/16 times fewer than in the untiled version.
#include "bench.cuh"

constexpr int kTile = 16;

__global__ void sgemm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  int row = blockIdx.y * kTile + threadIdx.y;
  int col = blockIdx.x * kTile + threadIdx.x;
  __shared__ float ta[kTile][kTile], tb[kTile][kTile];
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += kTile) {
    ta[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
    tb[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

int main() {
  const int n = 1024;  // a multiple of kTile
  const size_t nn = (size_t)n * n;
  std::vector<float> a(nn), b(nn), c(nn);
  Rng rng(42);
  for (auto& v : a) v = rng.uniform(-1.0f, 1.0f);
  for (auto& v : b) v = rng.uniform(-1.0f, 1.0f);
  float *d_a, *d_b, *d_c;
  CK(cudaMalloc(&d_a, nn * sizeof(float)));
  CK(cudaMalloc(&d_b, nn * sizeof(float)));
  CK(cudaMalloc(&d_c, nn * sizeof(float)));
  CK(cudaMemcpy(d_a, a.data(), nn * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_b, b.data(), nn * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(kTile, kTile), grid(n / kTile, n / kTile);
  for (int rep = 0; rep < 3; ++rep) {
    sgemm<<<grid, block>>>(d_a, d_b, d_c, n);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(c.data(), d_c, nn * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  Rng pick(7);
  for (int s = 0; s < 4096; ++s, ++checked) {  // sampled: a full reference is 1 G multiply-adds
    int i = pick.next() % n, j = pick.next() % n;
    double want = 0.0;
    for (int k = 0; k < n; ++k) want += (double)a[(size_t)i * n + k] * b[(size_t)k * n + j];
    bad += !close_enough(c[(size_t)i * n + j], want, 1e-4, 1e-3);
  }
  CK(cudaFree(d_a));
  CK(cudaFree(d_b));
  CK(cudaFree(d_c));
  return verdict("sgemm_naive", bad, checked);
}
