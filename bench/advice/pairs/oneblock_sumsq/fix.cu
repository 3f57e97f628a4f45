// Squared L2 norm of a residual vector, as the convergence test of an iterative solver computes it:
// a grid-stride loop, then a block-wide shared-memory reduction with barriers. Launched with one block
// (1024 threads) per SM slot, the grid sized to fill the GPU (SMs x the CTAs an SM holds at this
// occupancy): every SM streams its share of the loop and the partial sums meet in an atomic.
#include "../bench.cuh"

constexpr int kThreads = 1024;

__global__ void __launch_bounds__(kThreads) residual_norm2(const float* __restrict__ r, float* __restrict__ out, int n) {
  __shared__ float part[kThreads];
  float acc = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc += r[i] * r[i];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, part[0]);
}

int main() {
  const int n = 16 << 20;
  std::vector<float> r(n);
  Rng rng(13);
  for (auto& v : r) v = rng.uniform(-1.0f, 1.0f) + 1e-3f;
  float *d_r, *d_out;
  CK(cudaMalloc(&d_r, n * sizeof(float)));
  CK(cudaMalloc(&d_out, sizeof(float)));
  CK(cudaMemcpy(d_r, r.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  int sms = 0, per_sm = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, residual_norm2, kThreads, 0));
  const int blocks = sms * per_sm;
  float got = 0.0f;
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemset(d_out, 0, sizeof(float)));
    residual_norm2<<<blocks, kThreads>>>(d_r, d_out, n);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(&got, d_out, sizeof(float), cudaMemcpyDeviceToHost));
  double want = 0.0;
  for (float v : r) want += (double)v * v;
  CK(cudaFree(d_r));
  CK(cudaFree(d_out));
  return verdict("oneblock_sumsq", !close_enough(got, want, 1e-4, 0.0), 1);
}
