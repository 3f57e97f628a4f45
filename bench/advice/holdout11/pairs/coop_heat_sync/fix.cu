// Explicit 2D heat diffusion on a 2048 x 2048 plate (Dirichlet edges) as one persistent cooperative kernel:
// each launch runs 10 time steps, rows strided over the blocks and columns over the threads, and
// cg::this_grid().sync() between steps (ping-pong buffers), one block per SM so that every block is
// co-resident. Fix: the blocks grow from 128 to 1024 threads (32 warps per SM instead of 4), grid and kernel
// unchanged.
// Three launches (30 steps).
#include <cooperative_groups.h>

#include "bench.cuh"

namespace cg = cooperative_groups;

struct Plate {
  int nx, ny;
  float alpha;  // diffusion number dt * kappa / h^2 (stable below 0.25)
  __host__ __device__ long cells() const { return static_cast<long>(nx) * ny; }
  __host__ __device__ bool edge(int i, int j) const { return i == 0 || j == 0 || i == nx - 1 || j == ny - 1; }
  __host__ __device__ float update(const float* t, long c) const {
    return t[c] + alpha * (t[c - 1] + t[c + 1] + t[c - nx] + t[c + nx] - 4.0f * t[c]);
  }
};

__global__ void heat_sync(Plate p, float* a, float* b, int steps) {
  cg::grid_group grid = cg::this_grid();
  for (int s = 0; s < steps; ++s) {
    for (int j = blockIdx.x; j < p.ny; j += gridDim.x)  // rows over the blocks, columns over the threads
      for (int i = threadIdx.x; i < p.nx; i += blockDim.x) {
        const long c = static_cast<long>(j) * p.nx + i;
        b[c] = p.edge(i, j) ? a[c] : p.update(a, c);
      }
    grid.sync();
    float* t = a;
    a = b;
    b = t;
  }
}

int main() {
  const Plate plate{2048, 2048, 0.2f};
  const long n = plate.cells();
  const int steps = 10, launches = 3;
  std::vector<float> t0(n), got(n);
  Rng rng(1102);
  for (auto& x : t0) x = rng.uniform(0.0f, 1.0f);
  float *d_a, *d_b;
  CK(cudaMalloc(&d_a, n * sizeof(float)));
  CK(cudaMalloc(&d_b, n * sizeof(float)));
  CK(cudaMemcpy(d_a, t0.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_b, t0.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int threads = 1024;  // one block per SM (co-residency for grid.sync()), 32 warps each
  Plate p = plate;
  int s = steps;
  for (int l = 0; l < launches; ++l) {  // steps is even: the result is back in d_a after each launch
    void* args[] = {&p, &d_a, &d_b, &s};
    CK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(heat_sync), dim3(sms), dim3(threads), args, 0, nullptr));
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_a, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<float> a = t0, b(n);
  for (int step = 0; step < steps * launches; ++step) {
    for (int j = 0; j < plate.ny; ++j)
      for (int i = 0; i < plate.nx; ++i) {
        const long c = static_cast<long>(j) * plate.nx + i;
        b[c] = plate.edge(i, j) ? a[c] : plate.update(a.data(), c);
      }
    a.swap(b);
  }
  long bad = 0;
  for (long c = 0; c < n; ++c) bad += !close_enough(got[c], a[c], 1e-4, 1e-5);
  CK(cudaFree(d_a));
  CK(cudaFree(d_b));
  return verdict("coop_heat_sync", bad, n);
}
