// FP64 dot product (orig.cu's program) with #pragma unroll 4 on the grid-stride loop: the plausible "more
// loads in flight" change, which should gain nothing on a kernel that already streams at the DRAM roofline.
#include "bench.cuh"

constexpr int kThreads = 256;

__global__ void ddot(const double2* __restrict__ x, const double2* __restrict__ y, double* __restrict__ result,
                     size_t n2) {
  __shared__ double warp_sums[kThreads / 32];
  double acc = 0.0;
#pragma unroll 4
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += (size_t)gridDim.x * blockDim.x) {
    const double2 a = x[i], b = y[i];
    acc = fma(a.x, b.x, acc);
    acc = fma(a.y, b.y, acc);
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < kThreads / 32 ? warp_sums[lane] : 0.0;
#pragma unroll
    for (int o = 4; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if (lane == 0) atomicAdd(result, acc);
  }
}

int main() {
  const size_t n = 32u << 20, n2 = n / 2;
  std::vector<double> x(n), y(n);
  Rng rng(4411);
  double want = 0.0, mag = 0.0;
  for (size_t i = 0; i < n; ++i) {
    x[i] = rng.uniform(-1.0f, 1.0f) + rng.next() * 1e-12;  // more than float precision in the inputs
    y[i] = rng.uniform(-1.0f, 1.0f) + rng.next() * 1e-12;
    want += x[i] * y[i];
    mag += std::fabs(x[i] * y[i]);
  }
  double *d_x, *d_y, *d_result;
  CK(cudaMalloc(&d_x, n * sizeof(double)));
  CK(cudaMalloc(&d_y, n * sizeof(double)));
  CK(cudaMalloc(&d_result, sizeof(double)));
  CK(cudaMemcpy(d_x, x.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_y, y.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  int device = 0, sms = 0, per_sm = 0;
  CK(cudaGetDevice(&device));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ddot, kThreads, 0));
  long bad = 0;
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemset(d_result, 0, sizeof(double)));
    ddot<<<sms * per_sm, kThreads>>>(reinterpret_cast<const double2*>(d_x), reinterpret_cast<const double2*>(d_y),
                                     d_result, n2);
    CK_LAUNCH();
    double got;
    CK(cudaMemcpy(&got, d_result, sizeof(double), cudaMemcpyDeviceToHost));
    bad += !close_enough(got, want, 0.0, 1e-13 * mag);  // FP64 rounding of a different summation order
  }
  CK(cudaFree(d_x));
  CK(cudaFree(d_y));
  CK(cudaFree(d_result));
  return verdict("ddot_fp64", bad, 3);
}
