// One time step of a 3D acoustic wave propagator (orig.cu's program) written the way Micikevicius
// ("3D finite difference computation on GPUs using CUDA", 2009) does it: a 2D grid of 32 x 8 blocks, each
// marching along z through a chunk of 32 planes; the current xy plane with its 4-point halo sits in a
// shared tile, the 8 z-neighbours of each thread's column in registers. Per point: one new load of cur
// (plus the halo), instead of 25.
#include "bench.cuh"
#include "grid3d.cuh"

constexpr int kTx = 32, kTy = 8, kZChunk = 32;

__global__ void wave_step3d(View3D<const float> cur, View3D<const float> prev, View3D<const float> vel2,
                            View3D<float> next) {
  __shared__ float tile[kTy + 2 * kR][kTx + 2 * kR];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * kTx + tx, y = blockIdx.y * kTy + ty;
  const int nx = cur.nx(), ny = cur.ny(), nz = cur.nz();
  const int z0 = kR + blockIdx.z * kZChunk;
  const int z1 = min(z0 + kZChunk, nz - kR);
  const bool inside = x >= kR && x < nx - kR && y >= kR && y < ny - kR;
  // register queue along z: behind[r-1] = cur(z - r), infront[r-1] = cur(z + r)
  float behind[kR], infront[kR];
#pragma unroll
  for (int r = 1; r <= kR; ++r) {
    behind[r - 1] = cur(x, y, z0 - r);
    infront[r - 1] = cur(x, y, z0 + r);
  }
  float c = cur(x, y, z0);
  for (int z = z0; z < z1; ++z) {
    __syncthreads();  // the previous plane's tile has been read by every thread
    tile[ty + kR][tx + kR] = c;
    if (ty < kR) {  // halo rows above and below the tile
      tile[ty][tx + kR] = y >= kR ? cur(x, y - kR, z) : 0.0f;
      tile[ty + kTy + kR][tx + kR] = y + kTy < ny ? cur(x, y + kTy, z) : 0.0f;
    }
    if (tx < kR) {  // halo columns left and right of the tile
      tile[ty + kR][tx] = x >= kR ? cur(x - kR, y, z) : 0.0f;
      tile[ty + kR][tx + kTx + kR] = x + kTx < nx ? cur(x + kTx, y, z) : 0.0f;
    }
    __syncthreads();
    if (inside) {
      float lap = 3.0f * kC0 * c;
#pragma unroll
      for (int r = 1; r <= kR; ++r) {
        lap += fd_coef(r) * (tile[ty + kR][tx + kR - r] + tile[ty + kR][tx + kR + r] + tile[ty + kR - r][tx + kR] +
                             tile[ty + kR + r][tx + kR] + behind[r - 1] + infront[r - 1]);
      }
      next(x, y, z) = 2.0f * c - prev(x, y, z) + vel2(x, y, z) * lap;
    }
    // advance the queue by one plane
#pragma unroll
    for (int r = kR - 1; r > 0; --r) behind[r] = behind[r - 1];
    behind[0] = c;
    c = infront[0];
#pragma unroll
    for (int r = 0; r < kR - 1; ++r) infront[r] = infront[r + 1];
    if (z + 1 < z1) infront[kR - 1] = cur(x, y, z + 1 + kR);
  }
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
  const dim3 block(kTx, kTy), grid(nx / kTx, ny / kTy, (nz - 2 * kR + kZChunk - 1) / kZChunk);
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
