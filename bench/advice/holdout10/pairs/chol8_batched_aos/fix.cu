// Batched 8 x 8 normal-equation solves (per-patch least squares, e.g. 8-parameter homography / lens-model
// refits in a bundle-adjustment inner loop): one thread per system. Fix: the batch is stored interleaved
// (entry e of system s at rec[e * capacity + s], the cuBLAS/MAGMA "interleaved batch" layout), so lane k
// reads the word next to lane k-1's and every warp load is one 128-byte line. Three launches of different
// batch sizes (131072, 262144, 524288 systems). Solver in include/chol8.cuh, unchanged.
#include "bench.cuh"
#include "chol8.cuh"

struct SystemBatch {  // interleaved layout: entry e (A row-major 0..63, then b 64..71) of system s at rec[e * cap + s]
  const float* rec;
  float* x;
  int count, cap;
  static constexpr int kRec = kDim * kDim + kDim;
  __host__ __device__ float a(int s, int i, int j) const { return rec[static_cast<long>(i * kDim + j) * cap + s]; }
  __host__ __device__ float b(int s, int i) const { return rec[static_cast<long>(kDim * kDim + i) * cap + s]; }
  __host__ __device__ float& out(int s, int i) const { return x[static_cast<long>(i) * cap + s]; }
};

__global__ void solve_spd8(SystemBatch batch) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= batch.count) return;
  float l[kTri], x[kDim];
#pragma unroll
  for (int i = 0; i < kDim; ++i) {
#pragma unroll
    for (int j = 0; j <= i; ++j) l[tri(i, j)] = batch.a(s, i, j);
    x[i] = batch.b(s, i);
  }
  chol8_solve(l, x);
#pragma unroll
  for (int i = 0; i < kDim; ++i) batch.out(s, i) = x[i];
}

int main() {
  const int cap = 524288, sizes[3] = {131072, 262144, 524288};
  const int rec = SystemBatch::kRec;
  std::vector<float> h(static_cast<long>(cap) * rec), x(static_cast<long>(cap) * kDim);
  Rng rng(10202);
  for (int s = 0; s < cap; ++s) {  // same values as orig, stored interleaved
    auto m = [&](int e) -> float& { return h[static_cast<long>(e) * cap + s]; };
    for (int i = 0; i < kDim; ++i) {
      for (int j = 0; j < i; ++j) m(i * kDim + j) = m(j * kDim + i) = rng.uniform(-1.0f, 1.0f);
      m(i * kDim + i) = rng.uniform(8.0f, 12.0f);
      m(kDim * kDim + i) = rng.uniform(-4.0f, 4.0f);
    }
  }
  float *d_rec, *d_x;
  CK(cudaMalloc(&d_rec, h.size() * sizeof(float)));
  CK(cudaMalloc(&d_x, x.size() * sizeof(float)));
  CK(cudaMemcpy(d_rec, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  long bad = 0, checked = 0;
  for (int count : sizes) {
    CK(cudaMemset(d_x, 0, x.size() * sizeof(float)));
    const SystemBatch batch{d_rec, d_x, count, cap};
    solve_spd8<<<(count + 255) / 256, 256>>>(batch);
    CK_LAUNCH();
    CK(cudaMemcpy(x.data(), d_x, x.size() * sizeof(float), cudaMemcpyDeviceToHost));
    const SystemBatch host{h.data(), x.data(), count, cap};
    for (int s = 0; s < count; s += 53) {  // residual of the solution in double
      for (int i = 0; i < kDim; ++i, ++checked) {
        double r = host.b(s, i);
        for (int j = 0; j < kDim; ++j) r -= static_cast<double>(host.a(s, i, j)) * host.out(s, j);
        bad += !close_enough(r, 0.0, 0.0, 1e-4);
      }
    }
    bad += host.out(count - 1, 0) == 0.0f;  // the last system of the launch was solved
  }
  CK(cudaFree(d_rec));
  CK(cudaFree(d_x));
  return verdict("chol8_batched_aos", bad, checked);
}
