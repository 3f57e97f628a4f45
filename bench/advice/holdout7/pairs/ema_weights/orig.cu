// Exponential moving average of a model's weights after an optimizer step (the EMA / Polyak copy kept by
// diffusion and self-supervised trainers): ema = decay * ema + (1 - decay) * w over 64 M float parameters,
// in place, a float4 of each per thread, 256-thread blocks; one FMA-pair per 12 bytes moved (805 MB per
// launch): DRAM-bound.
#include "bench.cuh"

struct EmaStep {
  float decay, one_minus_decay;
};

__global__ void ema_update(float4* __restrict__ ema, const float4* __restrict__ w, int quads, EmaStep s) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= quads) return;
  const float4 e = ema[i], p = w[i];
  ema[i] = make_float4(fmaf(s.decay, e.x, s.one_minus_decay * p.x), fmaf(s.decay, e.y, s.one_minus_decay * p.y),
                       fmaf(s.decay, e.z, s.one_minus_decay * p.z), fmaf(s.decay, e.w, s.one_minus_decay * p.w));
}

int main() {
  const int n = 1 << 26, quads = n / 4;
  std::vector<float> ema(n), w(n), got(n);
  Rng rng(7109);
  for (int i = 0; i < n; ++i) {
    w[i] = rng.uniform(-0.1f, 0.1f);
    ema[i] = w[i] + rng.uniform(-0.01f, 0.01f);
  }
  float4 *d_ema, *d_w;
  CK(cudaMalloc(&d_ema, n * sizeof(float)));
  CK(cudaMalloc(&d_w, n * sizeof(float)));
  CK(cudaMemcpy(d_ema, ema.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_w, w.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const EmaStep step{0.999f, 1.0f - 0.999f};
  for (int rep = 0; rep < 3; ++rep) {  // three steps in place
    ema_update<<<(quads + 255) / 256, 256>>>(d_ema, d_w, quads, step);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_ema, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 3, ++checked) {
    double e = ema[i];
    for (int rep = 0; rep < 3; ++rep) e = static_cast<double>(step.decay) * e + static_cast<double>(step.one_minus_decay) * w[i];
    bad += !close_enough(got[i], e, 1e-5, 1e-8);
  }
  CK(cudaFree(d_ema));
  CK(cudaFree(d_w));
  return verdict("ema_weights", bad, checked);
}
