// Block sparse row (BSR) matrix with dense 4 x 4 blocks stored row-major inside each block, as produced by a
// finite-element assembly with four unknowns per node; shared by the host builder/reference and the kernel.
#pragma once

struct Bsr4 {
  const int* row_ptr;  // block rows + 1
  const int* col;      // block column of each block
  const float* val;    // 16 floats per block, row-major
  int block_rows;
  static constexpr int kB = 4;
  __host__ __device__ const float* block(int b) const { return val + static_cast<long>(b) * kB * kB; }
};
