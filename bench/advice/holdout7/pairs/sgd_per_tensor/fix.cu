// One SGD-with-momentum step (PyTorch's foreach=False path: one launch per parameter tensor) over the 98
// parameter tensors of a small GPT-2-style 8-layer transformer (d_model 512: per layer two LayerNorm
// weight/bias pairs, QKV 512 x 1536 and its bias, output projection 512 x 512 and its bias, MLP 512 x 2048 and
// 2048 x 512 with their biases; plus the token embedding and the final LayerNorm weight), 41.6 M
// parameters, one launch per tensor in the original. Fix: one launch for all tensors (the multi_tensor_apply
// scheme of apex / PyTorch's foreach path): a host-built table of 4096-element chunks (tensor pointers and
// length), one 256-thread block per chunk, 16 elements per thread (10209 blocks).
#include "bench.cuh"

struct SgdParams {
  float lr, momentum, weight_decay;
};

constexpr int CHUNK = 4096, THREADS = 256;

struct Chunk {  // CHUNK elements (fewer at a tensor's end) of one tensor
  float* p;
  const float* g;
  float* buf;
  int n;
};

__global__ void sgd_momentum(const Chunk* __restrict__ chunks, SgdParams h) {
  const Chunk c = chunks[blockIdx.x];
  float* __restrict__ p = c.p;
  const float* __restrict__ g = c.g;
  float* __restrict__ buf = c.buf;
#pragma unroll 4
  for (int i = threadIdx.x; i < c.n; i += THREADS) {
    const float d = fmaf(h.weight_decay, p[i], g[i]);
    const float b = fmaf(h.momentum, buf[i], d);
    buf[i] = b;
    p[i] = fmaf(-h.lr, b, p[i]);
  }
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
  std::vector<Chunk> table;
  for (int t = 0; t < tensors; ++t)
    for (int off = 0; off < sizes[t]; off += CHUNK)
      table.push_back({dp[t] + off, dg[t] + off, db[t] + off, sizes[t] - off < CHUNK ? sizes[t] - off : CHUNK});
  Chunk* d_table;
  CK(cudaMalloc(&d_table, table.size() * sizeof(Chunk)));
  CK(cudaMemcpy(d_table, table.data(), table.size() * sizeof(Chunk), cudaMemcpyHostToDevice));
  sgd_momentum<<<static_cast<int>(table.size()), THREADS>>>(d_table, h);  // one optimizer step
  CK_LAUNCH();
  CK(cudaFree(d_table));
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
