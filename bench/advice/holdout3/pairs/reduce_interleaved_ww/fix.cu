// Sum of 64 M floats by repeated block reductions, as in the textbook first version: each 256-thread block
// loads one element per thread into shared memory and halves it in a tree with interleaved addressing
// (`if (tid % (2 * stride) == 0)`) and a __syncthreads() per level; the block sums go to a second, third
// and fourth launch of the same kernel (262144 -> 1024 -> 4 -> 1 values: launches of different sizes).
// reduce_interleaved_ww, fix: warpwise's first advice on reduce_interleaved (strength_reduction) applied as its
// suggestion words it ("if the divisor is a power of two use shifts and masks (x >> s, x & (n - 1))"): the
// divisor 2 * stride is a power of two, so tid % (2 * stride) becomes tid & (2 * stride - 1); the branch, the
// interleaved addressing and the barriers are unchanged. Otherwise identical to orig.cu.
#include "bench.cuh"

constexpr int kBlock = 256;

__global__ void block_sum(const float* __restrict__ in, float* __restrict__ out, unsigned n) {
  __shared__ float s[kBlock];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + tid;
  s[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    if ((tid & (2 * stride - 1)) == 0) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

int main() {
  const unsigned n = 64u << 20;
  std::vector<float> x(n);
  Rng rng(3202);
  for (auto& v : x) v = rng.uniform(0.0f, 1.0f);
  float *d_x, *d_a, *d_b;
  CK(cudaMalloc(&d_x, (size_t)n * sizeof(float)));
  CK(cudaMalloc(&d_a, (n / kBlock) * sizeof(float)));
  CK(cudaMalloc(&d_b, (n / kBlock) * sizeof(float)));
  CK(cudaMemcpy(d_x, x.data(), (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
  float total = 0.0f;
  for (int rep = 0; rep < 3; ++rep) {
    const float* src = d_x;
    float* dst = d_a;
    unsigned len = n;
    while (len > 1) {  // 64 M -> 262144 -> 1024 -> 4 -> 1
      unsigned blocks = (len + kBlock - 1) / kBlock;
      block_sum<<<blocks, kBlock>>>(src, dst, len);
      CK_LAUNCH();
      src = dst;
      dst = dst == d_a ? d_b : d_a;
      len = blocks;
    }
    CK(cudaMemcpy(&total, src, sizeof(float), cudaMemcpyDeviceToHost));
  }
  double want = 0.0;
  for (unsigned i = 0; i < n; ++i) want += x[i];
  long bad = !close_enough(total, want, 1e-5, 0.0);
  std::printf("sum %.1f, reference %.1f\n", (double)total, want);
  CK(cudaFree(d_x));
  CK(cudaFree(d_a));
  CK(cudaFree(d_b));
  return verdict("reduce_interleaved_ww", bad, 1);
}
