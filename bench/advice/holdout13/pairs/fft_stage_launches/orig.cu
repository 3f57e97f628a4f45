// Batched 1024-point complex FFTs (16384 rows of float2, 128 MB: a spectrogram / channelizer front end) with the
// radix-2 Stockham autosort formulation (Govindaraju et al., "High performance discrete Fourier transforms on
// graphics processors", SC'08, figure 2: no bit-reversal pass, natural-order output), written as one launch per
// stage: 10 launches per transform, ping-ponging between two buffers, a thread per butterfly (512 per row),
// each launch reading and writing the whole 128 MB batch for one butterfly and one sincosf per element pair.
// Three transforms per run (30 launches).
#include <cmath>

#include "bench.cuh"

constexpr int kLog2N = 10, kN = 1 << kLog2N, kHalf = kN / 2;

struct Stockham {
  // One radix-2 butterfly of stage ns (ns = 1, 2, 4, ..., N/2): inputs j and j + N/2, outputs at
  // (j / ns) * 2 ns + j % ns and that + ns.
  __host__ __device__ static void butterfly(const float2* src, float2* dst, int j, int ns) {
    const int k = j & (ns - 1);
    const float2 a = src[j], b0 = src[j + kHalf];
    float s, c;
    sincosf(-3.14159265358979f * static_cast<float>(k) / static_cast<float>(ns), &s, &c);
    const float2 b{b0.x * c - b0.y * s, b0.x * s + b0.y * c};
    const int o = (j - k) * 2 + k;
    dst[o] = float2{a.x + b.x, a.y + b.y};
    dst[o + ns] = float2{a.x - b.x, a.y - b.y};
  }
};

__global__ void fft_radix2(const float2* __restrict__ src, float2* __restrict__ dst, int rows, int ns) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = t / kHalf, j = t % kHalf;
  if (row >= rows) return;
  Stockham::butterfly(src + static_cast<size_t>(row) * kN, dst + static_cast<size_t>(row) * kN, j, ns);
}

int main() {
  const int rows = 16384;
  const size_t n = static_cast<size_t>(rows) * kN;
  std::vector<float2> x(n);
  Rng rng(1024);
  for (auto& v : x) v = float2{rng.uniform(-1.0f, 1.0f), rng.uniform(-1.0f, 1.0f)};
  float2 *dx, *dbuf[2];
  CK(cudaMalloc(&dx, n * sizeof(float2)));
  CK(cudaMalloc(&dbuf[0], n * sizeof(float2)));
  CK(cudaMalloc(&dbuf[1], n * sizeof(float2)));
  CK(cudaMemcpy(dx, x.data(), n * sizeof(float2), cudaMemcpyHostToDevice));
  const float2* result = nullptr;
  for (int transform = 0; transform < 3; ++transform) {
    const float2* src = dx;
    for (int s = 0; s < kLog2N; ++s) {
      float2* dst = dbuf[s & 1];
      fft_radix2<<<rows * kHalf / 256, 256>>>(src, dst, rows, 1 << s);
      CK_LAUNCH();
      src = dst;
    }
    result = src;
  }
  std::vector<float2> got(n);
  CK(cudaMemcpy(got.data(), result, n * sizeof(float2), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  std::vector<double> cs(kN), sn(kN);
  for (int m = 0; m < kN; ++m) cs[m] = std::cos(2.0 * M_PI * m / kN), sn[m] = -std::sin(2.0 * M_PI * m / kN);
  for (int row = 0; row < rows; row += 1021) {  // sampled rows against a direct DFT in double
    const float2* in = x.data() + static_cast<size_t>(row) * kN;
    for (int f = 0; f < kN; ++f, checked += 2) {
      double re = 0.0, im = 0.0;
      for (int m = 0; m < kN; ++m) {
        const int p = (f * m) & (kN - 1);
        re += in[m].x * cs[p] - in[m].y * sn[p];
        im += in[m].x * sn[p] + in[m].y * cs[p];
      }
      const float2 g = got[static_cast<size_t>(row) * kN + f];
      bad += !close_enough(g.x, re, 1e-3, 2e-3) + !close_enough(g.y, im, 1e-3, 2e-3);
    }
  }
  CK(cudaFree(dx));
  CK(cudaFree(dbuf[0]));
  CK(cudaFree(dbuf[1]));
  return verdict("fft_stage_launches", bad, checked);
}
