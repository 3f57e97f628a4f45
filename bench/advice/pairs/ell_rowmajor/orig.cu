// Sparse matrix-vector product y = A x with A in ELLPACK format (27 entries per row: the 27-point
// stencil operator of a periodic 100^3 grid), one thread per row. The ELL arrays are stored row by row
// (val[row * K + k]), as a CPU code would, so at each k the lanes of a warp read 32 words 108 bytes
// apart: every load instruction touches 32 sectors. The index-then-value gather x[col] is coalesced.
#include "../bench.cuh"

constexpr int kN = 100, kK = 27;

__global__ void spmv_ell(const int* __restrict__ col, const float* __restrict__ val, const float* __restrict__ x,
                         float* __restrict__ y, int rows, int k_per_row) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float sum = 0.0f;
  for (int k = 0; k < k_per_row; ++k) {
    int e = r * k_per_row + k;  // nnz < 2^31
    sum += val[e] * x[col[e]];
  }
  y[r] = sum;
}

int main() {
  const int rows = kN * kN * kN;
  const size_t nnz = (size_t)rows * kK;
  std::vector<int> col(nnz);
  std::vector<float> val(nnz), x(rows), y(rows);
  Rng rng(20);
  for (int r = 0; r < rows; ++r) {
    int px = r % kN, py = (r / kN) % kN, pz = r / (kN * kN), k = 0;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx, ++k) {
          int c = ((pz + dz + kN) % kN * kN + (py + dy + kN) % kN) * kN + (px + dx + kN) % kN;
          col[(size_t)r * kK + k] = c;  // row-major ELL: entry k of row r at r * K + k
          val[(size_t)r * kK + k] = rng.uniform(0.5f, 1.5f);
        }
  }
  for (auto& v : x) v = rng.uniform(0.5f, 1.5f);
  int* d_col;
  float *d_val, *d_x, *d_y;
  CK(cudaMalloc(&d_col, nnz * sizeof(int)));
  CK(cudaMalloc(&d_val, nnz * sizeof(float)));
  CK(cudaMalloc(&d_x, rows * sizeof(float)));
  CK(cudaMalloc(&d_y, rows * sizeof(float)));
  CK(cudaMemcpy(d_col, col.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_val, val.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_x, x.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    spmv_ell<<<(rows + 255) / 256, 256>>>(d_col, d_val, d_x, d_y, rows, kK);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(y.data(), d_y, rows * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int r = 0; r < rows; ++r) {
    double want = 0.0;
    for (int k = 0; k < kK; ++k) want += (double)val[(size_t)r * kK + k] * x[col[(size_t)r * kK + k]];
    bad += !close_enough(y[r], want, 1e-5, 1e-5);
  }
  CK(cudaFree(d_col));
  CK(cudaFree(d_val));
  CK(cudaFree(d_x));
  CK(cudaFree(d_y));
  return verdict("ell_rowmajor", bad, rows);
}
