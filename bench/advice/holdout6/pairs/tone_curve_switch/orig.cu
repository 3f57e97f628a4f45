// Tone mapping of a 32 M-value linear-light frame through a piecewise polynomial curve (curve.cuh: 8 segments
// of degree 9, generated code with one `case` per segment and its coefficients as __constant__ operands). The
// segment depends on each pixel's value, and a frame's values are spread over the whole range, so the lanes of
// a warp take up to 8 different cases: the warp runs them one after another with the other lanes idle.
#include "bench.cuh"
#include "curve.cuh"

__device__ float tone(float x) {
  const float t = x - segment_of(x);
  switch (segment_of(x)) {
    case 0: return horner(kCurve[0], t);
    case 1: return horner(kCurve[1], t);
    case 2: return horner(kCurve[2], t);
    case 3: return horner(kCurve[3], t);
    case 4: return horner(kCurve[4], t);
    case 5: return horner(kCurve[5], t);
    case 6: return horner(kCurve[6], t);
    default: return horner(kCurve[7], t);
  }
}

__global__ void tone_curve(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tone(in[i]);
}

int main() {
  const int n = 32 << 20;
  std::vector<float> in(n), got(n);
  Rng rng(6106);
  for (auto& v : in) v = rng.uniform(0.0f, 8.0f);
  float *d_in, *d_out;
  CK(cudaMalloc(&d_in, n * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    tone_curve<<<(n + 255) / 256, 256>>>(d_in, d_out, n);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 7, ++checked) {
    const int s = segment_of(in[i]);
    double y = kCurveHost[s][kTerms - 1], t = in[i] - s;
    for (int k = kTerms - 2; k >= 0; --k) y = y * t + kCurveHost[s][k];
    bad += !close_enough(got[i], y, 1e-4, 1e-4);
  }
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return verdict("tone_curve_switch", bad, checked);
}
