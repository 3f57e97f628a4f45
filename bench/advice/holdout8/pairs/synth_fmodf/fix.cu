// Additive synthesis of a bank of 131072 voices x 8 partials for one 256-frame audio block (the oscillator bank
// of a software synthesizer), a thread per voice, output frame-major (out[t * voices + v], coalesced). Each
// partial's phase was wrapped every frame with fmodf(phase + step, 2 pi). Fix: the phase is kept in turns
// (host converts), wrapped with p -= floorf(p) and scaled by 2 pi for __sinf: two instructions for the wrap.
#include "bench.cuh"

constexpr int kPartials = 8;
constexpr float kTwoPi = 6.28318531f;

struct VoiceBank {
  int voices;
  const float* __restrict__ phase0;  // [kPartials][voices], turns
  const float* __restrict__ step;    // [kPartials][voices], turns per frame
  const float* __restrict__ amp;     // [kPartials][voices]
};

__global__ void synth_block(VoiceBank b, float* __restrict__ out, int frames) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= b.voices) return;
  float ph[kPartials], st[kPartials], am[kPartials];
#pragma unroll
  for (int k = 0; k < kPartials; ++k) {
    ph[k] = b.phase0[k * b.voices + v];
    st[k] = b.step[k * b.voices + v];
    am[k] = b.amp[k * b.voices + v];
  }
  for (int t = 0; t < frames; ++t) {
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < kPartials; ++k) {
      ph[k] += st[k];
      ph[k] -= floorf(ph[k]);
      s = fmaf(am[k], __sinf(kTwoPi * ph[k]), s);
    }
    out[static_cast<long>(t) * b.voices + v] = s;
  }
}

int main() {
  const int voices = 131072, frames = 256;
  const long np = static_cast<long>(kPartials) * voices;
  std::vector<float> phase0(np), step(np), amp(np), got(static_cast<long>(frames) * voices);
  Rng rng(8107);
  for (int v = 0; v < voices; ++v) {
    const float f0 = rng.uniform(40.0f, 2000.0f);  // fundamental, Hz at 48 kHz
    for (int k = 0; k < kPartials; ++k) {
      const long e = static_cast<long>(k) * voices + v;
      phase0[e] = rng.uniform(0.0f, kTwoPi);
      step[e] = kTwoPi * f0 * (k + 1) / 48000.0f;
      amp[e] = rng.uniform(0.2f, 1.0f) / (kPartials * (k + 1));
    }
  }
  float *d_p, *d_s, *d_a, *d_out;
  CK(cudaMalloc(&d_p, np * sizeof(float)));
  CK(cudaMalloc(&d_s, np * sizeof(float)));
  CK(cudaMalloc(&d_a, np * sizeof(float)));
  CK(cudaMalloc(&d_out, got.size() * sizeof(float)));
  std::vector<float> turns0(np), turn_step(np);  // the bank's phases in turns
  for (long e = 0; e < np; ++e) turns0[e] = phase0[e] / kTwoPi, turn_step[e] = step[e] / kTwoPi;
  CK(cudaMemcpy(d_p, turns0.data(), np * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_s, turn_step.data(), np * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_a, amp.data(), np * sizeof(float), cudaMemcpyHostToDevice));
  const VoiceBank bank{voices, d_p, d_s, d_a};
  for (int rep = 0; rep < 3; ++rep) {  // three blocks rendered from the same start phases (a looped note)
    synth_block<<<(voices + 127) / 128, 128>>>(bank, d_out, frames);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int v = 0; v < voices; v += 61)
    for (int t = 0; t < frames; t += 3, ++checked) {  // exact phases in double
      double want = 0.0;
      for (int k = 0; k < kPartials; ++k) {
        const long e = static_cast<long>(k) * voices + v;
        want += amp[e] * std::sin(static_cast<double>(phase0[e]) + (t + 1.0) * step[e]);
      }
      bad += !close_enough(got[static_cast<long>(t) * voices + v], want, 0.0, 2e-3);
    }
  CK(cudaFree(d_p));
  CK(cudaFree(d_s));
  CK(cudaFree(d_a));
  CK(cudaFree(d_out));
  return verdict("synth_fmodf", bad, checked);
}
