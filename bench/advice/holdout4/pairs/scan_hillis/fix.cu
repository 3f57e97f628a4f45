// Inclusive prefix sum of 32 M unsigned ints (orig.cu's program), each 1024-element block scanned with warp
// shuffles: a 5-step __shfl_up_sync scan per warp, the 32 warp totals scanned by warp 0 through shared
// memory, two __syncthreads() per block instead of eleven. Same launches (32 M, 32 K, 32 elements).
#include "bench.cuh"

constexpr int kBlock = 1024;

__global__ void scan_block(const unsigned* in, unsigned* out, unsigned* block_sums, int n) {
  __shared__ unsigned warp_sums[kBlock / 32];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int i = blockIdx.x * kBlock + tid;
  unsigned v = i < n ? in[i] : 0u;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const unsigned t = __shfl_up_sync(0xffffffffu, v, offset);
    if (lane >= offset) v += t;
  }
  if (lane == 31) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    unsigned s = warp_sums[lane];
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
      const unsigned t = __shfl_up_sync(0xffffffffu, s, offset);
      if (lane >= offset) s += t;
    }
    warp_sums[lane] = s;
  }
  __syncthreads();
  if (warp > 0) v += warp_sums[warp - 1];
  if (i < n) out[i] = v;
  if (block_sums != nullptr && tid == kBlock - 1) block_sums[blockIdx.x] = v;
}

// out[i] += scanned block total of the blocks before i's block
__global__ void add_offsets(unsigned* out, const unsigned* scanned_sums, int n) {
  const int i = blockIdx.x * kBlock + threadIdx.x;
  if (blockIdx.x > 0 && i < n) out[i] += scanned_sums[blockIdx.x - 1];
}

// Scans d[0..n) in place; tmp holds the block totals of every level.
static void scan(unsigned* d, int n, unsigned* tmp) {
  const int blocks = (n + kBlock - 1) / kBlock;
  scan_block<<<blocks, kBlock>>>(d, d, blocks > 1 ? tmp : nullptr, n);
  CK_LAUNCH();
  if (blocks > 1) {
    scan(tmp, blocks, tmp + blocks);
    add_offsets<<<blocks, kBlock>>>(d, tmp, n);
    CK_LAUNCH();
  }
}

int main() {
  const int n = 32 << 20;
  std::vector<unsigned> h(n), got(n);
  Rng rng(4401);
  for (int i = 0; i < n; ++i) h[i] = rng.next() & 15u;
  unsigned *d, *tmp;
  CK(cudaMalloc(&d, n * sizeof(unsigned)));
  CK(cudaMalloc(&tmp, (n / kBlock + kBlock) * sizeof(unsigned)));
  CK(cudaMemcpy(d, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  scan(d, n, tmp);
  CK(cudaMemcpy(got.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  long bad = 0;
  unsigned want = 0;
  for (int i = 0; i < n; ++i) {
    want += h[i];
    bad += got[i] != want;
  }
  CK(cudaFree(d));
  CK(cudaFree(tmp));
  return verdict("scan_hillis", bad, n);
}
