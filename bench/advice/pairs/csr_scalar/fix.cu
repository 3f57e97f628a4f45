// Sparse matrix-vector product y = A x in CSR format, one warp per row (vector CSR): the lanes of a
// warp read consecutive column indices and values of their row, and a shuffle reduction adds them.
#include "../bench.cuh"

__global__ void spmv_csr(const int* __restrict__ row_ptr, const int* __restrict__ col, const float* __restrict__ val,
                         const float* __restrict__ x, float* __restrict__ y, int rows) {
  int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (r >= rows) return;
  float sum = 0.0f;
  for (int j = row_ptr[r] + lane; j < row_ptr[r + 1]; j += 32) sum += val[j] * x[col[j]];
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
  if (lane == 0) y[r] = sum;
}

int main() {
  const int rows = 1 << 20, cols = 1 << 20;
  std::vector<int> row_ptr(rows + 1);
  Rng rng(20);
  row_ptr[0] = 0;
  for (int r = 0; r < rows; ++r) row_ptr[r + 1] = row_ptr[r] + 16 + (int)(rng.next() % 33);  // 16..48 per row
  const int nnz = row_ptr[rows];
  std::vector<int> col(nnz);
  std::vector<float> val(nnz), x(cols), y(rows);
  for (int r = 0; r < rows; ++r)  // a band around the diagonal plus scattered entries, as FEM meshes give
    for (int j = row_ptr[r]; j < row_ptr[r + 1]; ++j)
      col[j] = (rng.next() & 3) ? (int)((r + (int)(rng.next() % 2048) - 1024 + cols) % cols) : (int)(rng.next() % cols);
  for (auto& v : val) v = rng.uniform(-1.0f, 1.0f) + 2.0f;
  for (auto& v : x) v = rng.uniform(0.5f, 1.5f);
  int *d_rp, *d_col;
  float *d_val, *d_x, *d_y;
  CK(cudaMalloc(&d_rp, (rows + 1) * sizeof(int)));
  CK(cudaMalloc(&d_col, nnz * sizeof(int)));
  CK(cudaMalloc(&d_val, nnz * sizeof(float)));
  CK(cudaMalloc(&d_x, cols * sizeof(float)));
  CK(cudaMalloc(&d_y, rows * sizeof(float)));
  CK(cudaMemcpy(d_rp, row_ptr.data(), (rows + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_col, col.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_val, val.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_x, x.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    spmv_csr<<<(rows + 7) / 8, 256>>>(d_rp, d_col, d_val, d_x, d_y, rows);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(y.data(), d_y, rows * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int r = 0; r < rows; ++r) {
    double want = 0.0;
    for (int j = row_ptr[r]; j < row_ptr[r + 1]; ++j) want += (double)val[j] * x[col[j]];
    bad += !close_enough(y[r], want, 1e-4, 1e-4);
  }
  CK(cudaFree(d_rp));
  CK(cudaFree(d_col));
  CK(cudaFree(d_val));
  CK(cudaFree(d_x));
  CK(cudaFree(d_y));
  return verdict("csr_scalar", bad, rows);
}
