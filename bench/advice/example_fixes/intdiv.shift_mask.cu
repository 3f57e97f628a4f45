// Hash-bucket scoring: each thread mixes its key many times and reduces it by a bucket count and a
// stride that are only known at run time. Unsigned division and modulo by a runtime value compile to
// a long dependent sequence (reciprocal, multiply-high, correction) inside the hot loop. When the
// divisor is a power of two (as here), shifts and masks do the same work.
#include <vector>
#include "common.cuh"

__global__ void bucket_score(const unsigned* __restrict__ keys, unsigned* __restrict__ score, int n,
                             unsigned buckets, unsigned stride, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned k = keys[i];
  unsigned acc = 0;
  if ((buckets & (buckets - 1)) == 0 && (stride & (stride - 1)) == 0) {
    // strength_reduction fix: both divisors are powers of two (checked once per thread, outside the loop),
    // so the modulo is a mask and the division a shift
    const unsigned mask = buckets - 1;
    const int shift = __ffs(stride) - 1;
    for (int r = 0; r < rounds; ++r) {
      k = k * 2654435761u + r;
      acc += (k & mask) ^ ((k >> 7) >> shift);
    }
  } else {
    for (int r = 0; r < rounds; ++r) {
      k = k * 2654435761u + r;
      unsigned b = k % buckets;
      unsigned q = (k >> 7) / stride;
      acc += b ^ q;
    }
  }
  score[i] = acc;
}

static unsigned score_cpu(unsigned k, unsigned buckets, unsigned stride, int rounds) {
  unsigned acc = 0;
  for (int r = 0; r < rounds; ++r) {
    k = k * 2654435761u + r;
    acc += (k % buckets) ^ ((k >> 7) / stride);
  }
  return acc;
}

int main(int argc, char** argv) {
  const int n = 1 << 22, rounds = 64;
  unsigned buckets = argc > 1 ? static_cast<unsigned>(atoi(argv[1])) : 1024u;
  unsigned stride = argc > 2 ? static_cast<unsigned>(atoi(argv[2])) : 64u;
  std::vector<unsigned> keys(n), got(n);
  unsigned long long s = 99;
  for (auto& k : keys) k = ww_rand(&s);
  unsigned *dk, *ds;
  CHECK(cudaMalloc(&dk, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&ds, n * sizeof(unsigned)));
  CHECK(cudaMemcpy(dk, keys.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  bucket_score<<<(n + 255) / 256, 256>>>(dk, ds, n, buckets, stride, rounds);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(got.data(), ds, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; i += 13) bad += got[i] != score_cpu(keys[i], buckets, stride, rounds);
  std::printf("intdiv: %d mismatches -> %s\n", bad, bad == 0 ? "PASS" : "FAIL");
  CHECK(cudaFree(dk));
  CHECK(cudaFree(ds));
  return bad == 0 ? 0 : 1;
}
