// Weighted-Jacobi smoothing sweep of a 2D Poisson problem (the fine level of a multigrid solver): 4096 x 4096
// float unknowns plus a right-hand side, Dirichlet boundary, u' = u + w/4 (h^2 f + N + S + E + W - 4 u).
// Done right: one thread per point in 32 x 8 blocks, the five taps and f read straight from global memory (the
// neighbours hit L1/L2), one store: 192 MB of DRAM traffic per sweep, DRAM-bound. Three sweeps (ping-pong).
#include "bench.cuh"

struct Grid2 {
  int n;     // points per side
  float h2;  // h^2
  float w;   // Jacobi weight
  __host__ __device__ long at(int i, int j) const { return static_cast<long>(j) * n + i; }
  __host__ __device__ bool interior(int i, int j) const { return i > 0 && j > 0 && i < n - 1 && j < n - 1; }
};

__global__ void jacobi5(Grid2 g, const float* __restrict__ u, const float* __restrict__ f, float* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= g.n || j >= g.n) return;
  const long c = g.at(i, j);
  if (!g.interior(i, j)) {
    out[c] = u[c];
    return;
  }
  const float r = g.h2 * f[c] + u[c - 1] + u[c + 1] + u[c - g.n] + u[c + g.n] - 4.0f * u[c];
  out[c] = u[c] + 0.25f * g.w * r;
}

int main() {
  const Grid2 g{4096, 1.0f / (4095.0f * 4095.0f), 0.8f};
  const long n = static_cast<long>(g.n) * g.n;
  const int sweeps = 3;
  std::vector<float> u(n), f(n);
  Rng rng(1110);
  for (long c = 0; c < n; ++c) {
    u[c] = rng.uniform(-1.0f, 1.0f);
    f[c] = rng.uniform(-1e6f, 1e6f);
  }
  float *d_u, *d_v, *d_f;
  CK(cudaMalloc(&d_u, n * sizeof(float)));
  CK(cudaMalloc(&d_v, n * sizeof(float)));
  CK(cudaMalloc(&d_f, n * sizeof(float)));
  CK(cudaMemcpy(d_u, u.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_f, f.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const dim3 block(32, 8), grid(g.n / 32, g.n / 8);
  for (int s = 0; s < sweeps; ++s) {
    jacobi5<<<grid, block>>>(g, d_u, d_f, d_v);
    CK_LAUNCH();
    std::swap(d_u, d_v);
  }
  std::vector<float> got(n);
  CK(cudaMemcpy(got.data(), d_u, n * sizeof(float), cudaMemcpyDeviceToHost));
  // reference: three sweeps on rows 0..40 and the last 40 rows (a sweep changes a point from its neighbours
  // only, so rows more than 3 away from the checked band's edges are exact)
  long bad = 0, checked = 0;
  for (int band = 0; band < 2; ++band) {
    const int j0 = band == 0 ? 0 : g.n - 40, j1 = j0 + 40;
    const int lo = std::max(0, j0 - sweeps), hi = std::min(g.n, j1 + sweeps);
    std::vector<float> a(u.begin() + g.at(0, lo), u.begin() + g.at(0, hi)), b(a.size());
    for (int s = 0; s < sweeps; ++s) {
      for (int j = lo; j < hi; ++j)
        for (int i = 0; i < g.n; ++i) {
          const long c = g.at(i, j - lo), cg = g.at(i, j);
          if (!g.interior(i, j) || j == lo || j == hi - 1) {
            b[c] = a[c];
            continue;
          }
          const float r = g.h2 * f[cg] + a[c - 1] + a[c + 1] + a[c - g.n] + a[c + g.n] - 4.0f * a[c];
          b[c] = a[c] + 0.25f * g.w * r;
        }
      a.swap(b);
    }
    for (int j = j0; j < j1; ++j)
      for (int i = 0; i < g.n; ++i, ++checked) bad += !close_enough(got[g.at(i, j)], a[g.at(i, j - lo)], 1e-5, 1e-5);
  }
  CK(cudaFree(d_u));
  CK(cudaFree(d_v));
  CK(cudaFree(d_f));
  return verdict("jacobi5_stream", bad, checked);
}
