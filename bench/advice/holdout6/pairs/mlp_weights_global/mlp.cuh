// The small per-pixel MLP of the mlp_weights_global pair (a neural texture decoder): 8 latent features ->
// 32 -> 32 (ReLU) -> 3 colour channels, weights packed in one float array (offsets below), and the host
// reference.
#pragma once

constexpr int kIn = 8, kHid = 32, kOut = 3;
constexpr int kW1 = 0, kB1 = kW1 + kHid * kIn, kW2 = kB1 + kHid, kB2 = kW2 + kHid * kHid, kW3 = kB2 + kHid,
              kB3 = kW3 + kOut * kHid, kWeights = kB3 + kOut;

// One pixel's colour from its features f[0..kIn) through the weights w (layout: W1 row-major [kHid][kIn], b1,
// W2 [kHid][kHid], b2, W3 [kOut][kHid], b3).
template <class Weights>
__host__ __device__ inline void mlp_forward(const Weights& w, const float (&f)[kIn], float (&rgb)[kOut]) {
  float h1[kHid], h2[kHid];
#pragma unroll
  for (int j = 0; j < kHid; ++j) {
    float a = w[kB1 + j];
#pragma unroll
    for (int k = 0; k < kIn; ++k) a += w[kW1 + j * kIn + k] * f[k];
    h1[j] = a > 0.0f ? a : 0.0f;
  }
#pragma unroll
  for (int j = 0; j < kHid; ++j) {
    float a = w[kB2 + j];
#pragma unroll
    for (int k = 0; k < kHid; ++k) a += w[kW2 + j * kHid + k] * h1[k];
    h2[j] = a > 0.0f ? a : 0.0f;
  }
#pragma unroll
  for (int j = 0; j < kOut; ++j) {
    float a = w[kB3 + j];
#pragma unroll
    for (int k = 0; k < kHid; ++k) a += w[kW3 + j * kHid + k] * h2[k];
    rgb[j] = a;
  }
}
