// Tone mapping through the piecewise polynomial curve of curve.cuh (as orig.cu), without a branch per segment:
// each block copies the 8 x 10 coefficients to shared memory, stored power-major ([k][segment], so the lanes of
// a warp read distinct banks or one broadcast word), and every lane runs the same Horner loop on its own
// segment's coefficients.
#include "bench.cuh"
#include "curve.cuh"

__global__ void tone_curve(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float coef[kTerms][kSegments];
  if (threadIdx.x < kSegments * kTerms) {
    const int s = threadIdx.x / kTerms, k = threadIdx.x % kTerms;
    coef[k][s] = kCurve[s][k];
  }
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = in[i];
  const int s = segment_of(x);
  const float t = x - s;
  float y = coef[kTerms - 1][s];
#pragma unroll
  for (int k = kTerms - 2; k >= 0; --k) y = y * t + coef[k][s];
  out[i] = y;
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
