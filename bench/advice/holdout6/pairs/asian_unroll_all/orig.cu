// Monte Carlo pricing of an arithmetic-average Asian call under geometric Brownian motion: one thread per path,
// 252 daily monitoring steps, a counter-based hash for the random numbers and Box-Muller (logf, sqrtf, cospif)
// for the normal draws, expf for the log-normal step. The step count is a template parameter and the step loop
// carries `#pragma unroll`, so nvcc unrolls all 252 steps: the path loop becomes tens of thousands of
// straight-line instructions, far more than the SM's instruction caches hold, and every warp streams it.
#include "bench.cuh"

struct AsianOption {
  float s0, strike, rate, vol, years;
  __host__ __device__ float dt(int steps) const { return years / steps; }
  __host__ __device__ float drift(float dt) const { return (rate - 0.5f * vol * vol) * dt; }
  __host__ __device__ float payoff(float avg) const { return fmaxf(avg - strike, 0.0f) * expf(-rate * years); }
};

constexpr int kSteps = 252;

__host__ __device__ inline uint32_t mix32(uint32_t x) {  // lowbias32 integer hash
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
__host__ __device__ inline float unit(uint32_t h) { return ((h >> 8) + 0.5f) * (1.0f / 16777216.0f); }  // (0, 1)

template <int STEPS>
__device__ float asian_payoff(const AsianOption& opt, uint32_t path, uint32_t seed) {
  const float dt = opt.dt(STEPS), mu = opt.drift(dt), sd = opt.vol * sqrtf(dt);
  const uint32_t key = mix32(path * 0x9e3779b9U ^ seed);
  float s = opt.s0, sum = 0.0f;
#pragma unroll
  for (int t = 0; t < STEPS; ++t) {
    const uint32_t h1 = mix32(key + 2u * t), h2 = mix32(key + 2u * t + 1u);
    const float z = sqrtf(-2.0f * logf(unit(h1))) * cospif(2.0f * unit(h2));
    s *= expf(mu + sd * z);
    sum += s;
  }
  return opt.payoff(sum / STEPS);
}

__global__ void asian_paths(AsianOption opt, uint32_t seed, int n_paths, float* __restrict__ payoff) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < n_paths) payoff[p] = asian_payoff<kSteps>(opt, p, seed);
}

static float host_payoff(const AsianOption& opt, uint32_t path, uint32_t seed) {
  const float dt = opt.dt(kSteps), mu = opt.drift(dt), sd = opt.vol * std::sqrt(dt);
  const uint32_t key = mix32(path * 0x9e3779b9U ^ seed);
  float s = opt.s0, sum = 0.0f;
  for (int t = 0; t < kSteps; ++t) {
    const uint32_t h1 = mix32(key + 2u * t), h2 = mix32(key + 2u * t + 1u);
    const float z = std::sqrt(-2.0f * std::log(unit(h1))) * (float)std::cos(2.0 * M_PI * unit(h2));
    s *= std::exp(mu + sd * z);
    sum += s;
  }
  return opt.payoff(sum / kSteps);
}

int main() {
  const int n_paths = 1 << 20;
  const AsianOption opt{100.0f, 105.0f, 0.03f, 0.25f, 1.0f};
  float* d_pay;
  CK(cudaMalloc(&d_pay, n_paths * sizeof(float)));
  std::vector<float> got(n_paths);
  long bad = 0, checked = 0;
  double mean = 0.0;
  for (uint32_t seed = 11; seed < 14; ++seed) {
    asian_paths<<<n_paths / 256, 256>>>(opt, seed, n_paths, d_pay);
    CK_LAUNCH();
    CK(cudaMemcpy(got.data(), d_pay, n_paths * sizeof(float), cudaMemcpyDeviceToHost));
    for (int p = 0; p < n_paths; p += 997, ++checked)
      bad += !close_enough(got[p], host_payoff(opt, p, seed), 2e-3, 2e-3);
    for (float v : got) mean += v;
  }
  std::printf("price %.4f (3 x %d paths)\n", mean / (3.0 * n_paths), n_paths);
  CK(cudaFree(d_pay));
  return verdict("asian_unroll_all", bad, checked);
}
