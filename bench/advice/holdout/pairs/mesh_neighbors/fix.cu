// Explicit diffusion step on a structured 8192 x 4096 grid: the neighbour indices follow from the cell's
// (i, j), so the kernel computes them from a 2D grid of 1D blocks instead of loading them from the
// unstructured-mesh neighbour table; only the field data moves.
#include "bench.cuh"

__global__ void diffuse(const float* __restrict__ u, float* __restrict__ un, int nx, int ny, float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i >= nx) return;
  int c = j * nx + i;
  float s = u[i > 0 ? c - 1 : c] + u[i < nx - 1 ? c + 1 : c] + u[j > 0 ? c - nx : c] + u[j < ny - 1 ? c + nx : c];
  un[c] = u[c] + k * (s - 4.0f * u[c]);
}

int main() {
  const int nx = 8192, ny = 4096, n = nx * ny;
  const float k = 0.2f;
  std::vector<float> u(n);
  Rng rng(44);
  for (auto& v : u) v = rng.uniform(0.0f, 1.0f);
  float *d_u, *d_un;
  CK(cudaMalloc(&d_u, n * sizeof(float)));
  CK(cudaMalloc(&d_un, n * sizeof(float)));
  CK(cudaMemcpy(d_u, u.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {  // three time steps, ping-pong
    diffuse<<<dim3((nx + 255) / 256, ny), 256>>>(d_u, d_un, nx, ny, k);
    CK_LAUNCH();
    std::swap(d_u, d_un);
  }
  std::vector<float> got(n);
  CK(cudaMemcpy(got.data(), d_u, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<float> v(u), vn(n);
  for (int rep = 0; rep < 3; ++rep) {
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        int c = j * nx + i;
        float s = v[i > 0 ? c - 1 : c] + v[i < nx - 1 ? c + 1 : c] + v[j > 0 ? c - nx : c] + v[j < ny - 1 ? c + nx : c];
        vn[c] = v[c] + k * (s - 4.0f * v[c]);
      }
    std::swap(v, vn);
  }
  long bad = 0;
  for (int c = 0; c < n; ++c) bad += !close_enough(got[c], v[c], 1e-5, 1e-6);
  CK(cudaFree(d_u));
  CK(cudaFree(d_un));
  return verdict("mesh_neighbors", bad, n);
}
