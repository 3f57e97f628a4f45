// Multichannel FIR filter (a sensor array, 65536 channels interleaved sample by sample): one thread per
// channel walks along time keeping the last kTaps samples in a sliding window. The tap count is a
// compile-time constant, so the window loops unroll, every index is static and the window stays in
// registers.
#include "../bench.cuh"

constexpr int kMaxTaps = 16, kTaps = 8;
__constant__ float c_h[kMaxTaps];

__global__ void fir_channels(const float* __restrict__ x, float* __restrict__ y, int channels, int samples) {
  constexpr int taps = kTaps;
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  float win[kMaxTaps];
#pragma unroll
  for (int j = 0; j < taps - 1; ++j) win[j] = x[(size_t)j * channels + c];
  for (int t = 0; t < samples; ++t) {
    win[taps - 1] = x[(size_t)(t + taps - 1) * channels + c];
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < taps; ++j) acc += c_h[j] * win[j];
    y[(size_t)t * channels + c] = acc;
#pragma unroll
    for (int j = 0; j < taps - 1; ++j) win[j] = win[j + 1];
  }
}

int main() {
  const int channels = 65536, samples = 512, taps = kTaps;
  const size_t nx = (size_t)(samples + taps - 1) * channels, ny = (size_t)samples * channels;
  std::vector<float> x(nx), y(ny), h(kMaxTaps, 0.0f);
  Rng rng(31);
  for (auto& v : x) v = rng.uniform(-1.0f, 1.0f) + 1e-3f;
  for (int j = 0; j < taps; ++j) h[j] = rng.uniform(0.05f, 0.25f);
  float *d_x, *d_y;
  CK(cudaMalloc(&d_x, nx * sizeof(float)));
  CK(cudaMalloc(&d_y, ny * sizeof(float)));
  CK(cudaMemcpy(d_x, x.data(), nx * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpyToSymbol(c_h, h.data(), kMaxTaps * sizeof(float)));
  for (int rep = 0; rep < 3; ++rep) {
    fir_channels<<<channels / 256, 256>>>(d_x, d_y, channels, samples);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(y.data(), d_y, ny * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int c = 0; c < channels; c += 7)
    for (int t = 0; t < samples; ++t, ++checked) {
      double want = 0.0;
      for (int j = 0; j < taps; ++j) want += (double)h[j] * x[(size_t)(t + j) * channels + c];
      bad += !close_enough(y[(size_t)t * channels + c], want, 1e-5, 1e-6);
    }
  CK(cudaFree(d_x));
  CK(cudaFree(d_y));
  return verdict("fir_window", bad, checked);
}
