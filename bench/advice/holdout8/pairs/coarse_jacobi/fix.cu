// Coarsest level of a geometric multigrid V-cycle for a 2D Poisson problem (-lap u = f, zero Dirichlet
// boundary): the 64 x 64 coarse grid is "solved" by 32 weighted-Jacobi sweeps. Fix: all 32 sweeps in one
// launch of one 1024-thread block, the grid (2 x 16 KB) held in shared memory, a barrier between sweeps
// (the usual coarse-grid solve of GPU multigrid codes).
#include "bench.cuh"

struct CoarseGrid {
  int n;        // points per side, boundary included
  float h2;     // mesh width squared
  float omega;  // Jacobi weight
  __host__ __device__ int at(int i, int j) const { return i * n + j; }
  __host__ __device__ bool interior(int i, int j) const { return i > 0 && j > 0 && i < n - 1 && j < n - 1; }
};

constexpr int kMaxCells = 64 * 64;

__global__ void __launch_bounds__(1024) coarse_jacobi(float* __restrict__ u_io, const float* __restrict__ f,
                                                      CoarseGrid g, int sweeps) {
  __shared__ float buf[2][kMaxCells];
  const int cells = g.n * g.n;
  for (int c = threadIdx.x; c < cells; c += blockDim.x) buf[0][c] = u_io[c];
  __syncthreads();
  int cur = 0;
  for (int s = 0; s < sweeps; ++s) {
    const float* u = buf[cur];
    float* v = buf[cur ^ 1];
    for (int c = threadIdx.x; c < cells; c += blockDim.x) {
      const int i = c / g.n, j = c - i * g.n;
      if (!g.interior(i, j)) {
        v[c] = 0.0f;
        continue;
      }
      const float jac = 0.25f * (u[c - g.n] + u[c + g.n] + u[c - 1] + u[c + 1] + g.h2 * f[c]);
      v[c] = u[c] + g.omega * (jac - u[c]);
    }
    __syncthreads();
    cur ^= 1;
  }
  for (int c = threadIdx.x; c < cells; c += blockDim.x) u_io[c] = buf[cur][c];
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
  float *d_u, *d_f;
  CK(cudaMalloc(&d_u, cells * sizeof(float)));
  CK(cudaMalloc(&d_f, cells * sizeof(float)));
  CK(cudaMemcpy(d_u, u.data(), cells * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_f, f.data(), cells * sizeof(float), cudaMemcpyHostToDevice));
  coarse_jacobi<<<1, 1024>>>(d_u, d_f, g, sweeps);  // the whole solve in one launch
  CK_LAUNCH();
  CK(cudaMemcpy(got.data(), d_u, cells * sizeof(float), cudaMemcpyDeviceToHost));
  reference(u, f, g, sweeps);
  long bad = 0;
  for (int c = 0; c < cells; ++c) bad += !close_enough(got[c], u[c], 1e-4, 1e-6);
  CK(cudaFree(d_u));
  CK(cudaFree(d_f));
  return verdict("coarse_jacobi", bad, cells);
}
