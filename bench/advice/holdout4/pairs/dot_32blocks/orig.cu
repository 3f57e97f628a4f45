// Dot product of two 32 M-float vectors as "CUDA by Example" (Sanders & Kandrot, ch. 5.3) writes it: a
// grid-stride loop with blocksPerGrid = imin(32, (N + threadsPerBlock - 1) / threadsPerBlock), a
// shared-memory tree per block, the 32 partial sums added on the host. 32 blocks of 256 threads on a
// 132-SM GPU.
#include "bench.cuh"

constexpr int threadsPerBlock = 256;

__global__ void dot(const float* a, const float* b, float* c, int n) {
  __shared__ float cache[threadsPerBlock];
  int tid = threadIdx.x + blockIdx.x * blockDim.x;
  const int cacheIndex = threadIdx.x;
  float temp = 0.0f;
  while (tid < n) {
    temp += a[tid] * b[tid];
    tid += blockDim.x * gridDim.x;
  }
  cache[cacheIndex] = temp;
  __syncthreads();
  int i = blockDim.x / 2;
  while (i != 0) {
    if (cacheIndex < i) cache[cacheIndex] += cache[cacheIndex + i];
    __syncthreads();
    i /= 2;
  }
  if (cacheIndex == 0) c[blockIdx.x] = cache[0];
}

static int blocks_per_grid(int n) {
  const int want = (n + threadsPerBlock - 1) / threadsPerBlock;
  return want < 32 ? want : 32;
}

int main() {
  const int n = 32 << 20;
  std::vector<float> a(n), b(n);
  Rng rng(4404);
  double want = 0.0;
  for (int i = 0; i < n; ++i) {
    a[i] = rng.uniform(0.5f, 1.5f);
    b[i] = rng.uniform(0.5f, 1.5f);
    want += (double)a[i] * b[i];
  }
  const int blocks = blocks_per_grid(n);
  std::vector<float> partial(blocks);
  float *d_a, *d_b, *d_partial;
  CK(cudaMalloc(&d_a, n * sizeof(float)));
  CK(cudaMalloc(&d_b, n * sizeof(float)));
  CK(cudaMalloc(&d_partial, blocks * sizeof(float)));
  CK(cudaMemcpy(d_a, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_b, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  long bad = 0;
  for (int rep = 0; rep < 3; ++rep) {
    dot<<<blocks, threadsPerBlock>>>(d_a, d_b, d_partial, n);
    CK_LAUNCH();
    CK(cudaMemcpy(partial.data(), d_partial, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    double got = 0.0;
    for (int k = 0; k < blocks; ++k) got += partial[k];
    bad += !close_enough(got, want, 1e-4, 0.0);
  }
  std::printf("%d blocks of %d threads\n", blocks, threadsPerBlock);
  CK(cudaFree(d_a));
  CK(cudaFree(d_b));
  CK(cudaFree(d_partial));
  return verdict("dot_32blocks", bad, 3);
}
