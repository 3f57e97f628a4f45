// y = A x for a sparse matrix in CSR with power-law row lengths (a web/social graph: 131072 rows, median
// ~40 and mean ~100 entries per row, a few rows with thousands), one thread per row: the lanes of a warp
// walk 32 different rows, so each load of col/val touches up to 32 sectors, and the warp runs as long as
// its longest row.
#include "bench.cuh"

__global__ void spmv_csr(const int* __restrict__ row_ptr, const int* __restrict__ col,
                         const float* __restrict__ val, const float* __restrict__ x, float* __restrict__ y,
                         int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float acc = 0.0f;
  for (int j = row_ptr[r]; j < row_ptr[r + 1]; ++j) acc += val[j] * x[col[j]];
  y[r] = acc;
}

int main() {
  const int rows = 131072, cols = 131072;
  std::vector<int> row_ptr(rows + 1);
  Rng rng(101);
  row_ptr[0] = 0;
  for (int r = 0; r < rows; ++r) {  // Pareto-like lengths: 24 / u^0.8, capped
    double u = (rng.next() + 1.0) / 2147483649.0;
    int len = (int)std::fmin(16384.0, std::floor(24.0 / std::pow(u, 0.8)));
    row_ptr[r + 1] = row_ptr[r] + len;
  }
  const int nnz = row_ptr[rows];
  std::vector<int> col(nnz);
  std::vector<float> val(nnz), x(cols), y(rows);
  for (int j = 0; j < nnz; ++j) {
    col[j] = (int)(rng.next() % cols);
    val[j] = rng.uniform(-1.0f, 1.0f);
  }
  for (auto& v : x) v = rng.uniform(-1.0f, 1.0f);
  int *d_row_ptr, *d_col;
  float *d_val, *d_x, *d_y;
  CK(cudaMalloc(&d_row_ptr, (rows + 1) * sizeof(int)));
  CK(cudaMalloc(&d_col, nnz * sizeof(int)));
  CK(cudaMalloc(&d_val, nnz * sizeof(float)));
  CK(cudaMalloc(&d_x, cols * sizeof(float)));
  CK(cudaMalloc(&d_y, rows * sizeof(float)));
  CK(cudaMemcpy(d_row_ptr, row_ptr.data(), (rows + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_col, col.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_val, val.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_x, x.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    spmv_csr<<<rows / 256, 256>>>(d_row_ptr, d_col, d_val, d_x, d_y, rows);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(y.data(), d_y, rows * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int r = 0; r < rows; ++r) {
    double want = 0.0, mag = 0.0;
    for (int j = row_ptr[r]; j < row_ptr[r + 1]; ++j) {
      want += (double)val[j] * x[col[j]];
      mag += std::fabs((double)val[j] * x[col[j]]);
    }
    bad += !close_enough(y[r], want, 1e-4, 1e-5 * mag + 1e-5);
  }
  CK(cudaFree(d_row_ptr));
  CK(cudaFree(d_col));
  CK(cudaFree(d_val));
  CK(cudaFree(d_x));
  CK(cudaFree(d_y));
  std::printf("nnz %d\n", nnz);
  return verdict("spmv_csr_powerlaw_ww", bad, rows);
}
