// One stream-and-collide step of a D2Q9 lattice-Boltzmann (BGK) fluid on a periodic 4096 x 2048 grid, pull
// scheme, 32x8-thread blocks, with the nine distributions of a cell stored together (array of structures,
// f[cell * 9 + q], as a CPU code lays them out). Each of the nine loads and nine stores of a warp then
// strides 36 bytes per lane: 36 sectors and 9-10 cache lines per instruction for 128 useful bytes, and
// every store writes 4 bytes of each 32-byte sector it touches.
#include "bench.cuh"

constexpr int NX = 4096, NY = 2048;
constexpr size_t NCELL = (size_t)NX * NY;

// where distribution q of a cell lives
__host__ __device__ __forceinline__ size_t fidx(size_t cell, int q) { return cell * 9 + q; }

__global__ void lbm_step(const float* __restrict__ src, float* __restrict__ dst, float omega) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= NX || y >= NY) return;
  const int cx[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
  const int cy[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
  const float w[9] = {4.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 36, 1.0f / 36, 1.0f / 36, 1.0f / 36};
  float f[9], rho = 0.0f, ux = 0.0f, uy = 0.0f;
#pragma unroll
  for (int q = 0; q < 9; ++q) {  // pull: distribution q arrives from the cell at (x, y) - c_q
    int xs = (x - cx[q] + NX) % NX, ys = (y - cy[q] + NY) % NY;
    f[q] = src[fidx((size_t)ys * NX + xs, q)];
    rho += f[q];
    ux += cx[q] * f[q];
    uy += cy[q] * f[q];
  }
  ux /= rho;
  uy /= rho;
  float usq = 1.5f * (ux * ux + uy * uy);
  size_t cell = (size_t)y * NX + x;
#pragma unroll
  for (int q = 0; q < 9; ++q) {
    float cu = 3.0f * (cx[q] * ux + cy[q] * uy);
    float feq = w[q] * rho * (1.0f + cu + 0.5f * cu * cu - usq);
    dst[fidx(cell, q)] = f[q] - omega * (f[q] - feq);
  }
}

int main() {
  const float omega = 1.7f;
  const int cx[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
  const int cy[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
  const double w[9] = {4.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36};
  std::vector<float> f(NCELL * 9), g(NCELL * 9);
  Rng rng(4010);
  for (size_t c = 0; c < NCELL; ++c)
    for (int q = 0; q < 9; ++q) f[fidx(c, q)] = (float)(w[q] * (1.0 + rng.uniform(-0.1f, 0.1f)));
  float *d_f, *d_g;
  CK(cudaMalloc(&d_f, f.size() * sizeof(float)));
  CK(cudaMalloc(&d_g, g.size() * sizeof(float)));
  CK(cudaMemcpy(d_f, f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
  const dim3 block(32, 8), grid(NX / 32, NY / 8);
  for (int rep = 0; rep < 3; ++rep) {  // the same step from the same state: the result is checked once
    lbm_step<<<grid, block>>>(d_f, d_g, omega);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(g.data(), d_g, g.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (size_t cell = 0; cell < NCELL; cell += 131) {  // includes the periodic edges
    int x = (int)(cell % NX), y = (int)(cell / NX);
    double fq[9], rho = 0.0, ux = 0.0, uy = 0.0;
    for (int q = 0; q < 9; ++q) {
      int xs = (x - cx[q] + NX) % NX, ys = (y - cy[q] + NY) % NY;
      fq[q] = f[fidx((size_t)ys * NX + xs, q)];
      rho += fq[q];
      ux += cx[q] * fq[q];
      uy += cy[q] * fq[q];
    }
    ux /= rho;
    uy /= rho;
    double usq = 1.5 * (ux * ux + uy * uy);
    for (int q = 0; q < 9; ++q) {
      double cu = 3.0 * (cx[q] * ux + cy[q] * uy);
      double feq = w[q] * rho * (1.0 + cu + 0.5 * cu * cu - usq);
      bad += !close_enough(g[fidx(cell, q)], fq[q] - omega * (fq[q] - feq), 1e-5, 1e-7);
      ++checked;
    }
  }
  CK(cudaFree(d_f));
  CK(cudaFree(d_g));
  return verdict("lbm_d2q9_aos", bad, checked);
}
