// 8 x 8 SPD solve on values a thread holds: Cholesky factor L (lower triangle, packed row by row, 36
// values), then forward and back substitution. Shared by the batched least-squares solvers (host and
// device); the caller loads the lower triangle and right-hand side in whatever layout its batch uses.
#pragma once

constexpr int kDim = 8;
constexpr int kTri = kDim * (kDim + 1) / 2;  // 36 packed lower-triangle entries

__host__ __device__ inline int tri(int i, int j) { return i * (i + 1) / 2 + j; }  // j <= i

// In place: l holds A's lower triangle on entry, L on exit; x holds b on entry, the solution on exit.
__host__ __device__ inline void chol8_solve(float (&l)[kTri], float (&x)[kDim]) {
#pragma unroll
  for (int j = 0; j < kDim; ++j) {
    float d = l[tri(j, j)];
#pragma unroll
    for (int k = 0; k < j; ++k) d -= l[tri(j, k)] * l[tri(j, k)];
    const float ljj = sqrtf(d), inv = 1.0f / ljj;
    l[tri(j, j)] = ljj;
#pragma unroll
    for (int i = j + 1; i < kDim; ++i) {
      float s = l[tri(i, j)];
#pragma unroll
      for (int k = 0; k < j; ++k) s -= l[tri(i, k)] * l[tri(j, k)];
      l[tri(i, j)] = s * inv;
    }
  }
#pragma unroll
  for (int i = 0; i < kDim; ++i) {  // L y = b
    float s = x[i];
#pragma unroll
    for (int k = 0; k < i; ++k) s -= l[tri(i, k)] * x[k];
    x[i] = s / l[tri(i, i)];
  }
#pragma unroll
  for (int i = kDim - 1; i >= 0; --i) {  // L^T x = y
    float s = x[i];
#pragma unroll
    for (int k = i + 1; k < kDim; ++k) s -= l[tri(k, i)] * x[k];
    x[i] = s / l[tri(i, i)];
  }
}
