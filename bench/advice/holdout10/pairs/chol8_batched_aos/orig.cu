// Batched 8 x 8 normal-equation solves (per-patch least squares, e.g. 8-parameter homography / lens-model
// refits in a bundle-adjustment inner loop): one thread per system, each system stored as its own
// contiguous record (a full 8 x 8 matrix then the 8-value right-hand side, 288 bytes), as the CPU code
// laid them out. Three launches of different batch sizes (131072, 262144, 524288 systems). Lane k reads
// record k, so every warp load touches 32 records 288 bytes apart. Solver in include/chol8.cuh.
#include "bench.cuh"
#include "chol8.cuh"

struct SystemBatch {  // record layout: system s at rec[s * 72]: A row-major (64 floats), then b (8 floats)
  const float* rec;
  float* x;
  int count;
  static constexpr int kRec = kDim * kDim + kDim;
  __host__ __device__ float a(int s, int i, int j) const { return rec[static_cast<long>(s) * kRec + i * kDim + j]; }
  __host__ __device__ float b(int s, int i) const { return rec[static_cast<long>(s) * kRec + kDim * kDim + i]; }
  __host__ __device__ float& out(int s, int i) const { return x[static_cast<long>(s) * kDim + i]; }
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
  for (int s = 0; s < cap; ++s) {  // symmetric, diagonally dominant: SPD
    float* m = &h[static_cast<long>(s) * rec];
    for (int i = 0; i < kDim; ++i) {
      for (int j = 0; j < i; ++j) m[i * kDim + j] = m[j * kDim + i] = rng.uniform(-1.0f, 1.0f);
      m[i * kDim + i] = rng.uniform(8.0f, 12.0f);
      m[kDim * kDim + i] = rng.uniform(-4.0f, 4.0f);
    }
  }
  float *d_rec, *d_x;
  CK(cudaMalloc(&d_rec, h.size() * sizeof(float)));
  CK(cudaMalloc(&d_x, x.size() * sizeof(float)));
  CK(cudaMemcpy(d_rec, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  long bad = 0, checked = 0;
  for (int count : sizes) {
    CK(cudaMemset(d_x, 0, x.size() * sizeof(float)));
    const SystemBatch batch{d_rec, d_x, count};
    solve_spd8<<<(count + 255) / 256, 256>>>(batch);
    CK_LAUNCH();
    CK(cudaMemcpy(x.data(), d_x, x.size() * sizeof(float), cudaMemcpyDeviceToHost));
    const SystemBatch host{h.data(), x.data(), count};
    for (int s = 0; s < count; s += 53) {  // residual of the solution in double
      for (int i = 0; i < kDim; ++i, ++checked) {
        double r = host.b(s, i);
        for (int j = 0; j < kDim; ++j) r -= static_cast<double>(host.a(s, i, j)) * host.out(s, j);
        bad += !close_enough(r, 0.0, 0.0, 1e-4);
      }
    }
    bad += x[static_cast<long>(count - 1) * kDim] == 0.0f;  // the last system of the launch was solved
  }
  CK(cudaFree(d_rec));
  CK(cudaFree(d_x));
  return verdict("chol8_batched_aos", bad, checked);
}
