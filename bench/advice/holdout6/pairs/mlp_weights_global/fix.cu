// Neural texture decoding: a 2048 x 4096 texture stored as 8 latent features per texel (planar), decoded by a
// tiny MLP (mlp.cuh: 8 -> 32 -> 32 -> 3, 1443 weights) per texel, one thread per texel, as orig.cu, with the
// weights in __constant__ memory (copied there once with cudaMemcpyToSymbol): every lane of a warp reads the
// same weight, which the constant cache broadcasts, and the unrolled multiply-adds take it as an operand.
#include "bench.cuh"
#include "mlp.cuh"

__constant__ float c_weights[kWeights];

struct Texture {
  int texels;
  const float* __restrict__ feat;  // [kIn][texels]
  float* __restrict__ rgb;         // [kOut][texels]
};

__global__ void mlp_shade(Texture tex) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= tex.texels) return;
  float f[kIn], c[kOut];
#pragma unroll
  for (int k = 0; k < kIn; ++k) f[k] = tex.feat[(size_t)k * tex.texels + i];
  mlp_forward(c_weights, f, c);
#pragma unroll
  for (int j = 0; j < kOut; ++j) tex.rgb[(size_t)j * tex.texels + i] = c[j];
}

int main() {
  const int texels = 2048 * 4096;
  std::vector<float> w(kWeights), feat((size_t)kIn * texels), got((size_t)kOut * texels);
  Rng rng(6502);
  for (auto& v : w) v = rng.uniform(-0.35f, 0.35f);
  for (auto& v : feat) v = rng.uniform(-1.0f, 1.0f);
  float *d_feat, *d_rgb;
  CK(cudaMalloc(&d_feat, feat.size() * sizeof(float)));
  CK(cudaMalloc(&d_rgb, got.size() * sizeof(float)));
  CK(cudaMemcpyToSymbol(c_weights, w.data(), kWeights * sizeof(float)));
  CK(cudaMemcpy(d_feat, feat.data(), feat.size() * sizeof(float), cudaMemcpyHostToDevice));
  const Texture tex{texels, d_feat, d_rgb};
  for (int rep = 0; rep < 3; ++rep) {
    mlp_shade<<<(texels + 255) / 256, 256>>>(tex);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_rgb, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < texels; i += 509) {
    float f[kIn], c[kOut];
    for (int k = 0; k < kIn; ++k) f[k] = feat[(size_t)k * texels + i];
    mlp_forward(w.data(), f, c);
    for (int j = 0; j < kOut; ++j, ++checked) bad += !close_enough(got[(size_t)j * texels + i], c[j], 1e-4, 1e-4);
  }
  CK(cudaFree(d_feat));
  CK(cudaFree(d_rgb));
  return verdict("mlp_weights_global", bad, checked);
}
