// Depthwise 1D convolution over time of a channels-last feature sequence (speech / sequence-model front end:
// x[t][c], 131072 steps x 128 channels, 9 taps per channel, zero padding, filter stored tap-major w[k][c]).
// Blocks of 32 x 8 threads: threadIdx.x walks time, threadIdx.y channels, so consecutive lanes are 128 floats
// (512 bytes) apart in every load and store.
#include "bench.cuh"

template <int K>
struct DepthwiseFilter {
  const float* w;  // K x channels
  int channels;
  __host__ __device__ float tap(int k, int c) const { return w[k * channels + c]; }
};

struct Sequence {
  float* x;
  int steps, channels;
  __host__ __device__ float at(int t, int c) const {
    return (t < 0 || t >= steps) ? 0.0f : x[static_cast<long>(t) * channels + c];
  }
  __host__ __device__ float& ref(int t, int c) { return x[static_cast<long>(t) * channels + c]; }
};

template <int K>
__global__ void dwconv_time(Sequence in, DepthwiseFilter<K> f, Sequence out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int c = blockIdx.y * blockDim.y + threadIdx.y;
  if (t >= in.steps || c >= in.channels) return;
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) acc += f.tap(k, c) * in.at(t + k - K / 2, c);
  out.ref(t, c) = acc;
}

constexpr int kTaps = 9;

int main() {
  const int steps = 131072, channels = 128;
  const long n = static_cast<long>(steps) * channels;
  Rng rng(1202);
  std::vector<float> hx(n), hw(kTaps * channels), got(n);
  for (auto& v : hx) v = rng.uniform(-1.0f, 1.0f);
  for (auto& v : hw) v = rng.uniform(-0.5f, 0.5f);
  float *dx, *dw, *dy;
  CK(cudaMalloc(&dx, n * sizeof(float)));
  CK(cudaMalloc(&dy, n * sizeof(float)));
  CK(cudaMalloc(&dw, hw.size() * sizeof(float)));
  CK(cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dw, hw.data(), hw.size() * sizeof(float), cudaMemcpyHostToDevice));
  const Sequence in{dx, steps, channels}, out{dy, steps, channels};
  const DepthwiseFilter<kTaps> f{dw, channels};
  const dim3 block(32, 8), grid(steps / 32, channels / 8);
  for (int rep = 0; rep < 3; ++rep) {
    dwconv_time<kTaps><<<grid, block>>>(in, f, out);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  const Sequence hin{hx.data(), steps, channels};
  const DepthwiseFilter<kTaps> hf{hw.data(), channels};
  long bad = 0, checked = 0;
  for (int t = 0; t < steps; t += 3)
    for (int c = 0; c < channels; ++c, ++checked) {
      double want = 0.0;
      for (int k = 0; k < kTaps; ++k) want += static_cast<double>(hf.tap(k, c)) * hin.at(t + k - kTaps / 2, c);
      bad += !close_enough(got[static_cast<long>(t) * channels + c], want, 1e-5, 1e-5);
    }
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  CK(cudaFree(dw));
  return verdict("conv1d_depthwise_tc", bad, checked);
}
