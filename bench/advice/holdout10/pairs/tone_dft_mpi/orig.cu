// Tone-bank analysis of audio frames (pitch / note detection front end): for each of 16384 frames of 256
// samples at 8 kHz, the Hann-windowed DFT power at 64 note frequencies (27.5 Hz * 2^(k/12)), one thread per
// (frame, note), 64 x 4-thread blocks. The float code writes its phases with the M_PI macro, which is a
// double: `cos(2 * M_PI * f * n / fs)` and `sin(...)` (and the window's `cos(2 * M_PI * n / (N - 1))`) are the
// FP64 cos/sin of a double phase with a double division per sample.
#include <cmath>
#include "bench.cuh"

constexpr int kN = 256, kNotes = 64;

struct ToneBank {
  float f0, fs;  // lowest note (Hz), sample rate (Hz)
  __host__ __device__ float freq(int k) const { return f0 * exp2f(k / 12.0f); }
};

__global__ void tone_power(const float* __restrict__ frames, int nframes, ToneBank bank, float* __restrict__ power) {
  const int k = threadIdx.x, fr = blockIdx.x * blockDim.y + threadIdx.y;
  if (fr >= nframes) return;
  const float* x = frames + static_cast<long>(fr) * kN;
  const float f = bank.freq(k), fs = bank.fs;
  float re = 0.0f, im = 0.0f;
  for (int n = 0; n < kN; ++n) {
    const float w = 0.5f - 0.5f * cos(2 * M_PI * n / (kN - 1));  // Hann window
    const float v = x[n] * w;
    re += v * cos(2 * M_PI * f * n / fs);
    im -= v * sin(2 * M_PI * f * n / fs);
  }
  power[static_cast<long>(fr) * kNotes + k] = re * re + im * im;
}

int main() {
  const int nframes = 16384;
  std::vector<float> frames(static_cast<long>(nframes) * kN), power(static_cast<long>(nframes) * kNotes);
  Rng rng(10505);
  for (auto& v : frames) v = rng.uniform(-1, 1);
  const ToneBank bank{27.5f, 8000.0f};
  float *d_frames, *d_power;
  CK(cudaMalloc(&d_frames, frames.size() * sizeof(float)));
  CK(cudaMalloc(&d_power, power.size() * sizeof(float)));
  CK(cudaMemcpy(d_frames, frames.data(), frames.size() * sizeof(float), cudaMemcpyHostToDevice));
  const dim3 block(kNotes, 4), grid(nframes / 4);
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemset(d_power, 0, power.size() * sizeof(float)));
    tone_power<<<grid, block>>>(d_frames, nframes, bank, d_power);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(power.data(), d_power, power.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int fr = 0; fr < nframes; fr += 97) {
    const float* x = &frames[static_cast<long>(fr) * kN];
    double energy = 0.0;
    for (int n = 0; n < kN; ++n) energy += static_cast<double>(x[n]) * x[n];
    for (int k = 0; k < kNotes; ++k, ++checked) {
      const double f = bank.freq(k);
      double re = 0.0, im = 0.0;
      for (int n = 0; n < kN; ++n) {
        const double v = x[n] * (0.5 - 0.5 * std::cos(2 * M_PI * n / (kN - 1)));
        re += v * std::cos(2 * M_PI * f * n / bank.fs);
        im -= v * std::sin(2 * M_PI * f * n / bank.fs);
      }
      bad += !close_enough(power[static_cast<long>(fr) * kNotes + k], re * re + im * im, 1e-3, 1e-5 * kN * energy);
    }
  }
  CK(cudaFree(d_frames));
  CK(cudaFree(d_power));
  return verdict("tone_dft_mpi", bad, checked);
}
