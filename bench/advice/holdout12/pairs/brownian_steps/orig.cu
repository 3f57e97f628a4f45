// Overdamped Langevin (Brownian) dynamics of 8 M independent particles in a harmonic trap, 2D, Euler-Maruyama
// with counter-based random numbers (a 32-bit integer hash of seed, particle and step, so a step needs no RNG
// state). The driver advances the system one launch per time step, 32 steps, as simulation codes that read
// back or swap state between steps do: every step reads and writes the whole 64 MB state.
#include "bench.cuh"

struct Particles {
  float* x;
  float* y;
  int n;
};

struct Stepper {
  float drift, noise;  // -k dt / gamma and sqrt(2 D dt) * sqrt(3) (uniform kicks of unit variance)
  unsigned seed;
  __host__ __device__ static unsigned mix(unsigned h) {  // lowbias32 integer hash
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
  }
  __host__ __device__ float kick(unsigned i, unsigned step, unsigned axis) const {
    const unsigned h = mix(seed ^ mix(i * 2u + axis) ^ mix(step * 0x9e3779b9u));
    return static_cast<float>(static_cast<int>(h)) * 4.656612873e-10f;  // uniform in [-1, 1)
  }
  __host__ __device__ void advance(float& px, float& py, unsigned i, unsigned step) const {
    const float kx = kick(i, step, 0u), ky = kick(i, step, 1u);
    px = px + drift * px + noise * kx;
    py = py + drift * py + noise * ky;
  }
};

__global__ void brownian_step(Particles p, Stepper s, int step) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= p.n) return;
  float px = p.x[i], py = p.y[i];
  s.advance(px, py, static_cast<unsigned>(i), static_cast<unsigned>(step));
  p.x[i] = px;
  p.y[i] = py;
}

constexpr int kSteps = 32;

int main() {
  const int n = 8 << 20;
  Rng rng(1203);
  std::vector<float> hx(n), hy(n), gx(n), gy(n);
  for (int i = 0; i < n; ++i) {
    hx[i] = rng.uniform(-2.0f, 2.0f);
    hy[i] = rng.uniform(-2.0f, 2.0f);
  }
  float *dx, *dy;
  CK(cudaMalloc(&dx, n * sizeof(float)));
  CK(cudaMalloc(&dy, n * sizeof(float)));
  CK(cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dy, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const Particles p{dx, dy, n};
  const Stepper s{-0.01f, 0.05f, 0x5eed1203u};
  for (int step = 0; step < kSteps; ++step) {
    brownian_step<<<n / 256, 256>>>(p, s, step);
    CK_LAUNCH();
  }
  CK(cudaMemcpy(gx.data(), dx, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(gy.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0, checked = 0;
  for (int i = 0; i < n; i += 37, checked += 2) {
    float px = hx[i], py = hy[i];
    for (int step = 0; step < kSteps; ++step) s.advance(px, py, static_cast<unsigned>(i), static_cast<unsigned>(step));
    bad += !close_enough(gx[i], px, 1e-5, 1e-5);
    bad += !close_enough(gy[i], py, 1e-5, 1e-5);
  }
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  return verdict("brownian_steps", bad, checked);
}
