// Fused per-channel scale, bias and ReLU of an activation tensor (NCHW, 128 channels of 512x512), read
// and written as float4: four flops per 8 bytes moved, so the kernel runs at DRAM bandwidth.
#include "../bench.cuh"

constexpr int kChannels = 128;
__constant__ float c_scale[kChannels], c_bias[kChannels];

__global__ void scale_bias_relu(const float4* __restrict__ x, float4* __restrict__ y, int plane4, int total4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= total4) return;
  int ch = i / plane4;  // plane4 is a power of two in practice; the division is not what bounds this kernel
  float s = c_scale[ch], b = c_bias[ch];
  float4 v = x[i];
  v.x = fmaxf(fmaf(v.x, s, b), 0.0f);
  v.y = fmaxf(fmaf(v.y, s, b), 0.0f);
  v.z = fmaxf(fmaf(v.z, s, b), 0.0f);
  v.w = fmaxf(fmaf(v.w, s, b), 0.0f);
  y[i] = v;
}

int main() {
  const int plane = 512 * 512, plane4 = plane / 4, total = kChannels * plane, total4 = total / 4;
  std::vector<float> x(total), y(total), scale(kChannels), bias(kChannels);
  Rng rng(29);
  for (auto& v : x) v = rng.uniform(-1.0f, 1.0f) + 1e-3f;
  for (int c = 0; c < kChannels; ++c) {
    scale[c] = rng.uniform(0.5f, 2.0f);
    bias[c] = rng.uniform(-0.5f, 0.5f);
  }
  float *d_x, *d_y;
  CK(cudaMalloc(&d_x, total * sizeof(float)));
  CK(cudaMalloc(&d_y, total * sizeof(float)));
  CK(cudaMemcpy(d_x, x.data(), total * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpyToSymbol(c_scale, scale.data(), sizeof(float) * kChannels));
  CK(cudaMemcpyToSymbol(c_bias, bias.data(), sizeof(float) * kChannels));
  for (int rep = 0; rep < 3; ++rep) {
    scale_bias_relu<<<(total4 + 255) / 256, 256>>>(reinterpret_cast<const float4*>(d_x), reinterpret_cast<float4*>(d_y),
                                                   plane4, total4);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(y.data(), d_y, total * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int i = 0; i < total; ++i) {
    int c = i / plane;
    bad += y[i] != std::fmax(std::fmaf(x[i], scale[c], bias[c]), 0.0f);
  }
  CK(cudaFree(d_x));
  CK(cudaFree(d_y));
  return verdict("bias_relu_float4", bad, total);
}
