// One time step of a 3D acoustic wave propagator (the forward modelling inside reverse-time migration):
// next = 2 cur - prev + vel2 * lap8(cur) on a 384 x 384 x 128 grid, 8th-order 25-point star Laplacian.
// Written directly with the grid3d.cuh accessor: one thread per point on a 3D grid of 32 x 8 blocks, all
// 25 taps of cur loaded from global memory (each tap is reused by up to 24 other threads, through L1/L2).
#include "bench.cuh"
#include "grid3d.cuh"

__global__ void wave_step3d(View3D<const float> cur, View3D<const float> prev, View3D<const float> vel2,
                            View3D<float> next) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z = blockIdx.z;
  if (x < kR || x >= cur.nx() - kR || y < kR || y >= cur.ny() - kR || z < kR || z >= cur.nz() - kR) return;
  const float c = cur(x, y, z);
  float lap = 3.0f * kC0 * c;
#pragma unroll
  for (int r = 1; r <= kR; ++r) {
    lap += fd_coef(r) * (cur(x - r, y, z) + cur(x + r, y, z) + cur(x, y - r, z) + cur(x, y + r, z) +
                         cur(x, y, z - r) + cur(x, y, z + r));
  }
  next(x, y, z) = 2.0f * c - prev(x, y, z) + vel2(x, y, z) * lap;
}

int main() {
  const int nx = 384, ny = 384, nz = 128;
  const size_t n = (size_t)nx * ny * nz;
  std::vector<float> cur(n), prev(n), vel2(n), got(n);
  Rng rng(4402);
  for (size_t i = 0; i < n; ++i) {
    cur[i] = rng.uniform(-1.0f, 1.0f);
    prev[i] = rng.uniform(-1.0f, 1.0f);
    vel2[i] = rng.uniform(0.01f, 0.08f);  // (v dt / h)^2, inside the stability limit
  }
  float *d_cur, *d_prev, *d_vel2, *d_next;
  CK(cudaMalloc(&d_cur, n * sizeof(float)));
  CK(cudaMalloc(&d_prev, n * sizeof(float)));
  CK(cudaMalloc(&d_vel2, n * sizeof(float)));
  CK(cudaMalloc(&d_next, n * sizeof(float)));
  CK(cudaMemcpy(d_cur, cur.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_prev, prev.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_vel2, vel2.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemset(d_next, 0, n * sizeof(float)));
  View3D<const float> vc(d_cur, nx, ny, nz), vp(d_prev, nx, ny, nz), vv(d_vel2, nx, ny, nz);
  View3D<float> vn(d_next, nx, ny, nz);
  const dim3 block(32, 8), grid(nx / 32, ny / 8, nz);
  for (int rep = 0; rep < 3; ++rep) {
    wave_step3d<<<grid, block>>>(vc, vp, vv, vn);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_next, n * sizeof(float), cudaMemcpyDeviceToHost));
  View3D<const float> hc(cur.data(), nx, ny, nz);
  long bad = 0, checked = 0;
  for (size_t i = 0; i < n; i += 97) {
    const int x = (int)(i % nx), y = (int)(i / nx % ny), z = (int)(i / ((size_t)nx * ny));
    double want = 0.0;  // boundary points are not written
    if (x >= kR && x < nx - kR && y >= kR && y < ny - kR && z >= kR && z < nz - kR) {
      double lap = 3.0 * kC0 * hc(x, y, z);
      for (int r = 1; r <= kR; ++r)
        lap += (double)fd_coef(r) * ((double)hc(x - r, y, z) + hc(x + r, y, z) + hc(x, y - r, z) +
                                     hc(x, y + r, z) + hc(x, y, z - r) + hc(x, y, z + r));
      want = 2.0 * cur[i] - prev[i] + (double)vel2[i] * lap;
    }
    bad += !close_enough(got[i], want, 1e-4, 1e-5);
    ++checked;
  }
  CK(cudaFree(d_cur));
  CK(cudaFree(d_prev));
  CK(cudaFree(d_vel2));
  CK(cudaFree(d_next));
  return verdict("rtm3d_view", bad, checked);
}
