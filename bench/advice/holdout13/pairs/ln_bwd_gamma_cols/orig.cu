// LayerNorm backward, the parameter gradients: dgamma[c] = sum_r dy[r][c] * xhat[r][c] and dbeta[c] = sum_r
// dy[r][c], with xhat = (x - mean[r]) * rstd[r] from the forward pass's saved statistics, for a batch of
// 8 x 1024 tokens with hidden size 1024 (8192 x 1024 floats of dy and x, 64 MB). Written as a column reduction:
// a thread per column looping over all 8192 rows (coalesced: a warp reads 32 consecutive columns of a row), a
// 256-thread block per 256 columns, so the grid is 1024 / 256 = 4 blocks on a 132-SM GPU. Three launches (the
// backward pass of three layers of the same shape, here the same inputs).
#include "bench.cuh"

struct SavedStats {  // what the forward pass kept for the backward pass
  const float* x;
  const float* mean;
  const float* rstd;
  int rows, cols;
  __device__ float xhat(int r, int c) const { return (x[static_cast<size_t>(r) * cols + c] - mean[r]) * rstd[r]; }
};

struct ParamGrads {
  float* dgamma;
  float* dbeta;
};

__global__ void ln_grad_params(const float* __restrict__ dy, SavedStats s, ParamGrads g) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= s.cols) return;
  float dg = 0.0f, db = 0.0f;
  for (int r = 0; r < s.rows; ++r) {
    const float d = dy[static_cast<size_t>(r) * s.cols + c];
    dg += d * s.xhat(r, c);
    db += d;
  }
  g.dgamma[c] = dg;
  g.dbeta[c] = db;
}

int main() {
  const int rows = 8192, cols = 1024;
  const size_t n = static_cast<size_t>(rows) * cols;
  std::vector<float> dy(n), x(n), mean(rows), rstd(rows);
  Rng rng(4242);
  for (auto& v : dy) v = rng.uniform(-1.0f, 1.0f);
  for (auto& v : x) v = rng.uniform(-2.0f, 2.0f);
  for (int r = 0; r < rows; ++r) mean[r] = rng.uniform(-0.1f, 0.1f), rstd[r] = rng.uniform(0.8f, 1.25f);
  float *ddy, *dx, *dmean, *drstd, *dgrads;
  CK(cudaMalloc(&ddy, n * sizeof(float)));
  CK(cudaMalloc(&dx, n * sizeof(float)));
  CK(cudaMalloc(&dmean, rows * sizeof(float)));
  CK(cudaMalloc(&drstd, rows * sizeof(float)));
  CK(cudaMalloc(&dgrads, 2 * cols * sizeof(float)));
  CK(cudaMemcpy(ddy, dy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dmean, mean.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(drstd, rstd.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
  const SavedStats s{dx, dmean, drstd, rows, cols};
  const ParamGrads g{dgrads, dgrads + cols};
  for (int layer = 0; layer < 3; ++layer) {
    ln_grad_params<<<(cols + 255) / 256, 256>>>(ddy, s, g);
    CK_LAUNCH();
  }
  std::vector<float> got(2 * cols);
  CK(cudaMemcpy(got.data(), dgrads, 2 * cols * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<double> dg(cols, 0.0), db(cols, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const double d = dy[static_cast<size_t>(r) * cols + c];
      dg[c] += d * ((x[static_cast<size_t>(r) * cols + c] - mean[r]) * static_cast<double>(rstd[r]));
      db[c] += d;
    }
  long bad = 0;
  for (int c = 0; c < cols; ++c) bad += !close_enough(got[c], dg[c], 1e-3, 2e-2) + !close_enough(got[cols + c], db[c], 1e-3, 2e-2);
  CK(cudaFree(ddy));
  CK(cudaFree(dx));
  CK(cudaFree(dmean));
  CK(cudaFree(drstd));
  CK(cudaFree(dgrads));
  return verdict("ln_bwd_gamma_cols", bad, 2L * cols);
}
