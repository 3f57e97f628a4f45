// Coarsest level of a geometric multigrid V-cycle for a 2D Poisson problem (-lap u = f, zero Dirichlet
// boundary): the 64 x 64 coarse grid is "solved" by 32 weighted-Jacobi sweeps, written like the fine-level
// smoother as one launch per sweep (16 blocks of 16 x 16 threads, ping-pong buffers). Every launch does
// about 4096 five-point updates: the solve is 32 launch ramp-ups and tails.
#include "bench.cuh"

struct CoarseGrid {
  int n;        // points per side, boundary included
  float h2;     // mesh width squared
  float omega;  // Jacobi weight
  __host__ __device__ int at(int i, int j) const { return i * n + j; }
  __host__ __device__ bool interior(int i, int j) const { return i > 0 && j > 0 && i < n - 1 && j < n - 1; }
};

__global__ void coarse_jacobi(const float* __restrict__ u, float* __restrict__ v, const float* __restrict__ f,
                              CoarseGrid g) {
  const int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g.n || j >= g.n) return;
  const int c = g.at(i, j);
  if (!g.interior(i, j)) {
    v[c] = 0.0f;
    return;
  }
  const float jac = 0.25f * (u[c - g.n] + u[c + g.n] + u[c - 1] + u[c + 1] + g.h2 * f[c]);
  v[c] = u[c] + g.omega * (jac - u[c]);
}

static void reference(std::vector<float>& u, const std::vector<float>& f, const CoarseGrid& g, int sweeps) {
  std::vector<float> v(u.size(), 0.0f);
  for (int s = 0; s < sweeps; ++s) {
    for (int i = 0; i < g.n; ++i)
      for (int j = 0; j < g.n; ++j) {
        const int c = g.at(i, j);
        if (!g.interior(i, j)) { v[c] = 0.0f; continue; }
        const float jac = 0.25f * (u[c - g.n] + u[c + g.n] + u[c - 1] + u[c + 1] + g.h2 * f[c]);
        v[c] = u[c] + g.omega * (jac - u[c]);
      }
    u.swap(v);
  }
}

int main() {
  const CoarseGrid g{64, 1.0f / (63.0f * 63.0f), 0.8f};
  const int cells = g.n * g.n, sweeps = 32;
  std::vector<float> u(cells, 0.0f), f(cells), got(cells);
  Rng rng(8101);
  for (int c = 0; c < cells; ++c) f[c] = rng.uniform(-50.0f, 50.0f);  // the restricted residual
  for (int i = 1; i < g.n - 1; ++i)
    for (int j = 1; j < g.n - 1; ++j) u[g.at(i, j)] = rng.uniform(-0.01f, 0.01f);  // initial guess
  float *d_u, *d_v, *d_f;
  CK(cudaMalloc(&d_u, cells * sizeof(float)));
  CK(cudaMalloc(&d_v, cells * sizeof(float)));
  CK(cudaMalloc(&d_f, cells * sizeof(float)));
  CK(cudaMemcpy(d_u, u.data(), cells * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_f, f.data(), cells * sizeof(float), cudaMemcpyHostToDevice));
  const dim3 block(16, 16), grid((g.n + 15) / 16, (g.n + 15) / 16);
  for (int s = 0; s < sweeps; ++s) {  // one launch per sweep, buffers swapped on the host
    coarse_jacobi<<<grid, block>>>(d_u, d_v, d_f, g);
    CK_LAUNCH();
    std::swap(d_u, d_v);
  }
  CK(cudaMemcpy(got.data(), d_u, cells * sizeof(float), cudaMemcpyDeviceToHost));
  reference(u, f, g, sweeps);
  long bad = 0;
  for (int c = 0; c < cells; ++c) bad += !close_enough(got[c], u[c], 1e-4, 1e-6);
  CK(cudaFree(d_u));
  CK(cudaFree(d_v));
  CK(cudaFree(d_f));
  return verdict("coarse_jacobi", bad, cells);
}
