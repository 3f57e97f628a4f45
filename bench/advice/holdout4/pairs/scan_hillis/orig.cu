// Inclusive prefix sum of 32 M unsigned ints, the way a first GPU scan is written after reading about
// Hillis-Steele: one element per thread, a 1024-element block scanned in a double-buffered shared array
// with one __syncthreads() per step (10 steps), the block totals scanned by the same kernel again (32 M,
// 32 K and 32 elements: three launches of different sizes) and added back by a second kernel.
#include "bench.cuh"

constexpr int kBlock = 1024;

__global__ void scan_block(const unsigned* in, unsigned* out, unsigned* block_sums, int n) {
  __shared__ unsigned buf[2][kBlock];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * kBlock + tid;
  int pin = 0;
  buf[0][tid] = i < n ? in[i] : 0u;
  __syncthreads();
  for (int offset = 1; offset < kBlock; offset <<= 1) {
    const int pout = 1 - pin;
    unsigned v = buf[pin][tid];
    if (tid >= offset) v += buf[pin][tid - offset];
    buf[pout][tid] = v;
    pin = pout;
    __syncthreads();
  }
  if (i < n) out[i] = buf[pin][tid];
  if (block_sums != nullptr && tid == kBlock - 1) block_sums[blockIdx.x] = buf[pin][tid];
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
