// Batched 4 x 4 dense solves A x = b (the per-pixel normal equations of a Lucas-Kanade / photometric alignment
// step), 4 M systems stored entry-major (a[e * batch + s], coalesced), one thread per system: Gaussian
// elimination with partial pivoting on an augmented 4 x 5 array, pivoting implicitly through a row-index vector
// as in Numerical Recipes (row[k] is the physical row of pivot step k, swapped instead of the rows). Every access
// m[row[r]][c] goes through a run-time index, so the whole array lives in local memory (LDL/STL).
#include "bench.cuh"

#include <utility>

constexpr int N = 4;

struct SystemBatch {
  int batch;
  __device__ __host__ long at(int e, int s) const { return static_cast<long>(e) * batch + s; }
};

__global__ void solve4_batched(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ x,
                               SystemBatch sb) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= sb.batch) return;
  float m[N][N + 1];
  int row[N];
#pragma unroll
  for (int r = 0; r < N; ++r) {
#pragma unroll
    for (int c = 0; c < N; ++c) m[r][c] = a[sb.at(r * N + c, s)];
    m[r][N] = b[sb.at(r, s)];
    row[r] = r;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) {
    int p = k;
    float best = fabsf(m[row[k]][k]);
#pragma unroll
    for (int r = k + 1; r < N; ++r)
      if (fabsf(m[row[r]][k]) > best) best = fabsf(m[row[r]][k]), p = r;
    const int t = row[k];  // implicit pivoting: swap the indices, not the rows
    row[k] = row[p];
    row[p] = t;
    const float inv = 1.0f / m[row[k]][k];
#pragma unroll
    for (int r = k + 1; r < N; ++r) {
      const float f = m[row[r]][k] * inv;
#pragma unroll
      for (int c = k; c <= N; ++c) m[row[r]][c] -= f * m[row[k]][c];
    }
  }
  float xs[N];
#pragma unroll
  for (int r = N - 1; r >= 0; --r) {
    float v = m[row[r]][N];
#pragma unroll
    for (int c = r + 1; c < N; ++c) v -= m[row[r]][c] * xs[c];
    xs[r] = v / m[row[r]][r];
    x[sb.at(r, s)] = xs[r];
  }
}

static double det4(const std::vector<float>& a, const SystemBatch& sb, int s) {  // partial-pivot LU in double
  double m[N][N], det = 1.0;
  for (int r = 0; r < N; ++r)
    for (int c = 0; c < N; ++c) m[r][c] = a[sb.at(r * N + c, s)];
  for (int k = 0; k < N; ++k) {
    int p = k;
    for (int r = k + 1; r < N; ++r)
      if (std::fabs(m[r][k]) > std::fabs(m[p][k])) p = r;
    if (p != k) {
      for (int c = 0; c < N; ++c) std::swap(m[k][c], m[p][c]);
      det = -det;
    }
    det *= m[k][k];
    if (m[k][k] == 0.0) return 0.0;
    for (int r = k + 1; r < N; ++r)
      for (int c = k + 1; c < N; ++c) m[r][c] -= m[r][k] / m[k][k] * m[k][c];
  }
  return det;
}

int main() {
  const int batch = 1 << 22;
  const SystemBatch sb{batch};
  std::vector<float> a(16L * batch), b(4L * batch), got(4L * batch);
  Rng rng(8104);
  for (int s = 0; s < batch; ++s)
    for (int r = 0; r < N; ++r) {
      for (int c = 0; c < N; ++c) a[sb.at(r * N + c, s)] = rng.uniform(-1.0f, 1.0f) + (r == c ? 0.5f : 0.0f);
      b[sb.at(r, s)] = rng.uniform(-1.0f, 1.0f);
    }
  float *d_a, *d_b, *d_x;
  CK(cudaMalloc(&d_a, a.size() * sizeof(float)));
  CK(cudaMalloc(&d_b, b.size() * sizeof(float)));
  CK(cudaMalloc(&d_x, got.size() * sizeof(float)));
  CK(cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_b, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    solve4_batched<<<(batch + 255) / 256, 256>>>(d_a, d_b, d_x, sb);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_x, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int s = 0; s < batch; s += 13) {  // residual check in double: |A x - b| small relative to the scale
    if (std::fabs(det4(a, sb, s)) < 1e-4) continue;  // numerically singular: any float answer is acceptable
    ++checked;
    double worst = 0.0, scale = 1.0;
    for (int r = 0; r < N; ++r) {
      double res = -b[sb.at(r, s)], mag = std::fabs(b[sb.at(r, s)]);
      for (int c = 0; c < N; ++c) {
        res += static_cast<double>(a[sb.at(r * N + c, s)]) * got[sb.at(c, s)];
        mag += std::fabs(static_cast<double>(a[sb.at(r * N + c, s)]) * got[sb.at(c, s)]);
      }
      worst = std::fmax(worst, std::fabs(res));
      scale = std::fmax(scale, mag);
    }
    bad += !(worst <= 1e-4 * scale);
  }
  CK(cudaFree(d_a));
  CK(cudaFree(d_b));
  CK(cudaFree(d_x));
  return verdict("solve4_pivot_local", bad, checked);
}
