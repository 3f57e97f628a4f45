// Drift step of a particle code that keeps its particles as an array of 64-byte structures: the step
// reads only x, vx and mass, so each warp's loads touch two 32-byte sectors per particle for 12 useful
// bytes. Built with -use_fast_math (the division is already the fast one).
#include "../bench.cuh"

struct Particle {
  float x, y, z, vx, vy, vz, fx, fy, fz, mass, charge, radius, pad[4];
};
static_assert(sizeof(Particle) == 64, "64-byte particle");

__global__ void drift(Particle* __restrict__ p, int n, float dt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  p[i].x += p[i].vx * dt / p[i].mass;
}

int main() {
  const int n = 10 << 20;
  const float dt = 0.01f;
  std::vector<Particle> p(n);
  Rng rng(19);
  for (auto& q : p) {
    float* f = &q.x;
    for (int k = 0; k < 16; ++k) f[k] = rng.uniform(0.5f, 2.0f);
  }
  Particle* d_p;
  CK(cudaMalloc(&d_p, n * sizeof(Particle)));
  CK(cudaMemcpy(d_p, p.data(), n * sizeof(Particle), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    drift<<<(n + 255) / 256, 256>>>(d_p, n, dt);
    CK_LAUNCH();
  }
  std::vector<Particle> out(n);
  CK(cudaMemcpy(out.data(), d_p, n * sizeof(Particle), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int i = 0; i < n; ++i) {
    double x = p[i].x;
    for (int rep = 0; rep < 3; ++rep) x += (double)p[i].vx * dt / p[i].mass;
    bad += !close_enough(out[i].x, x, 1e-5, 1e-6);
  }
  CK(cudaFree(d_p));
  return verdict("aos_particles", bad, n);
}
