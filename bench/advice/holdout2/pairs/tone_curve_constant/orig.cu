// Colour grading of an 8192 x 4096 RGBA8 frame through three 256-entry tone curves (one per channel,
// float, as a grading tool exports them), one thread per pixel. The curves sit in __constant__ memory,
// but each lane indexes them with its own pixel value: the constant cache serves one address per
// request, so a warp's lookup is replayed once per distinct value (up to 32 times, three lookups a pixel).
#include "bench.cuh"

__constant__ float curve[3][256];

__global__ void grade(const uchar4* __restrict__ in, uchar4* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uchar4 p = in[i];
  float r = curve[0][p.x], g = curve[1][p.y], b = curve[2][p.z];
  out[i] = make_uchar4((unsigned char)(255.0f * r + 0.5f), (unsigned char)(255.0f * g + 0.5f),
                       (unsigned char)(255.0f * b + 0.5f), p.w);
}

// the device's rounding: nvcc contracts 255 * v + 0.5 into one FFMA
static unsigned char quantize(float v) { return (unsigned char)std::fmaf(255.0f, v, 0.5f); }

int main() {
  const int n = 8192 * 4096;
  std::vector<uchar4> in(n), out(n);
  float host_curve[3][256];
  Rng rng(606);
  for (auto& p : in) {
    uint32_t v = rng.next();
    p = make_uchar4(v & 255, (v >> 8) & 255, (v >> 16) & 255, 255);
  }
  for (int c = 0; c < 3; ++c)  // a gamma-like curve per channel, slightly different each
    for (int k = 0; k < 256; ++k) host_curve[c][k] = std::pow(k / 255.0f, 0.8f + 0.1f * c);
  uchar4 *d_in, *d_out;
  CK(cudaMalloc(&d_in, n * sizeof(uchar4)));
  CK(cudaMalloc(&d_out, n * sizeof(uchar4)));
  CK(cudaMemcpy(d_in, in.data(), n * sizeof(uchar4), cudaMemcpyHostToDevice));
  CK(cudaMemcpyToSymbol(curve, host_curve, sizeof(host_curve)));
  for (int rep = 0; rep < 3; ++rep) {
    grade<<<n / 256, 256>>>(d_in, d_out, n);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(out.data(), d_out, n * sizeof(uchar4), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int i = 0; i < n; ++i) {
    const uchar4 p = in[i], q = out[i];
    bad += q.x != quantize(host_curve[0][p.x]) || q.y != quantize(host_curve[1][p.y]) ||
           q.z != quantize(host_curve[2][p.z]) || q.w != p.w;
  }
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return verdict("tone_curve_constant", bad, n);
}
