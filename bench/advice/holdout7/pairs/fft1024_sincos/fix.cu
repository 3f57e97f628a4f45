// Batched 1024-point complex FFTs (forward, radix-2 decimation in time) of 8192 rows of float2, one 512-thread
// block per row, the row in shared memory. Fix: the twiddles come from a 1023-entry table (entry half + k holds
// exp(-i pi k / half), computed once on the host in double, as cuFFT-style codes do), copied into shared
// memory by each block: two loads per thread instead of ten sincosf.
#include "bench.cuh"

constexpr int N = 1024, LOG2N = 10, ROWS = 8192;

__global__ void fft1024_rows(const float2* __restrict__ in, float2* __restrict__ out, const float2* __restrict__ twiddles) {
  __shared__ float2 s[N];
  __shared__ float2 tw[N];
  const float2* x = in + static_cast<size_t>(blockIdx.x) * N;
  const int t = threadIdx.x;
  for (int i = t; i < N; i += N / 2) s[__brev(i) >> (32 - LOG2N)] = x[i];  // bit-reversed order
  for (int i = t; i < N; i += N / 2) tw[i] = twiddles[i];
  __syncthreads();
  for (int half = 1; half < N; half <<= 1) {
    const int k = t & (half - 1);
    const int i0 = 2 * t - k, i1 = i0 + half;
    const float2 w = tw[half + k];
    const float cs = w.x, sn = w.y;
    const float2 a = s[i0], b = s[i1];
    const float2 wb = make_float2(b.x * cs - b.y * sn, b.x * sn + b.y * cs);
    s[i0] = make_float2(a.x + wb.x, a.y + wb.y);
    s[i1] = make_float2(a.x - wb.x, a.y - wb.y);
    __syncthreads();
  }
  float2* y = out + static_cast<size_t>(blockIdx.x) * N;
  for (int i = t; i < N; i += N / 2) y[i] = s[i];
}

// Reference: the same radix-2 algorithm in double.
static void fft_ref(const float2* x, double* re, double* im) {
  for (int i = 0; i < N; ++i) {
    unsigned r = 0;
    for (int b = 0; b < LOG2N; ++b) r |= ((i >> b) & 1u) << (LOG2N - 1 - b);
    re[r] = x[i].x;
    im[r] = x[i].y;
  }
  for (int half = 1; half < N; half <<= 1)
    for (int g = 0; g < N; g += 2 * half)
      for (int k = 0; k < half; ++k) {
        const double ang = -M_PI * k / half, c = std::cos(ang), sn = std::sin(ang);
        const int i0 = g + k, i1 = i0 + half;
        const double br = re[i1] * c - im[i1] * sn, bi = re[i1] * sn + im[i1] * c;
        re[i1] = re[i0] - br; im[i1] = im[i0] - bi;
        re[i0] += br; im[i0] += bi;
      }
}

int main() {
  const size_t n = static_cast<size_t>(N) * ROWS;
  std::vector<float2> in(n), got(n);
  Rng rng(7101);
  for (auto& v : in) v = make_float2(rng.uniform(-1.0f, 1.0f), rng.uniform(-1.0f, 1.0f));
  float2 *d_in, *d_out;
  CK(cudaMalloc(&d_in, n * sizeof(float2)));
  CK(cudaMalloc(&d_out, n * sizeof(float2)));
  CK(cudaMemcpy(d_in, in.data(), n * sizeof(float2), cudaMemcpyHostToDevice));
  std::vector<float2> table(N, make_float2(1.0f, 0.0f));
  for (int half = 1; half < N; half <<= 1)
    for (int k = 0; k < half; ++k)
      table[half + k] = make_float2(static_cast<float>(std::cos(-M_PI * k / half)), static_cast<float>(std::sin(-M_PI * k / half)));
  float2* d_tw;
  CK(cudaMalloc(&d_tw, N * sizeof(float2)));
  CK(cudaMemcpy(d_tw, table.data(), N * sizeof(float2), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    fft1024_rows<<<ROWS, N / 2>>>(d_in, d_out, d_tw);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(got.data(), d_out, n * sizeof(float2), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  std::vector<double> re(N), im(N);
  for (int row = 0; row < ROWS; row += 61) {  // 135 rows
    fft_ref(&in[static_cast<size_t>(row) * N], re.data(), im.data());
    for (int i = 0; i < N; ++i, checked += 2) {
      const float2 g = got[static_cast<size_t>(row) * N + i];
      bad += !close_enough(g.x, re[i], 1e-4, 5e-4) + !close_enough(g.y, im[i], 1e-4, 5e-4);
    }
  }
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  CK(cudaFree(d_tw));
  return verdict("fft1024_sincos", bad, checked);
}
