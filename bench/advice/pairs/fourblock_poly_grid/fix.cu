// Degree-12 calibration polynomial applied to a sensor trace with a grid-stride loop. The launch uses
// a grid of four 32-thread blocks (one warp on each of four SMs), a shape left over from a debug run.
// Fix: as many 32-thread blocks as the GPU holds at once (SMs x the CTAs an SM holds), the grid-stride
// loop unchanged.
#include "../bench.cuh"

__constant__ float c_coef[13];

__global__ void calibrate(const float* __restrict__ x, float* __restrict__ y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float v = x[i];
    float p = c_coef[12];
#pragma unroll
    for (int j = 11; j >= 0; --j) p = fmaf(p, v, c_coef[j]);
    y[i] = p;
  }
}

int main() {
  const int n = 1 << 19;
  std::vector<float> x(n), y(n);
  float coef[13];
  Rng rng(12);
  for (auto& c : coef) c = rng.uniform(-1.0f, 1.0f);
  for (auto& v : x) v = rng.uniform(-1.0f, 1.0f);
  float *d_x, *d_y;
  CK(cudaMalloc(&d_x, n * sizeof(float)));
  CK(cudaMalloc(&d_y, n * sizeof(float)));
  CK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpyToSymbol(c_coef, coef, sizeof(coef)));
  const int threads = 32;
  int sms = 0, per_sm = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, calibrate, threads, 0));
  const int blocks = sms * per_sm;
  for (int rep = 0; rep < 3; ++rep) {
    calibrate<<<blocks, threads>>>(d_x, d_y, n);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int i = 0; i < n; ++i) {
    float p = coef[12];
    for (int j = 11; j >= 0; --j) p = std::fmaf(p, x[i], coef[j]);
    bad += !close_enough(y[i], p, 1e-6, 1e-6);
  }
  CK(cudaFree(d_x));
  CK(cudaFree(d_y));
  return verdict("fourblock_poly_grid", bad, n);
}
