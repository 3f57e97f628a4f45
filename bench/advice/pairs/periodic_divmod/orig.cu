// One Jacobi step of the 7-point Laplacian on a periodic 3D grid stored flat, one thread per cell:
// the cell's (x, y, z) and its wrapped neighbours come from integer division and modulo by the
// run-time grid extents, which nvcc expands into a reciprocal sequence each time.
#include "../bench.cuh"

__global__ void jacobi_periodic(const float* __restrict__ u, float* __restrict__ v, unsigned nx, unsigned ny,
                                unsigned nz, float w) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nx * ny * nz) return;
  unsigned x = i % nx, t = i / nx, y = t % ny, z = t / ny;
  unsigned xm = (x + nx - 1) % nx, xp = (x + 1) % nx;
  unsigned ym = (y + ny - 1) % ny, yp = (y + 1) % ny;
  unsigned zm = (z + nz - 1) % nz, zp = (z + 1) % nz;
  unsigned plane = nx * ny, row = z * plane + y * nx;
  float lap = u[row + xm] + u[row + xp] + u[z * plane + ym * nx + x] + u[z * plane + yp * nx + x] +
              u[zm * plane + y * nx + x] + u[zp * plane + y * nx + x] - 6.0f * u[i];
  v[i] = u[i] + w * lap;
}

int main() {
  const unsigned nx = 383, ny = 257, nz = 199;
  const size_t n = (size_t)nx * ny * nz;
  const float w = 0.1f;
  std::vector<float> u(n), v(n);
  Rng rng(16);
  for (auto& a : u) a = rng.uniform(0.5f, 1.5f);
  float *d_u, *d_v;
  CK(cudaMalloc(&d_u, n * sizeof(float)));
  CK(cudaMalloc(&d_v, n * sizeof(float)));
  CK(cudaMemcpy(d_u, u.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const unsigned blocks = (unsigned)((n + 255) / 256);
  for (int rep = 0; rep < 3; ++rep) {
    jacobi_periodic<<<blocks, 256>>>(d_u, d_v, nx, ny, nz, w);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(v.data(), d_v, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (unsigned z = 0; z < nz; ++z)
    for (unsigned y = 0; y < ny; ++y)
      for (unsigned x = 0; x < nx; ++x) {
        auto at = [&](unsigned xx, unsigned yy, unsigned zz) { return (double)u[((size_t)zz * ny + yy) * nx + xx]; };
        double c = at(x, y, z);
        double lap = at((x + nx - 1) % nx, y, z) + at((x + 1) % nx, y, z) + at(x, (y + ny - 1) % ny, z) +
                     at(x, (y + 1) % ny, z) + at(x, y, (z + nz - 1) % nz) + at(x, y, (z + 1) % nz) - 6.0 * c;
        bad += !close_enough(v[((size_t)z * ny + y) * nx + x], c + w * lap, 1e-5, 1e-5);
      }
  CK(cudaFree(d_u));
  CK(cudaFree(d_v));
  return verdict("periodic_divmod", bad, (long)n);
}
