// STREAM triad a = b + s c in double precision, one element per thread: three coalesced streams and
// two flops per 24 bytes, so DRAM bandwidth is the limit and there is nothing left to optimize.
#include "../bench.cuh"

__global__ void triad(double* __restrict__ a, const double* __restrict__ b, const double* __restrict__ c, double s,
                      size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = b[i] + s * c[i];
}

int main() {
  const size_t n = 16u << 20;  // 3 x 128 MB
  const double s = 3.0;
  std::vector<double> a(n), b(n), c(n);
  Rng rng(27);
  for (size_t i = 0; i < n; ++i) {
    b[i] = rng.uniform(0.5f, 1.5f);
    c[i] = rng.uniform(0.5f, 1.5f);
  }
  double *d_a, *d_b, *d_c;
  CK(cudaMalloc(&d_a, n * sizeof(double)));
  CK(cudaMalloc(&d_b, n * sizeof(double)));
  CK(cudaMalloc(&d_c, n * sizeof(double)));
  CK(cudaMemcpy(d_b, b.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_c, c.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    triad<<<(unsigned)((n + 255) / 256), 256>>>(d_a, d_b, d_c, s, n);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(a.data(), d_a, n * sizeof(double), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (size_t i = 0; i < n; ++i) bad += !close_enough(a[i], b[i] + s * c[i], 1e-15, 0.0);
  CK(cudaFree(d_a));
  CK(cudaFree(d_b));
  CK(cudaFree(d_c));
  return verdict("stream_triad", bad, (long)n);
}
