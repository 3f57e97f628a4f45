// Monte Carlo prices of a book of 140 European calls (terminal GBM, counter-hash RNG, Box-Muller), one
// 1024-thread block per option, 256 paths per thread, block reduction, one price per block. 140 blocks on the
// H200's 132 SMs: 132 SMs run one block, 8 run two side by side, so the launch lasts about two block times.
#include "bench.cuh"

constexpr int OPTIONS = 140, PATHS = 1 << 18;  // 262144 paths per option

struct OptionSpec {
  float s0, strike, rate, vol, years;
};

__host__ __device__ inline uint32_t mix32(uint32_t x) {  // lowbias32 (C. Wellons)
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
  return x;
}

__device__ float path_payoff(const OptionSpec& o, uint32_t option, uint32_t path) {
  const uint32_t h1 = mix32(path * 2u + 0x9e3779b9u * (option + 1u)), h2 = mix32(h1 ^ 0x68e31da4u);
  const float u1 = ((h1 >> 8) + 1u) * (1.0f / 16777216.0f), u2 = (h2 >> 8) * (1.0f / 16777216.0f);
  const float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
  const float st = o.s0 * expf((o.rate - 0.5f * o.vol * o.vol) * o.years + o.vol * sqrtf(o.years) * z);
  return fmaxf(st - o.strike, 0.0f);
}

__global__ void __launch_bounds__(1024) price_options(const OptionSpec* __restrict__ book, float* __restrict__ price) {
  __shared__ float warp_sums[32];
  const OptionSpec o = book[blockIdx.x];
  float sum = 0.0f;
  for (int p = threadIdx.x; p < PATHS; p += 1024) sum += path_payoff(o, blockIdx.x, p);
  for (int d = 16; d > 0; d >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, d);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = warp_sums[threadIdx.x];
    for (int d = 16; d > 0; d >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, d);
    if (threadIdx.x == 0) price[blockIdx.x] = expf(-o.rate * o.years) * sum / PATHS;
  }
}

static double price_ref(const OptionSpec& o, uint32_t option) {
  double sum = 0.0;
  for (uint32_t p = 0; p < PATHS; ++p) {
    const uint32_t h1 = mix32(p * 2u + 0x9e3779b9u * (option + 1u)), h2 = mix32(h1 ^ 0x68e31da4u);
    const double u1 = ((h1 >> 8) + 1u) / 16777216.0, u2 = (h2 >> 8) / 16777216.0;
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    const double st = o.s0 * std::exp((o.rate - 0.5 * o.vol * o.vol) * o.years + o.vol * std::sqrt(o.years) * z);
    sum += st > o.strike ? st - o.strike : 0.0;
  }
  return std::exp(-o.rate * o.years) * sum / PATHS;
}

int main() {
  std::vector<OptionSpec> book(OPTIONS);
  Rng rng(7103);
  for (auto& o : book)
    o = {rng.uniform(80.0f, 120.0f), rng.uniform(80.0f, 120.0f), 0.03f, rng.uniform(0.1f, 0.5f), rng.uniform(0.25f, 2.0f)};
  OptionSpec* d_book;
  float* d_price;
  CK(cudaMalloc(&d_book, OPTIONS * sizeof(OptionSpec)));
  CK(cudaMalloc(&d_price, OPTIONS * sizeof(float)));
  CK(cudaMemcpy(d_book, book.data(), OPTIONS * sizeof(OptionSpec), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    price_options<<<OPTIONS, 1024>>>(d_book, d_price);
    CK_LAUNCH();
  }
  std::vector<float> got(OPTIONS);
  CK(cudaMemcpy(got.data(), d_price, OPTIONS * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < OPTIONS; i += 10, ++checked) bad += !close_enough(got[i], price_ref(book[i], i), 2e-4, 1e-4);
  CK(cudaFree(d_book));
  CK(cudaFree(d_price));
  return verdict("mc_options_140_fastmath", bad, checked);
}
