// Explicit diffusion step of a solver written for unstructured meshes, run here on a structured
// 8192 x 4096 grid: each cell reads its four neighbour indices from a table (structure of arrays,
// coalesced), then gathers the neighbours' values through them. The table is 16 bytes per cell against
// 8 bytes of field data, and every gather waits for its index load.
#include "bench.cuh"

__global__ void diffuse(const float* __restrict__ u, float* __restrict__ un, const int* __restrict__ nbr,
                        int n, float k) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n) return;
  float s = u[nbr[c]] + u[nbr[n + c]] + u[nbr[2 * n + c]] + u[nbr[3 * n + c]];
  un[c] = u[c] + k * (s - 4.0f * u[c]);
}

int main() {
  const int nx = 8192, ny = 4096, n = nx * ny;
  const float k = 0.2f;
  // west, east, south, north; a boundary cell is its own neighbour (zero-flux boundary)
  std::vector<int> nbr(4 * (size_t)n);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      int c = j * nx + i;
      nbr[c] = i > 0 ? c - 1 : c;
      nbr[(size_t)n + c] = i < nx - 1 ? c + 1 : c;
      nbr[2 * (size_t)n + c] = j > 0 ? c - nx : c;
      nbr[3 * (size_t)n + c] = j < ny - 1 ? c + nx : c;
    }
  std::vector<float> u(n);
  Rng rng(44);
  for (auto& v : u) v = rng.uniform(0.0f, 1.0f);
  float *d_u, *d_un;
  int* d_nbr;
  CK(cudaMalloc(&d_u, n * sizeof(float)));
  CK(cudaMalloc(&d_un, n * sizeof(float)));
  CK(cudaMalloc(&d_nbr, 4 * (size_t)n * sizeof(int)));
  CK(cudaMemcpy(d_u, u.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_nbr, nbr.data(), 4 * (size_t)n * sizeof(int), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {  // three time steps, ping-pong
    diffuse<<<(n + 255) / 256, 256>>>(d_u, d_un, d_nbr, n, k);
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
  CK(cudaFree(d_nbr));
  return verdict("mesh_neighbors", bad, n);
}
