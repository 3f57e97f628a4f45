// Machine facts for analysis/arch (the launch-shape estimates of block_increase / thread_increase):
//  1. the shortest launch as a function of the grid: an empty kernel and a one-load-per-thread kernel with
//     k CTAs per SM of t threads (grid launch, CTA dispatch and drain, which no change to the code removes);
//  2. DRAM latency under load: a dependent chain of coalesced loads (each warp has exactly one load in flight:
//     the next index is the loaded value), over a buffer far larger than L2, with 1..64 warps per SM. Little's
//     law gives the latency each load saw at the DRAM bandwidth the launch reached.
// Run under Nsight Compute (bench/arch/gpu_launch_latency.sh) to read each launch's duration and DRAM bytes.
// The launch order and parameters are printed (stdout) so the CSV rows can be matched to them.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); std::exit(1); } } while (0)

__global__ void empty_kernel() {}

// One coalesced load and store per thread: the smallest kernel that touches memory.
__global__ void one_load(const int* __restrict__ in, int* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i] + 1;
}

// Dependent chain: next[i] = i + stride (mod n), so each warp's next coalesced 128-byte load waits for the
// previous one; `iters` loads per thread.
__global__ void chain(const int* __restrict__ next, int* __restrict__ out, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll 1
  for (int k = 0; k < iters; ++k) i = __ldcg(next + i);
  if (i == -1) out[0] = i;  // keeps the chain alive; never true
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int n = 128 << 20;  // 128M ints = 512 MB, 8x the H200's L2
  int *next = nullptr, *out = nullptr;
  CK(cudaMalloc(&next, (size_t)n * sizeof(int)));
  CK(cudaMalloc(&out, (size_t)n * sizeof(int)));
  int launch = 0;
  // 1. launch floor by grid shape
  const int threads[] = {32, 128, 256, 1024};
  const int per_sm[] = {1, 2, 4, 8, 16, 32};
  for (int t : threads)
    for (int k : per_sm) {
      if (k * t > 2048) continue;
      for (int rep = 0; rep < 2; ++rep) {
        empty_kernel<<<sms * k, t>>>();
        CK(cudaGetLastError());
        std::printf("%d empty ctas_per_sm=%d threads=%d ctas=%d\n", launch++, k, t, sms * k);
      }
      for (int rep = 0; rep < 2; ++rep) {
        one_load<<<sms * k, t>>>(next, out);
        CK(cudaGetLastError());
        std::printf("%d one_load ctas_per_sm=%d threads=%d ctas=%d\n", launch++, k, t, sms * k);
      }
    }
  // 2. loaded latency: warps per SM from 1 to 64, each thread a chain of `iters` loads over the whole buffer
  const int warps[] = {1, 2, 4, 8, 16, 24, 32, 48, 64};
  for (int w : warps) {
    const int t = w >= 4 ? 128 : 32 * w, k = w >= 4 ? w / 4 : 1;
    const int total = sms * k * t;
    std::vector<int> h(n);
    for (int i = 0; i < n; ++i) h[i] = (int)(((long long)i + total) % n);
    CK(cudaMemcpy(next, h.data(), (size_t)n * sizeof(int), cudaMemcpyHostToDevice));
    const int iters = (int)(((long long)n / total) < 4096 ? (long long)n / total : 4096);
    for (int rep = 0; rep < 2; ++rep) {
      chain<<<sms * k, t>>>(next, out, iters);
      CK(cudaGetLastError());
      std::printf("%d chain warps_per_sm=%d threads=%d ctas=%d iters=%d bytes_in_flight=%lld\n", launch++, w, t,
                  sms * k, iters, (long long)sms * w * 128);
    }
  }
  CK(cudaDeviceSynchronize());
  CK(cudaFree(next));
  CK(cudaFree(out));
  return 0;
}
