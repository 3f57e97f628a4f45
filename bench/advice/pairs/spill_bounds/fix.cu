// Shared-memory tiled SGEMM C = A B (row-major, N x N), 16x16 threads per 128x64 tile of C, each
// thread an 8x4 register tile. __launch_bounds__(256, 2) asks for two resident blocks per SM, which
// leaves the compiler up to 128 registers: the 32 accumulators and their operands stay in registers.
#include "../bench.cuh"

constexpr int BM = 128, BN = 64, BK = 8, TM = 8, TN = 4;

__global__ void __launch_bounds__(256, 2) sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                                      float* __restrict__ C, int N) {
  __shared__ float As[BK][BM];
  __shared__ float Bs[BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y, t = ty * 16 + tx;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < N; k0 += BK) {
#pragma unroll
    for (int l = 0; l < (BM * BK) / 256; ++l) {
      int idx = t + l * 256, r = idx / BK, kk = idx % BK;
      As[kk][r] = A[(size_t)(row0 + r) * N + k0 + kk];
    }
#pragma unroll
    for (int l = 0; l < (BN * BK) / 256; ++l) {
      int idx = t + l * 256, kk = idx / BN, c = idx % BN;
      Bs[kk][c] = B[(size_t)(k0 + kk) * N + col0 + c];
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int m = 0; m < TM; ++m) a[m] = As[kk][ty + 16 * m];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tx * TN + j];
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[m][j] = fmaf(a[m], b[j], acc[m][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int j = 0; j < TN; ++j) C[(size_t)(row0 + ty + 16 * m) * N + col0 + tx * TN + j] = acc[m][j];
}

int main() {
  const int N = 1536;
  const size_t nn = (size_t)N * N;
  std::vector<float> A(nn), B(nn), C(nn);
  Rng rng(22);
  for (auto& v : A) v = rng.uniform(-1.0f, 1.0f);
  for (auto& v : B) v = rng.uniform(-1.0f, 1.0f);
  float *d_a, *d_b, *d_c;
  CK(cudaMalloc(&d_a, nn * sizeof(float)));
  CK(cudaMalloc(&d_b, nn * sizeof(float)));
  CK(cudaMalloc(&d_c, nn * sizeof(float)));
  CK(cudaMemcpy(d_a, A.data(), nn * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_b, B.data(), nn * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(16, 16), grid(N / BN, N / BM);
  for (int rep = 0; rep < 3; ++rep) {
    sgemm_tiled<<<grid, block>>>(d_a, d_b, d_c, N);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(C.data(), d_c, nn * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  Rng pick(23);
  for (int s = 0; s < 4096; ++s, ++checked) {
    int i = pick.next() % N, j = pick.next() % N;
    double want = 0.0;
    for (int k = 0; k < N; ++k) want += (double)A[(size_t)i * N + k] * B[(size_t)k * N + j];
    bad += !close_enough(C[(size_t)i * N + j], want, 1e-4, 1e-3);
  }
  CK(cudaFree(d_a));
  CK(cudaFree(d_b));
  CK(cudaFree(d_c));
  return verdict("spill_bounds", bad, checked);
}
