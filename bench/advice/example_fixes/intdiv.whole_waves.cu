// Hash-bucket scoring: each thread mixes its key many times and reduces it by a bucket count and a
// stride that are only known at run time. Unsigned division and modulo by a runtime value compile to
// a long dependent sequence (reciprocal, multiply-high, correction) inside the hot loop. When the
// divisor is a power of two (as here), shifts and masks do the same work.
#include <vector>
#include "common.cuh"

__global__ void bucket_score(const unsigned* __restrict__ keys, unsigned* __restrict__ score, int n,
                             unsigned buckets, unsigned stride, int rounds) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
  unsigned k = keys[i];
  unsigned acc = 0;
  for (int r = 0; r < rounds; ++r) {
    k = k * 2654435761u + r;
    unsigned b = k % buckets;        // integer modulo by a runtime value
    unsigned q = (k >> 7) / stride;  // integer division by a runtime value
    acc += b ^ q;
  }
  score[i] = acc;
  }  // sm_balance fix: grid-stride loop over one wave of blocks
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
  int per_sm = 0, sms = 0;  // sm_balance fix: as many blocks as fit at once (one whole wave)
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bucket_score, 256, 0));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  bucket_score<<<per_sm * sms, 256>>>(dk, ds, n, buckets, stride, rounds);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(got.data(), ds, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; i += 13) bad += got[i] != score_cpu(keys[i], buckets, stride, rounds);
  std::printf("intdiv: %d mismatches -> %s\n", bad, bad == 0 ? "PASS" : "FAIL");
  CHECK(cudaFree(dk));
  CHECK(cudaFree(ds));
  return bad == 0 ? 0 : 1;
}
