// Black-Scholes call prices for three batches of options (different sizes, one launch each), each
// option priced on a 16-point volatility grid and averaged. The constants were pasted from a
// double-precision reference without the f suffix, so the float code runs in FP64 with conversions.
#include "../bench.cuh"

constexpr int kVols = 16;

__device__ float cnd(float d) {
  float k = 1.0 / (1.0 + 0.2316419 * fabsf(d));
  float poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))));
  float c = 0.3989422804 * expf(-0.5f * d * d) * poly;
  return d > 0.0f ? 1.0f - c : c;
}

__global__ void price_calls(const float* __restrict__ spot, const float* __restrict__ strike,
                            const float* __restrict__ years, float* __restrict__ call, int n, float rate) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = spot[i], x = strike[i], t = years[i];
  float sqrt_t = sqrtf(t), disc = expf(-rate * t), acc = 0.0f;
  for (int v = 0; v < kVols; ++v) {
    float vol = 0.1f + 0.025f * v;
    float d1 = (logf(s / x) + (rate + 0.5 * vol * vol) * t) / (vol * sqrt_t);
    float d2 = d1 - vol * sqrt_t;
    acc += s * cnd(d1) - x * disc * cnd(d2);
  }
  call[i] = acc * (1.0f / kVols);
}

static double cnd_ref(double d) {
  double k = 1.0 / (1.0 + 0.2316419 * std::fabs(d));
  double poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))));
  double c = 0.3989422804 * std::exp(-0.5 * d * d) * poly;
  return d > 0 ? 1.0 - c : c;
}

int main() {
  const int sizes[3] = {1 << 21, 1 << 22, 1 << 20};
  const float rate = 0.02f;
  int max_n = 0;
  for (int s : sizes) max_n = std::max(max_n, s);
  std::vector<float> s(max_n), x(max_n), t(max_n), c(max_n);
  float *d_s, *d_x, *d_t, *d_c;
  CK(cudaMalloc(&d_s, max_n * sizeof(float)));
  CK(cudaMalloc(&d_x, max_n * sizeof(float)));
  CK(cudaMalloc(&d_t, max_n * sizeof(float)));
  CK(cudaMalloc(&d_c, max_n * sizeof(float)));
  long bad = 0, checked = 0;
  for (int b = 0; b < 3; ++b) {
    const int n = sizes[b];
    Rng rng(15 + b);
    for (int i = 0; i < n; ++i) {
      s[i] = rng.uniform(5.0f, 30.0f);
      x[i] = rng.uniform(1.0f, 100.0f);
      t[i] = rng.uniform(0.25f, 10.0f);
    }
    CK(cudaMemcpy(d_s, s.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_t, t.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    price_calls<<<(n + 255) / 256, 256>>>(d_s, d_x, d_t, d_c, n, rate);
    CK_LAUNCH();
    CK(cudaMemcpy(c.data(), d_c, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i += 61) {
      double st = std::sqrt((double)t[i]), disc = std::exp(-(double)rate * t[i]), acc = 0.0;
      for (int v = 0; v < kVols; ++v) {
        double vol = 0.1f + 0.025f * v;
        double d1 = (std::log((double)s[i] / x[i]) + (rate + 0.5 * vol * vol) * t[i]) / (vol * st);
        double d2 = d1 - vol * st;
        acc += s[i] * cnd_ref(d1) - x[i] * disc * cnd_ref(d2);
      }
      bad += !close_enough(c[i], acc / kVols, 1e-4, 2e-3);
      ++checked;
    }
  }
  CK(cudaFree(d_s));
  CK(cudaFree(d_x));
  CK(cudaFree(d_t));
  CK(cudaFree(d_c));
  return verdict("bs_batches", bad, checked);
}
