// One SGD-with-momentum step (PyTorch's foreach=False path: one launch per parameter tensor) over the 98
// parameter tensors of a small GPT-2-style 8-layer transformer (d_model 512: per layer two LayerNorm
// weight/bias pairs, QKV 512 x 1536 and its bias, output projection 512 x 512 and its bias, MLP 512 x 2048 and
// 2048 x 512 with their biases; plus the token embedding and the final LayerNorm weight), 41.6 M
// parameters: 98 launches of `sgd_momentum`, 49 of them on 512 elements (two blocks), 65 on at most 2048.
#include "bench.cuh"

struct SgdParams {
  float lr, momentum, weight_decay;
};

__global__ void sgd_momentum(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ buf, int n, SgdParams h) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float d = fmaf(h.weight_decay, p[i], g[i]);
  const float b = fmaf(h.momentum, buf[i], d);
  buf[i] = b;
  p[i] = fmaf(-h.lr, b, p[i]);
}

static std::vector<int> model_tensors() {
  std::vector<int> sizes{32000 * 512};  // token embedding
  for (int layer = 0; layer < 8; ++layer)
    for (int s : {512, 512, 512 * 1536, 1536, 512 * 512, 512, 512, 512, 512 * 2048, 2048, 2048 * 512, 512})
      sizes.push_back(s);
  sizes.push_back(512);  // final LayerNorm weight
  return sizes;
}

int main() {
  const std::vector<int> sizes = model_tensors();
  const int tensors = static_cast<int>(sizes.size());
  std::vector<std::vector<float>> p0(tensors), g(tensors), b0(tensors);
  std::vector<float*> dp(tensors), dg(tensors), db(tensors);
  Rng rng(7110);
  for (int t = 0; t < tensors; ++t) {
    p0[t].resize(sizes[t]); g[t].resize(sizes[t]); b0[t].resize(sizes[t]);
    for (int i = 0; i < sizes[t]; ++i) {
      p0[t][i] = rng.uniform(-0.05f, 0.05f); g[t][i] = rng.uniform(-1e-3f, 1e-3f); b0[t][i] = rng.uniform(-1e-3f, 1e-3f);
    }
    CK(cudaMalloc(&dp[t], sizes[t] * sizeof(float)));
    CK(cudaMalloc(&dg[t], sizes[t] * sizeof(float)));
    CK(cudaMalloc(&db[t], sizes[t] * sizeof(float)));
    CK(cudaMemcpy(dp[t], p0[t].data(), sizes[t] * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dg[t], g[t].data(), sizes[t] * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db[t], b0[t].data(), sizes[t] * sizeof(float), cudaMemcpyHostToDevice));
  }
  const SgdParams h{0.01f, 0.9f, 1e-4f};
  for (int t = 0; t < tensors; ++t) {  // one optimizer step
    sgd_momentum<<<(sizes[t] + 255) / 256, 256>>>(dp[t], dg[t], db[t], sizes[t], h);
    CK(cudaGetLastError());
  }
  CK(cudaDeviceSynchronize());
  long bad = 0, checked = 0;
  std::vector<float> gp, gb;
  for (int t = 0; t < tensors; ++t) {
    gp.resize(sizes[t]); gb.resize(sizes[t]);
    CK(cudaMemcpy(gp.data(), dp[t], sizes[t] * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gb.data(), db[t], sizes[t] * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < sizes[t]; i += (sizes[t] > 4096 ? 7 : 1), checked += 2) {
      const double d = static_cast<double>(h.weight_decay) * p0[t][i] + g[t][i];
      const double b = static_cast<double>(h.momentum) * b0[t][i] + d, p = p0[t][i] - static_cast<double>(h.lr) * b;
      bad += !close_enough(gb[i], b, 1e-5, 1e-9) + !close_enough(gp[i], p, 1e-5, 1e-9);
    }
    CK(cudaFree(dp[t])); CK(cudaFree(dg[t])); CK(cudaFree(db[t]));
  }
  return verdict("sgd_per_tensor", bad, checked);
}
