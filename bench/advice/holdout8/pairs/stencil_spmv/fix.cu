// Matrix-vector product of a variable-coefficient 5-point diffusion operator on a 4096 x 4096 grid, assembled by a
// generic finite-volume code into ELLPACK (5 slots per row, stored slot-major so every load is coalesced) and
// multiplied by a generic ELL SpMV. Fix: the columns follow the grid pattern (row - nx, row - 1, row, row + 1,
// row + nx), so the kernel computes them (DIA-style offsets) instead of loading 80 MB of column indices; the
// padded boundary slots keep their zero values and read a clamped in-range x.
#include "bench.cuh"

struct EllMatrix {
  int rows;
  const float* __restrict__ val;  // [5][rows]
  const int* __restrict__ col;    // [5][rows], no longer read by the kernel
};

struct GridOffsets {
  int d[5];  // column offset of each slot: -nx, -1, 0, 1, nx
};

__global__ void stencil_spmv(EllMatrix A, GridOffsets o, const float* __restrict__ x, float* __restrict__ y) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= A.rows) return;
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < 5; ++k) {
    const int c = min(max(r + o.d[k], 0), A.rows - 1);  // out-of-range only in zero-valued boundary slots
    sum += A.val[k * A.rows + r] * x[c];
  }
  y[r] = sum;
}

int main() {
  const int nx = 4096, ny = 4096, rows = nx * ny;
  const int off[5] = {-nx, -1, 0, 1, nx};
  std::vector<float> val(5L * rows), x(rows), got(rows);
  std::vector<int> col(5L * rows);
  Rng rng(8103);
  for (int r = 0; r < rows; ++r) {
    const int i = r / nx, j = r % nx;
    const bool has[5] = {i > 0, j > 0, true, j < nx - 1, i < ny - 1};
    float diag = 0.0f;
    for (int k = 0; k < 5; ++k) {
      if (k == 2) continue;
      const float w = has[k] ? rng.uniform(0.5f, 1.5f) : 0.0f;  // face conductance; 0 at the boundary
      val[static_cast<long>(k) * rows + r] = -w;
      col[static_cast<long>(k) * rows + r] = has[k] ? r + off[k] : r;  // padded slot points at the row itself
      diag += w;
    }
    val[2L * rows + r] = diag + 0.01f;
    col[2L * rows + r] = r;
  }
  for (int r = 0; r < rows; ++r) x[r] = rng.uniform(-1.0f, 1.0f);
  float *d_val, *d_x, *d_y;
  int* d_col;
  CK(cudaMalloc(&d_val, 5L * rows * sizeof(float)));
  CK(cudaMalloc(&d_col, 5L * rows * sizeof(int)));
  CK(cudaMalloc(&d_x, rows * sizeof(float)));
  CK(cudaMalloc(&d_y, rows * sizeof(float)));
  CK(cudaMemcpy(d_val, val.data(), 5L * rows * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_col, col.data(), 5L * rows * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_x, x.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
  const EllMatrix A{rows, d_val, d_col};
  const GridOffsets o{{-nx, -1, 0, 1, nx}};
  for (int rep = 0; rep < 3; ++rep) {
    stencil_spmv<<<(rows + 255) / 256, 256>>>(A, o, d_x, d_y);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_y, rows * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int r = 0; r < rows; r += 7, ++checked) {
    double want = 0.0, mag = 0.0;
    for (int k = 0; k < 5; ++k) {
      const long e = static_cast<long>(k) * rows + r;
      want += static_cast<double>(val[e]) * x[col[e]];
      mag += std::fabs(static_cast<double>(val[e]) * x[col[e]]);
    }
    bad += !close_enough(got[r], want, 1e-5, 1e-6 * mag + 1e-7);
  }
  CK(cudaFree(d_val));
  CK(cudaFree(d_col));
  CK(cudaFree(d_x));
  CK(cudaFree(d_y));
  return verdict("stencil_spmv", bad, checked);
}
