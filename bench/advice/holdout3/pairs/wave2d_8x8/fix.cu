// One leapfrog step of the 2D acoustic wave equation with a 4th-order (radius-2, 9-point cross) Laplacian
// on an 8192 x 8192 float grid, as in a seismic-modelling code: u_next = 2u - u_prev + (c dt/h)^2 lap(u),
// zero on the two-cell border. Fix: 32x8-thread blocks, so a warp covers 32 consecutive columns of one row
// and each load instruction touches one or two 128-byte lines (the kernel body is unchanged).
#include "bench.cuh"

__global__ void wave_step(const float* __restrict__ u, const float* __restrict__ u_prev,
                          float* __restrict__ u_next, int nx, int ny, float c2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  size_t i = (size_t)y * nx + x;
  if (x < 2 || y < 2 || x >= nx - 2 || y >= ny - 2) {
    u_next[i] = 0.0f;
    return;
  }
  const float a0 = -5.0f, a1 = 4.0f / 3.0f, a2 = -1.0f / 12.0f;
  float lap = 2.0f * a0 * u[i] + a1 * (u[i - 1] + u[i + 1] + u[i - nx] + u[i + nx]) +
              a2 * (u[i - 2] + u[i + 2] + u[i - 2 * (size_t)nx] + u[i + 2 * (size_t)nx]);
  u_next[i] = 2.0f * u[i] - u_prev[i] + c2 * lap;
}

int main() {
  const int nx = 8192, ny = 8192;
  const size_t n = (size_t)nx * ny;
  const float c2 = 0.2f;
  std::vector<float> u(n), u_prev(n), u_next(n);
  Rng rng(3101);
  for (size_t i = 0; i < n; ++i) {
    u[i] = rng.uniform(-1.0f, 1.0f);
    u_prev[i] = rng.uniform(-1.0f, 1.0f);
  }
  float *d_u, *d_prev, *d_next;
  CK(cudaMalloc(&d_u, n * sizeof(float)));
  CK(cudaMalloc(&d_prev, n * sizeof(float)));
  CK(cudaMalloc(&d_next, n * sizeof(float)));
  CK(cudaMemcpy(d_u, u.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_prev, u_prev.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const dim3 block(32, 8);
  const dim3 grid((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y);
  for (int rep = 0; rep < 3; ++rep) {
    wave_step<<<grid, block>>>(d_u, d_prev, d_next, nx, ny, c2);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(u_next.data(), d_next, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  const double a0 = -5.0, a1 = 4.0 / 3.0, a2 = -1.0 / 12.0;
  for (size_t i = 0; i < n; i += 97) {  // every 97th point: all rows, columns and both borders get sampled
    int x = (int)(i % nx), y = (int)(i / nx);
    double want = 0.0;
    if (x >= 2 && y >= 2 && x < nx - 2 && y < ny - 2) {
      double lap = 2.0 * a0 * u[i] + a1 * ((double)u[i - 1] + u[i + 1] + u[i - nx] + u[i + nx]) +
                   a2 * ((double)u[i - 2] + u[i + 2] + u[i - 2 * (size_t)nx] + u[i + 2 * (size_t)nx]);
      want = 2.0 * u[i] - u_prev[i] + (double)c2 * lap;
    }
    bad += !close_enough(u_next[i], want, 1e-5, 1e-5);
    ++checked;
  }
  CK(cudaFree(d_u));
  CK(cudaFree(d_prev));
  CK(cudaFree(d_next));
  return verdict("wave2d_8x8", bad, checked);
}
