// y = A x for a block sparse row matrix with 4 x 4 blocks (include/bsr.cuh; four unknowns per mesh node, 262144
// block rows, 9-13 blocks per block row), one thread per block row, as in a simple BSR kernel: for each block
// the thread reads the 16 values and the 4 x entries one float at a time (20 scalar loads per block, lanes
// on unrelated blocks), then stores its 4 outputs one float at a time.
#include "bench.cuh"
#include "bsr.cuh"

__global__ void bsr4_spmv(Bsr4 a, const float* __restrict__ x, float* __restrict__ y) {
  const int br = blockIdx.x * blockDim.x + threadIdx.x;
  if (br >= a.block_rows) return;
  float acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
  for (int b = a.row_ptr[br]; b < a.row_ptr[br + 1]; ++b) {
    const float* v = a.block(b);
    const float* xb = x + static_cast<long>(a.col[b]) * Bsr4::kB;
    const float x0 = xb[0], x1 = xb[1], x2 = xb[2], x3 = xb[3];
    acc0 += v[0] * x0 + v[1] * x1 + v[2] * x2 + v[3] * x3;
    acc1 += v[4] * x0 + v[5] * x1 + v[6] * x2 + v[7] * x3;
    acc2 += v[8] * x0 + v[9] * x1 + v[10] * x2 + v[11] * x3;
    acc3 += v[12] * x0 + v[13] * x1 + v[14] * x2 + v[15] * x3;
  }
  float* yb = y + static_cast<long>(br) * Bsr4::kB;
  yb[0] = acc0;
  yb[1] = acc1;
  yb[2] = acc2;
  yb[3] = acc3;
}

int main() {
  const int block_rows = 262144, n = block_rows * Bsr4::kB;
  Rng rng(1208);
  std::vector<int> row_ptr(block_rows + 1, 0), col;
  for (int br = 0; br < block_rows; ++br) {
    const int k = 9 + static_cast<int>(rng.next() % 5);
    for (int j = 0; j < k; ++j) {  // a band around the diagonal, as a mesh numbering gives
      int c = br + static_cast<int>(rng.next() % 2049) - 1024;
      col.push_back(c < 0 ? c + block_rows : (c >= block_rows ? c - block_rows : c));
    }
    row_ptr[br + 1] = static_cast<int>(col.size());
  }
  const long nb = static_cast<long>(col.size());
  std::vector<float> val(nb * 16), hx(n), got(n);
  for (auto& v : val) v = rng.uniform(-1.0f, 1.0f);
  for (auto& v : hx) v = rng.uniform(-1.0f, 1.0f);
  int *drp, *dcol;
  float *dval, *dx, *dy;
  CK(cudaMalloc(&drp, row_ptr.size() * sizeof(int)));
  CK(cudaMalloc(&dcol, nb * sizeof(int)));
  CK(cudaMalloc(&dval, val.size() * sizeof(float)));
  CK(cudaMalloc(&dx, n * sizeof(float)));
  CK(cudaMalloc(&dy, n * sizeof(float)));
  CK(cudaMemcpy(drp, row_ptr.data(), row_ptr.size() * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dcol, col.data(), nb * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dval, val.data(), val.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const Bsr4 a{drp, dcol, dval, block_rows};
  for (int rep = 0; rep < 3; ++rep) {
    bsr4_spmv<<<block_rows / 128, 128>>>(a, dx, dy);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  const Bsr4 h{row_ptr.data(), col.data(), val.data(), block_rows};
  long bad = 0, checked = 0;
  for (int br = 0; br < block_rows; br += 3)
    for (int r = 0; r < Bsr4::kB; ++r, ++checked) {
      double want = 0.0;
      for (int b = h.row_ptr[br]; b < h.row_ptr[br + 1]; ++b)
        for (int c = 0; c < Bsr4::kB; ++c)
          want += static_cast<double>(h.block(b)[r * 4 + c]) * hx[static_cast<long>(h.col[b]) * 4 + c];
      bad += !close_enough(got[static_cast<long>(br) * 4 + r], want, 1e-4, 1e-4);
    }
  CK(cudaFree(drp));
  CK(cudaFree(dcol));
  CK(cudaFree(dval));
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  return verdict("bsr4_spmv_scalar", bad, checked);
}
