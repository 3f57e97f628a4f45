// Counter-based uniform random fill (dropout masks / Monte-Carlo inputs): 64 M floats u = hash(seed, i) in
// [0, 1), done right: a one-wave grid (occupancy API), grid-stride loop, four values per thread per iteration
// written with one 16-byte store. 256 MB written per launch for ~10 integer operations per value: DRAM-bound.
#include "bench.cuh"

struct CounterRng {
  unsigned seed;
  __host__ __device__ static unsigned mix(unsigned h) {  // lowbias32 integer hash
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
  }
  __host__ __device__ float uniform(unsigned i) const {
    return static_cast<float>(mix(i ^ seed) >> 8) * 5.9604645e-8f;  // 24 bits -> [0, 1)
  }
};

__global__ void fill_uniform(CounterRng rng, float4* out, int n4) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
    const unsigned base = static_cast<unsigned>(i) * 4u;
    out[i] = make_float4(rng.uniform(base), rng.uniform(base + 1u), rng.uniform(base + 2u), rng.uniform(base + 3u));
  }
}

constexpr int kThreads = 256;

int main() {
  const int n = 64 << 20, n4 = n / 4;
  int sms = 0, per_sm = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fill_uniform, kThreads, 0));
  float4* dout;
  CK(cudaMalloc(&dout, n * sizeof(float)));
  const CounterRng rng{0x5eed1209u};
  for (int rep = 0; rep < 3; ++rep) {
    fill_uniform<<<sms * per_sm, kThreads>>>(rng, dout, n4);
    CK_LAUNCH();
  }
  std::vector<float> got(n);
  CK(cudaMemcpy(got.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 7, ++checked) bad += got[i] != rng.uniform(static_cast<unsigned>(i));
  CK(cudaFree(dout));
  return verdict("uniform_hash_fill", bad, checked);
}
