// Bias + exact (erf) GELU epilogue of an MLP up-projection, run as its own kernel after a column-major GEMM
// (cuBLAS convention: C is 4096 features x 8192 tokens, element (m, n) at m + n * ldc, ldc = 4096; the bias is
// per feature m): out = gelu(alpha * C + bias[m]), 128 MB in and 128 MB out. 32 x 8 blocks whose threadIdx.x
// runs along the tokens n, as in row-major code: a warp's 32 lanes are ldc * 4 = 16 KB apart in the load and
// the store. Three launches (three layers' epilogues of the same shape, here the same C).
#include <cmath>

#include "bench.cuh"

struct ColMajor {
  float* p;
  int rows, cols, ld;
  __host__ __device__ float& at(int m, int n) const { return p[static_cast<size_t>(n) * ld + m]; }
};

struct BiasGelu {
  const float* bias;
  float alpha;
  __host__ __device__ float apply(float acc, int m) const {
    const float v = alpha * acc + bias[m];
    return 0.5f * v * (1.0f + erff(v * 0.70710678f));
  }
};

__global__ void bias_gelu_epilogue(ColMajor c, ColMajor out, BiasGelu ep) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  const int m = blockIdx.y * blockDim.y + threadIdx.y;
  if (m >= c.rows || n >= c.cols) return;
  out.at(m, n) = ep.apply(c.at(m, n), m);
}

int main() {
  const int rows = 4096, cols = 8192;
  const size_t n = static_cast<size_t>(rows) * cols;
  std::vector<float> c(n), bias(rows);
  Rng rng(31337);
  for (auto& v : c) v = rng.uniform(-3.0f, 3.0f);
  for (auto& v : bias) v = rng.uniform(-0.5f, 0.5f);
  float *dc, *dout, *dbias;
  CK(cudaMalloc(&dc, n * sizeof(float)));
  CK(cudaMalloc(&dout, n * sizeof(float)));
  CK(cudaMalloc(&dbias, rows * sizeof(float)));
  CK(cudaMemcpy(dc, c.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dbias, bias.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
  const ColMajor cm{dc, rows, cols, rows}, om{dout, rows, cols, rows};
  const BiasGelu ep{dbias, 0.125f};
  const dim3 block(32, 8), grid((cols + 31) / 32, (rows + 7) / 8);
  for (int layer = 0; layer < 3; ++layer) {
    bias_gelu_epilogue<<<grid, block>>>(cm, om, ep);
    CK_LAUNCH();
  }
  std::vector<float> got(n);
  CK(cudaMemcpy(got.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
  const ColMajor hc{c.data(), rows, cols, rows};
  long bad = 0, checked = 0;
  for (size_t i = 0; i < n; i += 11, ++checked) {
    const int m = static_cast<int>(i % rows), col = static_cast<int>(i / rows);
    const double v = 0.125 * hc.at(m, col) + bias[m];
    bad += !close_enough(got[i], 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))), 1e-5, 1e-5);
  }
  CK(cudaFree(dc));
  CK(cudaFree(dout));
  CK(cudaFree(dbias));
  return verdict("gemm_epilogue_colmajor", bad, checked);
}
