// A bank of 8192 independent biquad (second-order IIR) filters over 8192 time steps, one per channel (the
// per-band equalizer of a multichannel audio / sensor-array pipeline), samples stored time-major (x[t * C + c]) so
// each warp load is coalesced. A thread per channel runs the recursion; the recursion is sequential in time and
// there are only 8192 channels (256 warps, two per SM). Written as plain C (x may alias y), each step's input load
// waits for the previous step's store and is used at once, so every step waits for a DRAM round trip.
#include "bench.cuh"

struct Biquad {
  float b0, b1, b2, a1, a2;  // direct form I, a0 = 1
};

__global__ void biquad_filter(const float* x, float* y, const Biquad* coef,
                              int channels, int steps) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  const Biquad q = coef[c];
  float x1 = 0.0f, x2 = 0.0f, y1 = 0.0f, y2 = 0.0f;
  for (int t = 0; t < steps; ++t) {
    const float xt = x[static_cast<long>(t) * channels + c];
    const float yt = q.b0 * xt + q.b1 * x1 + q.b2 * x2 - q.a1 * y1 - q.a2 * y2;
    y[static_cast<long>(t) * channels + c] = yt;
    x2 = x1, x1 = xt, y2 = y1, y1 = yt;
  }
}

int main() {
  const int channels = 8192, steps = 8192;
  const long n = static_cast<long>(channels) * steps;
  std::vector<float> x(n), got(n);
  std::vector<Biquad> coef(channels);
  Rng rng(8108);
  for (int c = 0; c < channels; ++c) {  // stable low-pass sections: poles at radius r, angle w
    const double r = 0.90 + 0.07 * rng.uniform(0.0f, 1.0f), w = 0.05 + 0.5 * rng.uniform(0.0f, 1.0f);
    const double a1 = -2.0 * r * std::cos(w), a2 = r * r, g = (1.0 + a1 + a2) / 4.0;
    coef[c] = {static_cast<float>(g), static_cast<float>(2 * g), static_cast<float>(g), static_cast<float>(a1), static_cast<float>(a2)};
  }
  for (long i = 0; i < n; ++i) x[i] = rng.uniform(-1.0f, 1.0f);
  float *d_x, *d_y;
  Biquad* d_c;
  CK(cudaMalloc(&d_x, n * sizeof(float)));
  CK(cudaMalloc(&d_y, n * sizeof(float)));
  CK(cudaMalloc(&d_c, channels * sizeof(Biquad)));
  CK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_c, coef.data(), channels * sizeof(Biquad), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    biquad_filter<<<channels / 64, 64>>>(d_x, d_y, d_c, channels, steps);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int c = 0; c < channels; c += 37) {  // the same recursion in double for 222 channels
    const Biquad& q = coef[c];
    double x1 = 0, x2 = 0, y1 = 0, y2 = 0;
    for (int t = 0; t < steps; ++t, ++checked) {
      const double xt = x[static_cast<long>(t) * channels + c];
      const double yt = q.b0 * xt + q.b1 * x1 + q.b2 * x2 - q.a1 * y1 - q.a2 * y2;
      bad += !close_enough(got[static_cast<long>(t) * channels + c], yt, 1e-3, 1e-3);
      x2 = x1, x1 = xt, y2 = y1, y1 = yt;
    }
  }
  CK(cudaFree(d_x));
  CK(cudaFree(d_y));
  CK(cudaFree(d_c));
  return verdict("biquad_bank", bad, checked);
}
